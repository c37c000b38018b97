# SPDX-License-Identifier: BSD-3-Clause
# cluster.sh - a real Slurm cluster on this host for the tests and the demo
# (source it; needs root and Debian's slurm-wlm, munge).
#
#	. test/slurm/cluster.sh
#	cluster_check || skip_all "$CLUSTER_WHY"
#	cluster_start linuxproc 1	# proctrack: linuxproc | cgroup; nodes: 1 to 26
#	krun srun --krex-shared hostname
#	(cluster_stop runs from the EXIT trap that cluster_start sets)
#
# Everything lives in one temp dir ($KC_DIR): slurm.conf, gres.conf,
# cgroup.conf, plugstack.conf (pointing at the BUILT plugin), logs, state,
# a private munged socket.  Every daemon is stopped by pid, also when a test
# fails.  doc/slurm-on-one-host.md says why each setting is what it is.

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"

# The plugin, krexd and the gate: the build's, unless the caller names
# installed ones (scripts/demo.sh with KREX_INSTALLED=1, test/pkg).
: "${KC_PLUGIN:=$top_builddir/spank/.libs/spank_krex.so}"
: "${KC_REAL_KREXD:=$top_builddir/krexd/krexd}"
KC_FAKE_KREXD=$top_builddir/test/slurm/fake_krexd
: "${KC_GATE:=$top_builddir/gate/.libs/libkrexgate.so}"
KC_PIDS=""
KC_DEVS=""
KC_MUNGE_SOCK=""
KC_USER=krextest
# KREX_SLURM_PREFIX: run the Slurm installed at that prefix (its bin and sbin
# first in PATH, its plugin dir in slurm.conf: scripts/build-slurm.sh) instead
# of the one in PATH (Debian's).  KC_SLURM_PLUGINDIR: where the plugins of the
# Slurm under test are (Debian's slurm-wlm dir without a prefix).
if [ -n "${KREX_SLURM_PREFIX:-}" ]; then
	case ":$PATH:" in
	*":$KREX_SLURM_PREFIX/bin:$KREX_SLURM_PREFIX/sbin:"*) ;;
	*) PATH=$KREX_SLURM_PREFIX/bin:$KREX_SLURM_PREFIX/sbin:$PATH ;;
	esac
	KC_SLURM_PLUGINDIR=$KREX_SLURM_PREFIX/lib/slurm
else
	KC_SLURM_PLUGINDIR=$(ls -d /usr/lib/*/slurm-wlm 2>/dev/null | head -1)
fi
# kc_slurm_version: the MAJOR.MINOR.MICRO of the slurmd in PATH (srun -V needs a config).
kc_slurm_version() { slurmd -V 2>/dev/null | sed -n 's/^slurm[^ ]* \([0-9][0-9.]*\).*/\1/p'; }
# The release the plugin was built for (configure; test/slurm/Makefile.am).
: "${KC_BUILT_SLURM:=}"

# The GPU device files of node 1 and 2: fake ones made by _kc_devices unless
# the caller (scripts/demo.sh on a GPU node) names real ones.  Node N+1 has
# /dev/krex-gpu-PID-N (kc_gpu N).
: "${KC_GPU0:=/dev/krex-gpu-$$-0}"
: "${KC_GPU1:=/dev/krex-gpu-$$-1}"
kc_gpu() {
	case $1 in
	0) echo "$KC_GPU0" ;;
	1) echo "$KC_GPU1" ;;
	*) echo "/dev/krex-gpu-$$-$1" ;;
	esac
}

