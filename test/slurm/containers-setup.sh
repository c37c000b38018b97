# SPDX-License-Identifier: BSD-3-Clause
# containers-setup.sh - pyxis + enroot for the Slurm tier's container tests
# (containers.sh, containers-checks.sh, containers-suspend.sh; source it
# after cluster.sh and checks.sh).
#
#	containers_setup	# skip_all with the reason when it cannot run
#	cluster_start cgroup 1	# plugstack.conf: KREX, then pyxis
#	srun --container-image="$IMG" --container-mounts="$(ct_mounts)" ...
#
# containers_setup builds (once, into $KREX_CONTAINER_CACHE) enroot, pyxis
# for the Slurm under test and the images (scripts/container-deps.sh);
# writes this run's enroot configuration and KREX's hook (made from
# contrib/enroot/50-krex.sh.in with the build's paths) into a directory of
# its own, and puts an enroot that uses it first in PATH (slurmd, so pyxis,
# finds it there); and sets KC_PLUGSTACK_AFTER so that cluster_start loads
# pyxis after KREX.
#
# The general checks with their jobs in a container (containers-checks.sh,
# containers-suspend.sh): containers_jobs_in IMAGE sets KC_CONTAINER_IMAGE,
# and from then on ksbatch and ksrun (cluster.sh) start every job in IMAGE
# (ct_sbatch, ct_srun) and each check run through kcheck (checks.sh) is
# followed by ct_verify: every job started since the last check ran its
# body in the image.

containers_setup() {
	local c ct
	for c in freezer cpuset; do
		[ -w /sys/fs/cgroup/$c/cgroup.procs ] || skip_all "no cgroup v1 $c at /sys/fs/cgroup/$c"
	done
	CACHE=${KREX_CONTAINER_CACHE:-/var/cache/krex-test}
	export KREX_CONTAINER_CACHE=$CACHE
	mkdir -p "$CACHE"
	"$top_srcdir/scripts/container-deps.sh" all >"$CACHE/deps.log" 2>&1
	case $? in
	0) ;;
	77) skip_all "$(tail -n 1 "$CACHE/deps.log")" ;;
	*)
		echo "Bail out! scripts/container-deps.sh failed: $(tail -n 3 "$CACHE/deps.log" | tr '\n' ' ')"
		exit 1
		;;
	esac
	PYXIS=$CACHE/pyxis-$(kc_slurm_version)/spank_pyxis.so
	[ -f "$PYXIS" ] || skip_all "no pyxis built for Slurm $(kc_slurm_version) at $PYXIS"
	IMG=$CACHE/bookworm.sqsh
	OLDIMG=$CACHE/bullseye.sqsh

	# This run's enroot configuration: a copy of the cached one, in a
	# directory of its own, so that a run beside (another build tree) has
	# its own hook (KREX's, with this build's paths), and scratch paths.
	# pyxis runs enroot with no environment but PATH (slurmstepd's, which
	# is slurmd's, which is ours): an enroot wrapper first in PATH sets
	# them (its helpers, enroot-nsenter ..., come next in PATH).  enroot
	# reads the enroot.conf of its build, whatever ENROOT_SYSCONF_PATH
	# says (that names only hooks.d, mounts.d, environ.d): the scratch
	# paths are exported, which enroot takes over its enroot.conf; left
	# to enroot they would be under $HOME, which the test user has not.
	ct=$(mktemp -d /tmp/krex-enroot-etc.XXXXXX)
	KC_CLEAN="${KC_CLEAN:-} $ct"
	chmod 755 "$ct"
	mkdir "$ct/bin" "$ct/etc"
	cp -a "$CACHE/enroot/etc/enroot/." "$ct/etc/"
	cat >"$ct/bin/enroot" <<EOW
#!/bin/sh
# test/slurm/containers-setup.sh: this run's enroot
u=\$(id -u)
export ENROOT_SYSCONF_PATH=$ct/etc
export ENROOT_RUNTIME_PATH=/tmp/krex-enroot/runtime-\$u ENROOT_DATA_PATH=/tmp/krex-enroot/data-\$u
export ENROOT_CACHE_PATH=/tmp/krex-enroot/cache-\$u ENROOT_TEMP_PATH=/tmp
exec $CACHE/enroot/bin/enroot "\$@"
EOW
	chmod 755 "$ct/bin/enroot"
	# each user makes its own directories there (jobs of KC_USER)
	install -d -m 1777 /tmp/krex-enroot
	sed -e "s|@bindir@|$top_builddir/krex/.libs|g" -e "s|@libdir@|$top_builddir/libregion/.libs|g" \
		-e "s|@pythondir@|$top_srcdir/python|g" "$top_srcdir/contrib/enroot/50-krex.sh.in" \
		>"$ct/etc/hooks.d/50-krex.sh"
	chmod 755 "$ct/etc/hooks.d/50-krex.sh"
	export PATH=$ct/bin:$CACHE/enroot/bin:$PATH
	PYXIS_RUN=$(mktemp -d /tmp/krex-pyxis.XXXXXX)
	KC_CLEAN="${KC_CLEAN:-} $PYXIS_RUN"
	# KREX before pyxis: pyxis starts the container in its task_init, with
	# the environment every plugin before it has set (doc/containers.md).
	KC_PLUGSTACK_AFTER="required $PYXIS runtime_path=$PYXIS_RUN"
}

# ct_mounts: what a containerized step mounts at its host path: the
# cluster's work directory, the build and source trees.
ct_mounts() {
	local m=$KC_DIR/work:$KC_DIR/work,$top_builddir:$top_builddir
	[ "$top_srcdir" = "$top_builddir" ] || m=$m,$top_srcdir:$top_srcdir
	echo "$m"
}

# containers_jobs_in IMAGE ROOTFS [USER]: every job of ksbatch and ksrun from
# now on runs in IMAGE (a .sqsh squashed from the directory ROOTFS), also a
# job of USER.  Each job's body first writes a marker into
# $KC_DIR/work/ct.JOBID: the VERSION_ID of its /etc/os-release, its
# /etc/debian_version and the device:inode of its root; ct_verify compares
# the first two with ROOTFS's and the third with the host's root, which a
# job in the container does not share.
# The jobs share one named container per user (pyxis --container-name, as a
# site's users reuse one): enroot unpacks the image once per user and image
# (ct_container), not for each job (4 s of I/O, and as much to remove it
# after); every job still starts a container of its own from that root file
# system (no_exec: it never joins a running one), so KREX's hook runs for
# each.
containers_jobs_in() {
	local u pids=""
	KC_CONTAINER_IMAGE=$1
	CT_WANT="$(. "$2/etc/os-release" && echo "$VERSION_ID") $(cat "$2/etc/debian_version")"
	CT_HOSTROOT=$(stat -c %d:%i /)
	CT_SEEN=0
	CT_JOBS=0
	# krexct-IMAGE-WHERE-MTIME-SIZE: WHERE, the image's path (its cache),
	# so that a run beside with a cache of its own keeps its container
	CT_NAME=krexct-$(basename "$1" .sqsh)-$(echo "$1" | cksum | cut -d' ' -f1)-$(stat -c %Y-%s "$1")
	KC_PLUGSTACK_AFTER="$KC_PLUGSTACK_AFTER container_scope=global"
	# Literal: the job's shell expands it; a body that cannot write its
	# marker does not run (97).
	CT_MARK='echo "$(. /etc/os-release; echo "$VERSION_ID") $(cat /etc/debian_version) $(stat -c %d:%i /)" >'
	CT_MARK="$CT_MARK\"\$KC_CT_DIR/ct.\$SLURM_JOB_ID\" || exit 97"
	[ -z "${3:-}" ] || kc_user || skip_all "cannot make the test user $KC_USER"
	for u in root ${3:-}; do
		ct_container "$u" "$1" &
		pids="$pids $!"
	done
	for u in $pids; do wait "$u" || exit 1; done
}

# ct_container USER IMAGE: USER's container pyxis_$CT_NAME, made once and
# kept in enroot's data path (containers_setup's enroot.conf) for the next
# runs; the name changes with the image, and an older one of the same
# image path is removed.  One maker at a time (a run beside), into a
# temporary name first.
ct_container() {
	local u=$1 d log
	d=/tmp/krex-enroot/data-$(id -u "$u")
	[ -d "$d/pyxis_$CT_NAME" ] && { ct_open "$d/pyxis_$CT_NAME"; return; }
	log=/tmp/krex-enroot/create-$CT_NAME-$u.log
	(
		flock 9
		[ -d "$d/pyxis_$CT_NAME" ] && exit 0
		rm -rf "$d/pyxis_${CT_NAME%-*-*}-"*
		runuser -u "$u" -- env -C / enroot create --name "pyxis_$CT_NAME.tmp" "$2" >"$log" 2>&1 &&
			mv "$d/pyxis_$CT_NAME.tmp" "$d/pyxis_$CT_NAME"
	) 9>"/tmp/krex-enroot/create-$u.lock" && rm -f "$log" && return 0
	echo "Bail out! $u: enroot create $2: $(tail -n 3 "$log" | tr '\n' ' ')"
	return 1
}