# cluster_check: 0 if a cluster can run here, else 1 with CLUSTER_WHY set.
cluster_check() {
	CLUSTER_WHY=""
	[ "$(id -u)" = 0 ] || CLUSTER_WHY="needs root (slurmd, munged)"
	local b
	for b in slurmctld slurmd srun sbatch squeue scontrol sinfo munged munge unmunge; do
		[ -n "$CLUSTER_WHY" ] && break
		command -v "$b" >/dev/null 2>&1 ||
			CLUSTER_WHY="$b not installed (run scripts/install-deps.sh)"
	done
	[ -z "$CLUSTER_WHY" ] && [ ! -r /etc/munge/munge.key ] &&
		CLUSTER_WHY="no /etc/munge/munge.key (munge package not set up)"
	[ -z "$CLUSTER_WHY" ] && [ ! -f "$KC_PLUGIN" ] &&
		CLUSTER_WHY="spank_krex.so not built (configure did not find slurm/spank.h)"
	# Slurm loads a SPANK plugin only into the MAJOR.MINOR it was built for.
	local run
	run=$(kc_slurm_version)
	[ -z "$CLUSTER_WHY" ] && [ -n "$KC_BUILT_SLURM" ] &&
		[ "${run%.*}" != "${KC_BUILT_SLURM%.*}" ] &&
		CLUSTER_WHY="spank_krex.so is built for Slurm $KC_BUILT_SLURM, slurmd in PATH is Slurm ${run:-unknown} (configure --with-slurm=PREFIX and set KREX_SLURM_PREFIX to the same Slurm)"
	[ -z "$CLUSTER_WHY" ] || return 1
	[ -z "${KC_IN_CONTAINERS:-}" ] || containers_mode
}

# kwait SECONDS COMMAND...: poll every 0.1 s until the command succeeds, for
# at most SECONDS of wall time (lib.sh's wait_for counts polls, and a Slurm
# query takes longer than its 20 ms step).
kwait() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.1
	done
}

# krexd_real: 0 when the real krexd is built (else tests use the fake one).
krexd_real() { [ -x "$KC_REAL_KREXD" ]; }

# Every client call goes through krun: SLURM_CONF set and a timeout, because
# a client waiting on a bad node never returns.
krun() { SLURM_CONF=$KC_DIR/slurm.conf timeout "${KC_TIMEOUT:-30}" "$@"; }

_kc_munge() {
	# A private munged on its own socket (slurm.conf AuthInfo names it), run
	# as the munge user: it refuses root with the packaged key.
	install -d -o munge -g munge -m 0755 "$KC_DIR/munge"
	KC_MUNGE_SOCK=$KC_DIR/munge/munge.sock
	runuser -u munge -- /usr/sbin/munged --socket="$KC_MUNGE_SOCK" \
		--pid-file="$KC_DIR/munge/munged.pid" --log-file="$KC_DIR/munge/munged.log" \
		--seed-file="$KC_DIR/munge/munged.seed" --num-threads=2 || return 1
	wait_for 5 test -s "$KC_DIR/munge/munged.pid" || return 1
	KC_PIDS="$KC_PIDS $(cat "$KC_DIR/munge/munged.pid")"
	munge -S "$KC_MUNGE_SOCK" -n | unmunge -S "$KC_MUNGE_SOCK" >/dev/null
}

# A character device per fake GPU (major 242: local/experimental).  A
# regular file or /dev/null's numbers do not work (doc/slurm-on-one-host.md).
_kc_devices() {
	local i d
	for i in $(seq 0 $((${1:-2} - 1))); do
		d=$(kc_gpu "$i")
		[ -e "$d" ] && continue
		case "$d" in /dev/krex-gpu-*) ;; *) continue ;; esac
		mknod -m 0666 "$d" c 242 $i || return 1
		KC_DEVS="$KC_DEVS $d"
	done
}

# plugstack.conf with ARGS for the built plugin (re-read by every new srun,
# sbatch and slurmstepd; only slurmd needs a restart for its own part).
# Each krexd gets a cgroup subtree of its own (two nodes on one host, and
# other krexd tests running beside), where the krexd built knows the key.
cluster_plugstack() {
	local sub=""
	grep -qa cgroup_subtree "$KC_KREXD" 2>/dev/null && sub="cgroup_subtree=krex-slurm/$$-%n"
	# krexd signs certificates with the cluster's private munged
	grep -qa munge_socket "$KC_KREXD" 2>/dev/null && [ -n "$KC_MUNGE_SOCK" ] &&
		sub="$sub munge_socket=$KC_MUNGE_SOCK"
	echo "required $KC_PLUGIN krexd=$KC_KREXD gate=$KC_GATE run_dir=${KC_RUN}%n $sub $*" \
		>"$KC_DIR/plugstack.conf"
	# KC_PLUGSTACK_AFTER: plugins after KREX's (pyxis: containers.sh)
	[ -z "${KC_PLUGSTACK_AFTER:-}" ] || printf '%s\n' "$KC_PLUGSTACK_AFTER" >>"$KC_DIR/plugstack.conf"
}

# Node names, ports, devices and job ids are unique to this cluster, so that
# two clusters on one host (a test run beside the demo, or beside another
# worktree's run) never meet: Slurm's step cgroups are named after the node
# (slurm_NODE/uid_U/job_J).
_kc_conf() {
	local mode=$1 nodes=$2 host port=$((20000 + ($$ % 3000) * 4)) tag=kr$(($$ % 100000))
	host=$(hostname -s)
	# More than 3 nodes: a block of 32 ports below 20000 (and below the
	# ephemeral range), so that the nodes' ports meet no other cluster's
	[ "$nodes" -le 3 ] || port=$((10000 + ($$ % 312) * 32))
	KC_NODES=""
	{
		echo "ClusterName=krex"
		echo "SlurmctldHost=$host(127.0.0.1)"
		echo "SlurmctldPort=$port"
		echo "SlurmUser=root"
		echo "AuthType=auth/munge"
		echo "AuthInfo=socket=$KC_MUNGE_SOCK"
		echo "CredType=cred/munge"
		echo "StateSaveLocation=$KC_DIR/state"
		echo "SlurmdSpoolDir=$KC_DIR/spool/%n"
		echo "SlurmctldPidFile=$KC_DIR/slurmctld.pid"
		echo "SlurmdPidFile=$KC_DIR/slurmd-%n.pid"
		echo "SlurmctldLogFile=$KC_DIR/slurmctld.log"
		echo "SlurmdLogFile=$KC_DIR/slurmd-%n.log"
		echo "SlurmdDebug=debug"
		echo "PlugStackConfig=$KC_DIR/plugstack.conf"
		[ -z "${KREX_SLURM_PREFIX:-}" ] || echo "PluginDir=$KC_SLURM_PLUGINDIR"
		echo "MpiDefault=none"
		echo "ReturnToService=2"
		echo "SchedulerType=sched/backfill"
		echo "SelectType=select/cons_tres"
		echo "SelectTypeParameters=CR_Core"
		echo "AccountingStorageType=accounting_storage/none"
		echo "JobAcctGatherType=jobacct_gather/none"
		echo "SlurmdParameters=config_overrides"
		echo "GresTypes=gpu,shard"
		echo "KillWait=2"
		echo "InactiveLimit=0"
		# no mail here (25.11 logs an error for a MailProg that is not there)
		echo "MailProg=/bin/true"
		if [ "$mode" = cgroup ] && [ "${KC_CGROUP:-v1}" = v2 ]; then
			echo "ProctrackType=proctrack/cgroup"
			echo "TaskPlugin=${KC_TASKPLUGIN:-task/cgroup,task/affinity}"
		elif [ "$mode" = cgroup ]; then
			echo "ProctrackType=proctrack/cgroup"
			echo "TaskPlugin=task/cgroup,task/affinity"
		else
			echo "ProctrackType=proctrack/linuxproc"
			echo "TaskPlugin=task/affinity"
		fi
		echo "FirstJobId=$((($$ % 1000) * 1000 + 1))"
		if [ "$nodes" = 1 ]; then
			KC_NODES=$tag
		else
			KC_NODES=$(echo abcdefghijklmnopqrstuvwxyz | cut -c1-"$nodes" | sed "s/./ $tag&/g")
			KC_NODES=${KC_NODES# }
		fi
		local n i=1
		for n in $KC_NODES; do
			echo "NodeName=$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + i)) CPUs=8 RealMemory=2000 Gres=gpu:1,shard:8"
			i=$((i + 1))
		done
		echo "PartitionName=debug Nodes=$(echo $KC_NODES | tr ' ' ,) Default=YES MaxTime=10 State=UP"
		# KC_SLURM_EXTRA: more slurm.conf lines (a test's own plugins)
		[ -z "${KC_SLURM_EXTRA:-}" ] || printf '%s\n' "$KC_SLURM_EXTRA"
	} >"$KC_DIR/slurm.conf"
	# KC_CONF_FILES: files slurmctld reads beside slurm.conf (job_submit.lua)
	local f
	for f in ${KC_CONF_FILES:-}; do cp "$f" "$KC_DIR/"; done
	{
		echo "AutoDetect=off"
		i=0
		for n in $KC_NODES; do
			echo "NodeName=$n Name=gpu File=$(kc_gpu $i)"
			echo "NodeName=$n Name=shard Count=8 File=$(kc_gpu $i)"
			i=$((i + 1))
		done
	} >"$KC_DIR/gres.conf"
	if [ "${KC_CGROUP:-v1}" = v2 ]; then
		# Slurm's cgroup/v2 plugin without systemd (slurmd makes its own
		# tree); KC_CGROUP_MNT: a cgroup2 mount elsewhere than /sys/fs/cgroup.
		# CgroupAutomount: 22.05's; 25.11 logs it as defunct.
		local auto=""
		case "$(kc_slurm_version)" in 2[0-2].*) auto="CgroupAutomount=yes
" ;; esac
		printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n%s%s' "$auto" \
			"${KC_CGROUP_MNT:+CgroupMountpoint=$KC_CGROUP_MNT
}" >"$KC_DIR/cgroup.conf"
	else
		printf 'CgroupPlugin=cgroup/v1\nConstrainCores=yes\nConstrainDevices=yes\n' \
			>"$KC_DIR/cgroup.conf"
	fi
}