# ct_open ROOTFS: enroot made each mount point it created mode 000 (as
# KREX's hook says), and the kept root file system still has those of
# earlier runs: one on the way to this run's mounts (a build tree below
# another run's) is opened, or the test user could not reach it.
ct_open() {
	local m rest a f
	for m in $(ct_mounts | tr ',' ' '); do
		rest=${m#*:}
		rest=${rest#/}
		a=""
		while [ "${rest#*/}" != "$rest" ]; do
			a=$a/${rest%%/*}
			rest=${rest#*/}
			f=$1$a
			[ -d "$f" ] && [ ! -L "$f" ] || break
			[ "$(stat -c %a "$f")" != 0 ] || chmod 0755 "$f"
		done
	done
}

ct_args() {
	echo "--container-image=$KC_CONTAINER_IMAGE --container-name=$CT_NAME:no_exec --container-mounts=$(ct_mounts)"
}

# ct_sbatch SBATCH-ARGS...: sbatch in the image.  The body: --wrap=CMD, or
# else the last argument, a script whose first line is its #! (the marker
# goes after it, in a copy beside it: SCRIPT.ct).
ct_sbatch() {
	local a args=() wrapped="" s
	for a in "$@"; do
		case $a in --wrap=*) a="--wrap=$CT_MARK; ${a#--wrap=}" wrapped=1 ;; esac
		args+=("$a")
	done
	if [ -z "$wrapped" ]; then
		s=${args[-1]}
		{ head -n 1 "$s" && echo "$CT_MARK" && tail -n +2 "$s"; } >"$s.ct" && chmod 755 "$s.ct" ||
			return 1
		args[-1]=$s.ct
	fi
	KC_CT_DIR=$KC_DIR/work krun sbatch --parsable $(ct_args) "${args[@]}"
}

# ct_srun SRUN-OPTIONS... COMMAND...: srun in the image; the options are
# those before COMMAND that start with - (in --name=value form).
ct_srun() {
	local opts=()
	while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
		opts+=("$1")
		shift
	done
	KC_CT_DIR=$KC_DIR/work krun srun $(ct_args) "${opts[@]}" sh -c "$CT_MARK; exec \"\$@\"" sh "$@"
}

# ct_verify [any]: every job started since the last ct_verify (scontrol
# keeps ended jobs for MinJobAge, 300 s) wrote its marker, and the marker
# is the image's; a job that FAILED before its body (krexd down) wrote none
# and is named.  At least one job ran its body in the image: since the last
# ct_verify, or with any, since containers_jobs_in.
ct_verify() {
	local j st m n=0 rc=0 last=$CT_SEEN
	while read -r j st; do
		[ "$j" -gt "$CT_SEEN" ] || continue
		[ "$j" -gt "$last" ] && last=$j
		m=$KC_DIR/work/ct.$j
		if [ "$st" = FAILED ] && [ ! -e "$m" ]; then
			diag "job $j failed before its body: it wrote no marker"
			continue
		fi
		# a job that has just started may not have written it yet
		if ! wait_for 20 test -s "$m"; then
			diag "job $j ($st) wrote no marker: it did not run in the image"
			rc=1
			continue
		fi
		set -- $(cat "$m")
		if [ "$1 $2" != "$CT_WANT" ] || [ "$3" = "$CT_HOSTROOT" ]; then
			diag "job $j ran outside the image: VERSION_ID, debian_version, root: $* (image: $CT_WANT, host root $CT_HOSTROOT)"
			rc=1
		fi
		n=$((n + 1))
	done < <(krun scontrol show job -o 2>/dev/null |
		sed -n 's/^JobId=\([0-9]*\) .* JobState=\([A-Z_]*\) .*/\1 \2/p')
	CT_SEEN=$last
	CT_JOBS=$((CT_JOBS + n))
	[ $n -ge 1 ] || [ "${1:-}" = any -a "$CT_JOBS" -ge 1 ] ||
		{ diag "no job ran its body in the image"; return 1; }
	return $rc
}

# containers_mode (cluster_check, when KC_IN_CONTAINERS is set: the
# containers-*.sh wrappers): pyxis + enroot set up (skip_all when they
# cannot be), every job of ksbatch and ksrun in the Debian 12 image, the
# test user's too, whose jobs reach root's krexd only at the system run dir
# (KC_SYSTEM_RUNDIR: doc/security.md "What a client trusts"); and one check
# added after the test's own (TAP_EXTRA), made by containers_mode_end.
containers_mode() {
	containers_setup
	KC_SYSTEM_RUNDIR=1
	TAP_EXTRA=1
	containers_jobs_in "$IMG" "$CACHE/rootfs-bookworm" "$KC_USER"
}

# containers_mode_end (cluster_stop, while Slurm still runs; once, and
# only once the test has planned): the added check, that every job since
# the last ct_verify ran its body in the image, and that at least one job
# of the test did.
containers_mode_end() {
	[ -n "${_tap_planned:-}" ] && [ -n "${KC_CONTAINER_IMAGE:-}" ] && [ -z "${CT_ENDED:-}" ] ||
		return 0
	CT_ENDED=1
	ok "every job ran its body in the image" ct_verify any
	diag "containers: $CT_JOBS jobs ran their bodies in the image"
}

# ct_check CHECK ARGS...: the check, then ct_verify.
ct_check() {
	local rc=0
	"$@" || rc=1
	ct_verify || rc=1
	return $rc
}