# All nodes idle (or mixed/allocated: up) in sinfo.
cluster_up() {
	local st
	st=$(KC_TIMEOUT=5 krun sinfo -h -N -o '%T' 2>/dev/null) || return 1
	[ -n "$st" ] && ! echo "$st" | grep -qvE '^(idle|mixed|allocated)$'
}

# cluster_start MODE NODES: start munged, slurmctld, slurmd(s); set the EXIT
# trap.  Returns 1 with CLUSTER_WHY when it did not come up.
# Slurm's cgroup/v2 plugin with IgnoreSystemd puts slurmd's and slurmstepd's
# cgroups under system.slice, which only systemd makes (22.05 on a host
# without systemd: "unable to open .../system.slice/cgroup.subtree_control"):
# make it, with every controller the root offers, and remove it at the end.
_kc_v2_slice() {
	local m=${KC_CGROUP_MNT:-/sys/fs/cgroup} c
	KC_MADE_SLICE=""
	[ "${KC_CGROUP:-v1}" = v2 ] && [ -f "$m/cgroup.controllers" ] || return 0
	for c in $(cat "$m/cgroup.controllers"); do echo "+$c" >"$m/cgroup.subtree_control" 2>/dev/null; done
	[ -d "$m/system.slice" ] || { mkdir "$m/system.slice" && KC_MADE_SLICE=$m/system.slice; } || return 0
	for c in $(cat "$m/system.slice/cgroup.controllers"); do
		echo "+$c" >"$m/system.slice/cgroup.subtree_control" 2>/dev/null
	done
}
_kc_v2_slice_clean() {
	[ -n "${KC_MADE_SLICE:-}" ] && [ -d "$KC_MADE_SLICE" ] || return 0
	find "$KC_MADE_SLICE" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
	rmdir "$KC_MADE_SLICE" 2>/dev/null
	KC_MADE_SLICE=""
}

# The run dir of node N is ${KC_RUN}N: $KC_DIR/run/N, or with
# KC_SYSTEM_RUNDIR set KREX_RUNDIR/krex-slurm.XXXXXX-N (KREX_RUNDIR: the
# build's compiled-in run dir, /run/krex), the system krexd's place, where
# libkrexregion trusts root's krexd from an unprivileged user's container
# (doc/security.md "What a client trusts"; containers-checks.sh).
_kc_system_rundir() { sed -n 's/^#define KREX_RUNDIR "\(.*\)"$/\1/p' "$top_builddir/config.h"; }
_kc_run_dir() {
	local sys
	KC_RUN=$KC_DIR/run/
	[ -n "${KC_SYSTEM_RUNDIR:-}" ] || return 0
	sys=$(_kc_system_rundir)
	case $sys in /?*) ;; *) return 1 ;; esac
	# as krexd makes it (0755), if no krexd of this host made it first
	[ -d "$sys" ] || mkdir -m 0755 "$sys" || return 1
	KC_RUN=$sys/$(basename "$KC_DIR")-
}

cluster_start() {
	local mode=$1 nodes=$2 n
	case $nodes in
	[1-9] | 1[0-9] | 2[0-6]) ;;
	*) CLUSTER_WHY="cluster_start: NODES must be 1 to 26, not '$nodes'"; return 1 ;;
	esac
	KC_DIR=$(mktemp -d /tmp/krex-slurm.XXXXXX)
	chmod 0755 "$KC_DIR"
	trap cluster_stop EXIT
	mkdir -p "$KC_DIR/state" "$KC_DIR/run" "$KC_DIR/work"
	_kc_run_dir || { CLUSTER_WHY="cannot make the system run directory $(_kc_system_rundir)"; return 1; }
	chmod 1777 "$KC_DIR/work"
	KC_KREXD=$KC_REAL_KREXD
	krexd_real || KC_KREXD=$KC_FAKE_KREXD
	_kc_munge || { CLUSTER_WHY="munged did not start (see $KC_DIR/munge/munged.log)"; return 1; }
	_kc_devices "$nodes" || { CLUSTER_WHY="cannot mknod /dev/krex-gpu-$$-N"; return 1; }
	_kc_conf "$mode" "$nodes"
	cluster_plugstack "${KC_PLUGARGS:-}"
	_kc_v2_slice
	setsid slurmctld -D -c -f "$KC_DIR/slurm.conf" >"$KC_DIR/slurmctld.out" 2>&1 &
	KC_PIDS="$KC_PIDS $!"
	for n in $KC_NODES; do
		mkdir -p "$KC_DIR/spool/$n"
		setsid slurmd -D -N "$n" -f "$KC_DIR/slurm.conf" >"$KC_DIR/slurmd-$n.out" 2>&1 &
		KC_SLURMD_PIDS="${KC_SLURMD_PIDS:-} $!"
	done
	KC_PIDS="$KC_PIDS $KC_SLURMD_PIDS"
	kwait $((30 + 2 * nodes)) cluster_up ||
		{ CLUSTER_WHY="nodes not idle within $((30 + 2 * nodes)) s$(_kc_down_why)"; return 1; }
}

# Why the cluster did not come up: a daemon's first fatal or error line
# (the EXIT trap removes $KC_DIR, so its logs cannot be read afterwards).
_kc_down_why() {
	local f l
	for f in "$KC_DIR"/slurmd-*.out "$KC_DIR"/slurmctld.out; do
		l=$(grep -m1 -iE 'fatal|error' "$f" 2>/dev/null) || continue
		echo ": ${f##*/}: $(echo "$l" | cut -c1-300)"
		return
	done
	echo " (no error in the daemons' output)"
}

# Stop pid: TERM, wait up to 10 s, then KILL.
_kc_kill() {
	local pid=$1 i=0
	kill -TERM "$pid" 2>/dev/null || return 0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 500 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# cluster_stop_slurmd: stop the slurmds only (their krexd goes with them).
cluster_stop_slurmd() {
	local p
	for p in $KC_SLURMD_PIDS; do _kc_kill "$p"; done
}

# _kc_sweep: KILL every process left from this cluster (slurmstepd and job
# tasks carry SLURM_CONF=$KC_DIR/slurm.conf in their environment), thawing
# its freezer cgroup first (a frozen process does not die).
_kc_sweep() {
	local e p pids="" cg
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}
		p=${p%/environ}
		[ "$p" = $$ ] && continue
		{ tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "SLURM_CONF=$KC_DIR/slurm.conf" &&
			pids="$pids $p"
	done
	for p in $pids; do
		cg=$(sed -n 's/^[0-9]*:freezer:\(.*\)/\1/p' "/proc/$p/cgroup" 2>/dev/null)
		[ -n "$cg" ] && [ "$cg" != / ] &&
			echo THAWED >"/sys/fs/cgroup/freezer$cg/freezer.state" 2>/dev/null
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	[ -z "$pids" ] || diag "cluster: killed leftover processes:$pids"
}

# Remove the empty cgroups this cluster left in every hierarchy: Slurm's
# slurm_NODE trees (slurmd keeps them) and our krexd's subtree.  rmdir only
# removes empty cgroups, so nothing in use goes.
_kc_cgroups_clean() {
	local n m d
	for n in $KC_NODES; do
		for m in /sys/fs/cgroup/*/ /sys/fs/cgroup/unified/; do
			for d in "${m}slurm_$n" "${m}krex-slurm/$$-$n"; do
				[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
			done
			rmdir "${m}krex-slurm" 2>/dev/null
		done
	done
	return 0
}

# Jobs first (slurmstepd outlives slurmd), then slurmd, slurmctld, munged;
# then any krexd the plugin started that is still there, leftovers, devices.
cluster_stop() {
	local p f i ctld=""
	# Best effort to the end, also under a caller's set -e (scripts/demo.sh).
	local -
	set +e
	[ -n "${KC_DIR:-}" ] || return 0
	[ -z "${KC_IN_CONTAINERS:-}" ] || containers_mode_end
	[ -f "$KC_DIR/slurmctld.pid" ] && ctld=$(cat "$KC_DIR/slurmctld.pid")
	if [ -n "$ctld" ] && kill -0 "$ctld" 2>/dev/null; then
		KC_TIMEOUT=5 krun scancel --full --user=root >/dev/null 2>&1
		id "$KC_USER" >/dev/null 2>&1 &&
			KC_TIMEOUT=5 krun scancel --full --user="$KC_USER" >/dev/null 2>&1
		for i in $(seq 25); do
			[ -z "$(KC_TIMEOUT=5 krun squeue -h -t R,CG -o %i 2>/dev/null)" ] && break
			sleep 0.2
		done
	fi
	for p in $KC_SLURMD_PIDS; do _kc_kill "$p"; done
	for p in $KC_PIDS; do _kc_kill "$p"; done
	for f in "${KC_RUN:-$KC_DIR/run/}"*/krexd.pid "$KC_DIR"/fake*/krexd.pid; do
		[ -f "$f" ] && _kc_kill "$(cat "$f")"
	done
	# node run dirs of this cluster under the system run dir (KC_SYSTEM_RUNDIR)
	case ${KC_RUN:-} in "$(_kc_system_rundir)"/krex-slurm.?*-) rm -rf "$KC_RUN"* ;; esac
	_kc_sweep
	_kc_cgroups_clean
	_kc_v2_slice_clean
	for p in $KC_DEVS; do rm -f "$p"; done
	# KC_CLEAN: a test's own scratch paths (pyxis's runtime dir)
	[ -z "${KC_CLEAN:-}" ] || rm -rf ${KC_CLEAN:-}
	[ -n "${KC_KEEP:-}" ] || rm -rf "$KC_DIR"
	KC_DIR=""
}

# Start a fake krexd in DIR (for coordinator=external tests); prints its pid.
fake_krexd_start() {
	"$KC_FAKE_KREXD" -r "$1" || return 1
	cat "$1/krexd.pid"
}

# kjob_state ID: the job's state (RUNNING, COMPLETED, FAILED ...).
kjob_state() {
	krun scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# kjob_done ID: the job has left the queue or is in a final state.
kjob_done() {
	case "$(kjob_state "$1")" in
	"" | COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) return 0 ;;
	esac
	return 1
}

# ksbatch ARGS...: submit, print the job id.  ksrun ARGS...: srun.  With
# KC_CONTAINER_IMAGE set, both start the job in that image (pyxis:
# containers-setup.sh's ct_sbatch and ct_srun).
ksbatch() {
	if [ -n "${KC_CONTAINER_IMAGE:-}" ]; then ct_sbatch "$@"; else krun sbatch --parsable "$@"; fi |
		cut -d';' -f1
}
ksrun() {
	if [ -n "${KC_CONTAINER_IMAGE:-}" ]; then ct_srun "$@"; else krun srun "$@"; fi
}

# Make the unprivileged test user if it is missing.
kc_user() {
	id "$KC_USER" >/dev/null 2>&1 || useradd -M -r -s /bin/sh "$KC_USER" >/dev/null 2>&1
	id "$KC_USER" >/dev/null 2>&1
}

# KC_IN_CONTAINERS=1 (test/slurm/containers-*.sh): the test runs as it is,
# with every job of ksbatch and ksrun in a pyxis + enroot container
# (containers-setup.sh's containers_mode, from cluster_check).
[ -z "${KC_IN_CONTAINERS:-}" ] || . "$top_srcdir/test/slurm/containers-setup.sh"
