#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# containers-on-gpu.sh BUILDDIR - the README's demo (scripts/demo.sh) with
# its sibling jobs in pyxis + enroot containers (issue 24; doc/containers.md
# "On a GPU machine"): a one-node Slurm with spank_krex then spank_pyxis in
# plugstack.conf, two --krex-shared sibling steps running krex-hog in an
# enroot image, a host job (the owner) timing kernels in KREX regions; then a
# table: siblings containerized, gated, frozen and drained during the
# owner's region, the certificates, nothing left frozen after.
#
# Run as root from the source tree's root, after scripts/gpu-build.sh (GPU
# machine: .gpu/ filled by scripts/gpu-carry.sh: Slurm, and
# containers*.tar.gz: enroot, pyxis, squashfs-tools).  The image is made here
# from this machine's own sh, coreutils and the libraries krex-hog loads
# (it is built here, against this glibc), squashed with mksquashfs; the
# driver's libcuda.so.1 (and the libraries it loads by name) go into the
# container through an enroot mount file of this script's; enroot's nvidia
# hook is kept off with NVIDIA_VISIBLE_DEVICES=void (it needs
# nvidia-container-cli); /dev/nvidia* come with enroot's /dev.
#
# Where pyxis + Slurm cannot run (no pyxis for this Slurm, the cluster does
# not come up, the containerized steps do not start: the table's first row
# says why), or with KREX_CT_MODE=krex-run, the fallback: a krexd of the
# script's, each sibling `krex run --no-gate -- enroot start IMAGE krex-hog`,
# the owner `krex run` on the host; the same checks.
#
# KREX_GPU_MOCK=1: the same on a machine without a GPU, the jobs on KREX's
# mock CUDA driver (a TEST DOUBLE; its figures mean nothing), its
# libcuda.so.1 mounted by the same mount file; enroot and pyxis from
# $KREX_CONTAINER_CACHE (scripts/container-deps.sh), or from .gpu/ with
# KREX_CT_CARRIED=1.  Results under $OUT (default ./containers-out); the
# table is printed last.  The whole run stops after KREX_CT_LIMIT seconds
# (default 330).  Exit status: 0 every row as expected, 1 otherwise.
set -u
B=${1:?usage: containers-on-gpu.sh BUILDDIR}
# The whole run is bounded: timeout sends TERM after KREX_CT_LIMIT s (the
# EXIT trap then stops what was started), KILL 30 s later.
if [ -z "${KREX_CT_TIMED:-}" ]; then
	KREX_CT_TIMED=1 exec timeout -k 30 "${KREX_CT_LIMIT:-330}" bash "$0" "$@"
fi
B=$(cd "$B" && pwd) || exit 1
cd "$(dirname "$0")/../.." || exit 1
top_srcdir=$PWD
top_builddir=$B
export top_srcdir top_builddir
OUT=${OUT:-$PWD/containers-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
MOCK=${KREX_GPU_MOCK:-0}
CACHE=${KREX_CONTAINER_CACHE:-/var/cache/krex-test}
export PATH=$PATH:/usr/sbin:/sbin
T0=$SECONDS
: >"$OUT/steps.txt"
: >"$OUT/table.txt"
step() { echo "== $((SECONDS - T0)) s: $*" | tee -a "$OUT/steps.txt"; }
note() { echo "   $*" | tee -a "$OUT/steps.txt"; }
FAILED=0
# row WHAT RESULT [expected: yes|any]: one line of the final table
row() {
	printf '| %-62s | %s\n' "$1" "$2" >>"$OUT/table.txt"
	[ "${3:-yes}" = any ] || case $2 in yes*) ;; *) FAILED=1 ;; esac
}
print_table() {
	echo
	[ "$MOCK" = 1 ] && echo "MOCK RUN (KREX's mock CUDA driver, a test double; no GPU)"
	printf '| %-62s | %s\n' "containers-on-gpu.sh ($(date -u +%FT%TZ), $((SECONDS - T0)) s)" "result"
	printf '|%s|%s\n' "----------------------------------------------------------------" "--------"
	cat "$OUT/table.txt"
}
# stop_here WHY: what stopped the run, in the table; the run ends (EXIT trap).
stop_here() {
	step "STOPPED: $*"
	row "stopped before the end" "$*"
	exit 1
}

# ---- what is needed, said first
[ "$(id -u)" = 0 ] || stop_here "needs root (slurmd, munged, enroot, freezing)"
for c in timeout tar mktemp ldd; do command -v $c >/dev/null || stop_here "no $c"; done
[ -x "$B/krexd/krexd" ] && [ -f "$B/spank/.libs/spank_krex.so" ] && [ -f "$B/gate/.libs/libkrexgate.so" ] ||
	stop_here "KREX not built in $B (scripts/gpu-build.sh; --with-slurm)"
if [ "$MOCK" = 1 ]; then
	echo "MOCK RUN: KREX's mock CUDA driver (test/mock), not a GPU" | tee -a "$OUT/steps.txt"
else
	[ -e /dev/nvidia0 ] || stop_here "no /dev/nvidia0 (KREX_GPU_MOCK=1 runs on the mock driver)"
	HOSTCUDA=$(ldconfig -p 2>/dev/null | awk '$1 == "libcuda.so.1" && /x86-64/ && !f { print $NF; f = 1 }')
	[ -n "$HOSTCUDA" ] || HOSTCUDA=/usr/lib/x86_64-linux-gnu/libcuda.so.1
	[ -e "$HOSTCUDA" ] || stop_here "no libcuda.so.1 on the host (ldconfig -p)"
fi

# ---- enroot, pyxis, squashfs-tools: carried in .gpu/ (the GPU machine) or the cache
CT=$(mktemp -d /tmp/krex-ct.XXXXXX)
chmod 755 "$CT"
BG_PIDS=""
KD=""
cleanup() {
	local p
	for p in $BG_PIDS; do kill -TERM "$p" 2>/dev/null; done
	if [ -n "${KC_DIR:-}" ] && [ -d "$KC_DIR" ]; then
		krun scancel --user=root >/dev/null 2>&1
		tar czf "$OUT/logs.tgz" -C "$KC_DIR" --exclude=state --exclude=spool --exclude=munge . 2>/dev/null
		cluster_stop
	fi
	[ -z "$KD" ] || { kill -TERM "$KD" 2>/dev/null; wait_for 5 sh -c "! kill -0 $KD 2>/dev/null"; }
	[ -z "${KREX_MOCK_GPU:-}" ] || rm -f "/dev/shm$KREX_MOCK_GPU"
	rm -rf "$CT"
	print_table
}
trap cleanup EXIT
trap 'row "stopped before the end" "TERM or INT (KREX_CT_LIMIT: ${KREX_CT_LIMIT:-330} s)"; exit 143' TERM INT

step "enroot, pyxis and squashfs-tools"
SRC=$CACHE
if [ -f .gpu/containers.tar.gz ] && { [ "$MOCK" != 1 ] || [ -n "${KREX_CT_CARRIED:-}" ]; }; then
	# libraries and squashfs-tools where missing only, as gpu-build.sh does for Slurm's
	[ -f .gpu/containers-sys.tar.gz ] &&
		timeout 60 tar xzf .gpu/containers-sys.tar.gz --skip-old-files -C / 2>/dev/null
	ldconfig 2>/dev/null
	mkdir -p "$CT/carried"
	timeout 60 tar xzf .gpu/containers.tar.gz -C "$CT/carried" || stop_here "cannot unpack .gpu/containers.tar.gz"
	SRC=$CT/carried
	note "from .gpu/containers.tar.gz"
elif [ "$MOCK" != 1 ]; then
	note "no .gpu/containers.tar.gz (scripts/gpu-carry.sh carries it where scripts/container-deps.sh built it): trying $CACHE"
fi
for c in mksquashfs unsquashfs; do
	command -v $c >/dev/null || stop_here "no $c (squashfs-tools: .gpu/containers-sys.tar.gz)"
done
[ -x "$SRC/enroot/bin/enroot" ] || stop_here "no enroot at $SRC/enroot (scripts/container-deps.sh enroot, then scripts/gpu-carry.sh)"
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
SVER=$(kc_slurm_version)
PYXIS=$SRC/pyxis-$SVER/spank_pyxis.so
missing=$(ldd "$SRC"/enroot/bin/enroot-* "$(command -v unsquashfs)" "$(command -v mksquashfs)" 2>/dev/null |
	awk '/not found/ { print $1 }' | sort -u | tr '\n' ' ')
[ -z "$missing" ] || stop_here "enroot or squashfs-tools cannot load: ${missing}not found"
# A private copy of enroot: its prefix is compiled into bin/enroot, and its
# configuration (pyxis gives enroot the job's environment, not ours) is the
# prefix's: scratch paths, KREX's hook made from contrib/enroot with this
# build's paths, and the mount file that brings the driver's libraries.
cp -a "$SRC/enroot" "$CT/enroot"
old=$(sed -n 's|^config::init "\(.*\)/etc/enroot/enroot\.conf"$|\1|p' "$CT/enroot/bin/enroot")
[ -n "$old" ] || stop_here "cannot find enroot's prefix in $SRC/enroot/bin/enroot"
sed -i "s|$old|$CT/enroot|g" "$CT/enroot/bin/enroot"
ECONF=$CT/enroot/etc/enroot
sed -i '/^# krex-test/,$d' "$ECONF/enroot.conf"
mkdir -p "$CT/run" "$CT/data" "$CT/cache" "$CT/tmp" "$CT/pyxis"
cat >>"$ECONF/enroot.conf" <<EOC
# krex-test (test/gpu/containers-on-gpu.sh): scratch paths
ENROOT_RUNTIME_PATH $CT/run
ENROOT_DATA_PATH $CT/data
ENROOT_CACHE_PATH $CT/cache
ENROOT_TEMP_PATH $CT/tmp
EOC
sed -e "s|@bindir@|$B/krex/.libs|g" -e "s|@libdir@|$B/libregion/.libs|g" \
	-e "s|@pythondir@|$top_srcdir/python|g" "$top_srcdir/contrib/enroot/50-krex.sh.in" \
	>"$ECONF/hooks.d/50-krex.sh"
chmod 755 "$ECONF/hooks.d/50-krex.sh"
# The driver's libraries at their host path in the container (the mock's
# libcuda.so.1 in its place on the mock), read-only; those libcuda opens by
# name where the driver has them (PTX JIT, the compiler behind it).
CTCUDA=/usr/lib/x86_64-linux-gnu/libcuda.so.1
{
	echo "# KREX test: the CUDA driver's libraries (test/gpu/containers-on-gpu.sh)"
	if [ "$MOCK" = 1 ]; then
		echo "$(readlink -f "$B/test/mock/.libs/libcuda.so.1") $CTCUDA none x-create=file,bind,ro,nosuid,nodev,private"
	else
		echo "$(readlink -f "$HOSTCUDA") $CTCUDA none x-create=file,bind,ro,nosuid,nodev,private"
		d=$(dirname "$HOSTCUDA")
		for f in "$d"/libnvidia-ptxjitcompiler.so.1 "$d"/libnvidia-nvvm.so.4 "$d"/libnvidia-gpucomp.so.*; do
			[ -e "$f" ] || continue
			echo "$(readlink -f "$f") /usr/lib/x86_64-linux-gnu/${f##*/} none x-create=file,bind,ro,nosuid,nodev,private"
		done
	fi
} >"$ECONF/mounts.d/60-krex-cuda.fstab"
note "enroot $("$CT/enroot/bin/enroot" version 2>/dev/null), pyxis $PYXIS, $(unsquashfs -version 2>/dev/null | head -1)"
note "mount file: $(grep -v '^#' "$ECONF/mounts.d/60-krex-cuda.fstab" | awk '{print $2}' | tr '\n' ' ')"
cp "$ECONF/mounts.d/60-krex-cuda.fstab" "$OUT/"

# ---- the workloads (check programs; nvcc builds fma.fatbin on the GPU machine)
step "workloads and the mock driver"
timeout 150 make -C "$B/test/mock" -j"$(nproc)" check >"$CT/make.log" 2>&1
timeout 150 make -C "$B/test/workloads" -j"$(nproc)" check >>"$CT/make.log" 2>&1
WL=$B/test/workloads
MOCKLIB=$B/test/mock/.libs
HOG=$WL/krex-hog
[ -x "$WL/krex-victim" ] && [ -x "$HOG" ] || stop_here "test/workloads not built: $(tail -3 "$CT/make.log" | tr '\n' ' ')"
[ "$(head -c 4 "$HOG" | tail -c 3)" = ELF ] || HOG=$WL/.libs/krex-hog
[ "$MOCK" = 1 ] || [ -f "$WL/fma.fatbin" ] || stop_here "no $WL/fma.fatbin (nvcc): the workloads cannot run on the GPU"

# ---- the image: this machine's sh and coreutils, the libraries they and
# krex-hog load, the same /lib layout; a marker file to know it from outside
step "the image"
R=$CT/rootfs
mkdir -p "$R/usr/bin" "$R/usr/lib/x86_64-linux-gnu" "$R/etc" "$R/root" "$R/tmp"
for d in bin sbin lib lib64; do
	t=$(readlink "/$d")
	case $t in
	"") mkdir -p "$R/$d" ;;
	/*) mkdir -p "$R$t" && ln -s "${t#/}" "$R/$d" ;;
	*) mkdir -p "$R/$t" && ln -s "$t" "$R/$d" ;;
	esac
done
progs=""
for p in sh cat sleep env grep ls mkdir touch true mv date id; do
	f=$(type -P "$p") || stop_here "no $p on this machine for the image"
	cp -L "$f" "$R/usr/bin/$p" && progs="$progs $R/usr/bin/$p"
done
# and what the gate, libkrexregion and the driver's libcuda load (libdl,
# libpthread, libm, librt: glibc's, named by them)
[ "$MOCK" = 1 ] && cudalib=$B/test/mock/.libs/libcuda.so.1 || cudalib=$HOSTCUDA
for l in $(ldd $progs "$HOG" "$B/gate/.libs/libkrexgate.so" "$B/libregion/.libs/libkrexregion.so.1" \
	"$cudalib" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' |
	grep -v "^$B/" | sort -u); do
	mkdir -p "$R$(dirname "$l")" && cp -L "$l" "$R$l" || stop_here "cannot copy $l into the image"
done
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$R/etc/passwd"
printf 'root:x:0:\n' >"$R/etc/group"
echo "krex containers-on-gpu.sh image" >"$R/etc/krex-ct-image"
IMG=$CT/krex-ct.sqsh
timeout 60 mksquashfs "$R" "$IMG" -noappend -quiet -no-progress -all-root >"$CT/mksquashfs.log" 2>&1 ||
	stop_here "mksquashfs failed: $(tail -2 "$CT/mksquashfs.log" | tr '\n' ' ')"
note "image $(du -k "$IMG" | cut -f1) KiB: $(ls "$R/usr/bin" | tr '\n' ' ')+ $(find "$R" -name '*.so*' | wc -l) libraries, glibc $(ldd --version | head -1 | awk '{print $NF}')"

# ---- munge (the GPU machine has no munge user or key)
. "$top_srcdir/test/gpu/gpu-lib.sh"
gpu_munge_key

# ---- what the host's processes and the containers need
KREX_CLI=$B/krex/krex
KREX_MOCK_GPU=
if [ "$MOCK" = 1 ]; then
	[ -f "$MOCKLIB/libcuda.so.1" ] || stop_here "test/mock not built"
	KREX_MOCK_GPU=/krex-ct-$$
	export KREX_MOCK_GPU
	# the host's processes (the owner) on the mock; the containers get it by the mount file
	export LD_LIBRARY_PATH=$MOCKLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
	KC_GPU0=/dev/nvidia0
	note "GPU: $(nvidia-smi -L 2>/dev/null | head -1)"
fi
export LD_LIBRARY_PATH=$B/libregion/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
readelf -d "$KC_GATE" 2>/dev/null | grep -q libkrexregion ||
	export LD_PRELOAD=$B/libregion/.libs/libkrexregion.so${LD_PRELOAD:+:$LD_PRELOAD}
# enroot's nvidia hook needs nvidia-container-cli: off (the device files come
# with enroot's /dev, the driver's libraries with the mount file)
export NVIDIA_VISIBLE_DEVICES=void
# slurmd, so pyxis, finds this enroot
export PATH=$CT/enroot/bin:$PATH

# calibrate: the measured kernel's and the siblings' iterations, on the host
calibrate() {
	step "calibrating; the measured kernel alone"
	IT=$(timeout 60 "$WL/krex-victim" calib 2) && HIT=$(timeout 60 "$WL/krex-victim" calib 5) ||
		stop_here "krex-victim calib failed on the host"
	timeout 60 "$WL/krex-victim" run "$IT" 40 --label alone >"$W/victim.out" 2>"$W/victim.err" ||
		stop_here "krex-victim alone: $(tail -2 "$W/victim.err" | tr '\n' ' ')"
}

# ---- pyxis: a cluster with KREX, then pyxis (doc/containers.md "KREX before
# pyxis"), two srun --krex-shared --container-image siblings.  1 with
# SIB_WHY set when that is not possible here.
SIB_WHY=""
start_pyxis() {
	local i mode=linuxproc
	step "Slurm $SVER with spank_krex and spank_pyxis"
	[ -f "$PYXIS" ] || { SIB_WHY="no pyxis built for Slurm ${SVER:-?} at $PYXIS"; return 1; }
	missing=$(ldd "$PYXIS" 2>/dev/null | awk '/not found/ { print $1 }' | tr '\n' ' ')
	[ -z "$missing" ] || { SIB_WHY="pyxis cannot load: ${missing}not found"; return 1; }
	cluster_check || { SIB_WHY=$CLUSTER_WHY; return 1; }
	[ -w /sys/fs/cgroup/freezer/cgroup.procs ] && mode=cgroup
	if [ "${KREX_CT_PROCTRACK:-}" = cgroup-v2 ]; then
		mode=cgroup
		KC_CGROUP=v2
	fi
	KC_PLUGARGS="queue_cap=2 queue_time=1ms max_region=20s"
	KC_PLUGSTACK_AFTER="required $PYXIS runtime_path=$CT/pyxis"
	cluster_start "$mode" 1
	i=$?
	trap cleanup EXIT # cluster_start set its own (cluster_stop); cleanup calls it
	[ "$i" = 0 ] || { SIB_WHY=$CLUSTER_WHY; return 1; }
	note "proctrack/$mode, krexd pid $(cat "$KC_DIR/run/$KC_NODES/krexd.pid" 2>/dev/null)"
	W=$KC_DIR/work
	SOCK=$KC_DIR/run/$KC_NODES/krexd.sock
	krun srun --help 2>&1 | grep -q -- '--container-image' || {
		SIB_WHY="pyxis is not loaded (srun --help has no --container-image): $(grep -h -m1 -i pyxis "$KC_DIR"/slurmd-*.log "$KC_DIR"/*.out 2>/dev/null | head -1)"
		return 1
	}
	calibrate
	step "two --krex-shared siblings in pyxis + enroot containers"
	for i in 1 2; do
		env -u LD_LIBRARY_PATH -u LD_PRELOAD SLURM_CONF="$KC_DIR/slurm.conf" setsid timeout 250 \
			srun --krex-shared=label=hog$i --gres=shard:1 -J hog$i --container-image="$IMG" \
			--container-mounts="$W:$W,$B:$B" "$HOG" "$HIT" --counter "$W/hog$i.count" \
			>"$W/hog$i.log" 2>&1 </dev/null &
		BG_PIDS="$BG_PIDS $!"
	done
	wait_for 90 test -s "$W/hog1.count" && wait_for 30 test -s "$W/hog2.count" || {
		SIB_WHY="the containerized siblings did not start: $(tail -n 3 "$W/hog1.log" "$W/hog2.log" | tr '\n' ' ')"
		return 1
	}
	krun squeue -o '%.10i %.8j %.8T %b' | sed 's/^/   /' | tee -a "$OUT/steps.txt"
}
# The owner under Slurm: a host --krex-shared job.
owner_pyxis() {
	local m
	m=$(ksbatch --krex-shared=label=measure --gres=shard:1 -o "$W/measure.log" "$W/measure.sh")
	[ -n "$m" ] || stop_here "sbatch of the owner's job failed"
	kwait 150 kjob_done "$m" || stop_here "the owner's job did not finish in 150 s: $(krun squeue -h -o '%i %T %r' | tr '\n' ' ')"
	note "owner job $m: $(kjob_state "$m"); $(head -1 "$W/measure.log")"
}
stop_pyxis() {
	local p
	for p in $BG_PIDS; do kill -TERM "$p" 2>/dev/null; done
	krun scancel --user=root >/dev/null 2>&1
	kwait 30 sh -c "[ -z \"\$(SLURM_CONF=$KC_DIR/slurm.conf squeue -h -o %i)\" ]"
	BG_PIDS=""
}

# ---- the fallback: no Slurm, a krexd of the script's, each sibling
# `krex run --no-gate -- enroot start IMAGE krex-hog ...` (KREX's hook sees
# KREX_SOCKET and KREX_GATE_PATH and preloads the gate in the container; the
# gate preloaded into enroot's helpers on the host would start a thread, and
# enroot-nsenter's unshare(CLONE_NEWUSER) fails in a threaded process:
# "failed to create user namespace: Invalid argument"), the owner `krex run`
# on the host.
start_krexrun() {
	local i e
	step "fallback: enroot-started siblings under krex run, a krexd of our own"
	W=$CT/work
	mkdir -p "$W" "$CT/krexd"
	chmod 1777 "$W"
	e=""
	[ "$MOCK" = 1 ] && e="-o gpus=g0" && export KREX_GPUS=g0
	# shellcheck disable=SC2086
	setsid "$B/krexd/krexd" -F -r "$CT/krexd" $e -o queue_cap=2 -o queue_time=1ms \
		>"$CT/krexd.log" 2>&1 </dev/null &
	KD=$!
	SOCK=$CT/krexd/krexd.sock
	export KREX_SOCKET=$SOCK KREX_GATE_LIB=$B/gate/.libs/libkrexgate.so
	wait_for 10 test -S "$SOCK" || stop_here "krexd did not start: $(tail -n 2 "$CT/krexd.log" | tr '\n' ' ')"
	calibrate
	timeout 60 enroot create --name krexct "$IMG" >"$CT/create.log" 2>&1 ||
		stop_here "enroot create failed: $(tail -n 3 "$CT/create.log" | tr '\n' ' ')"
	for i in 1 2; do
		env -u LD_LIBRARY_PATH -u LD_PRELOAD KREX_GATE_PATH="$KREX_GATE_LIB" setsid timeout 250 \
			"$KREX_CLI" run --no-gate --label hog$i -- enroot start --mount "$W:$W" --mount "$B:$B" \
			--env KREX_SOCKET --env NVIDIA_VISIBLE_DEVICES ${KREX_GPUS:+--env KREX_GPUS} \
			${KREX_MOCK_GPU:+--env KREX_MOCK_GPU} krexct "$HOG" "$HIT" --counter "$W/hog$i.count" \
			>"$W/hog$i.log" 2>&1 </dev/null &
		BG_PIDS="$BG_PIDS $!"
	done
	wait_for 60 test -s "$W/hog1.count" && wait_for 30 test -s "$W/hog2.count" ||
		stop_here "the enroot-started siblings did not start either: $(tail -n 3 "$W/hog1.log" "$W/hog2.log" | tr '\n' ' ')"
}
owner_krexrun() {
	timeout 150 "$KREX_CLI" run --label measure -- "$W/measure.sh" >"$W/measure.log" 2>&1 ||
		stop_here "the owner did not finish: $(tail -n 3 "$W/measure.log" | tr '\n' ' ')"
	note "owner: $(head -1 "$W/measure.log")"
}
stop_krexrun() {
	local p
	for p in $BG_PIDS $HOGPIDS; do kill -TERM "$p" 2>/dev/null; done
	for p in $HOGPIDS; do kwait 10 sh -c "! kill -0 $p 2>/dev/null"; done
	BG_PIDS=""
}

MODE=${KREX_CT_MODE:-pyxis}
case $MODE in
pyxis)
	if ! start_pyxis; then
		step "pyxis + Slurm not possible here: $SIB_WHY"
		row "siblings started by pyxis + Slurm (srun --container-image)" "no: $SIB_WHY"
		[ -z "${KC_DIR:-}" ] || tar czf "$OUT/logs-pyxis.tgz" -C "$KC_DIR" --exclude=state --exclude=spool --exclude=munge . 2>/dev/null
		for p in $BG_PIDS; do kill -TERM "$p" 2>/dev/null; done
		BG_PIDS=""
		cluster_stop
		MODE=krex-run
		start_krexrun
	else
		row "siblings started by pyxis + Slurm (srun --container-image)" "yes"
	fi
	;;
krex-run)
	row "siblings started by pyxis + Slurm (srun --container-image)" "no: KREX_CT_MODE=krex-run" any
	start_krexrun
	;;
*) stop_here "KREX_CT_MODE is pyxis or krex-run, not '$MODE'" ;;
esac
[ "$MODE" = krex-run ] && row "siblings started by enroot start under krex run (the fallback)" yes any

# hog_pid N: the host pid of sibling N's krex-hog
hog_pid() {
	local c p
	for c in /proc/[0-9]*/comm; do
		[ "$(cat "$c" 2>/dev/null)" = krex-hog ] || continue
		p=${c#/proc/}
		p=${p%/comm}
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "--counter $W/hog$1.count" && { echo "$p"; return 0; }
	done
	return 1
}
ncont=0 ngate=0 ncuda=0 ndev=0 ngated=0
both_hogs() { hog_pid 1 >/dev/null && hog_pid 2 >/dev/null; }
kwait 20 both_hogs
status=$(KREX_SOCKET=$SOCK timeout 10 "$KREX_CLI" status --json 2>&1)
echo "$status" >"$OUT/status.json"
HOGPIDS="" HOGCG=""
for i in 1 2; do
	p=$(hog_pid $i) || { note "hog$i: no krex-hog process"; continue; }
	HOGPIDS="$HOGPIDS $p"
	cuda=$(grep -o '[^ ]*libcuda[^ ]*' "/proc/$p/maps" 2>/dev/null | sort -u | head -1)
	# a gate that joined krexd is a member of its participant (REGISTER with REG_GATE)
	st=$(echo "$status" | tr '{' '\n' | grep "\"label\":\"hog$i\"" | grep -o '"members":[0-9]*' | head -1)
	note "hog$i pid $p: mnt ns $(readlink "/proc/$p/ns/mnt"), image marker $([ -e "/proc/$p/root/etc/krex-ct-image" ] && echo yes || echo no), libcuda ${cuda:-none}, krexd ${st:-no participant}"
	[ -e "/proc/$p/root/etc/krex-ct-image" ] && [ ! -e /etc/krex-ct-image ] &&
		[ "$(readlink "/proc/$p/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && ncont=$((ncont + 1))
	grep -q ' /opt/krex/lib/libkrexgate.so$' "/proc/$p/maps" && ngate=$((ngate + 1))
	[ "$cuda" = "$CTCUDA" ] && ncuda=$((ncuda + 1))
	[ "$MOCK" = 1 ] || { [ -c "/proc/$p/root/dev/nvidia0" ] && ndev=$((ndev + 1)); }
	# its cgroups (freezer v1, or the v2 one), checked after for a freeze left
	HOGCG="$HOGCG $(sed -n 's/^[0-9]*:freezer:\(.*\)/\/sys\/fs\/cgroup\/freezer\1/p; s/^0::\(.*\)/\/sys\/fs\/cgroup\1/p' "/proc/$p/cgroup" 2>/dev/null | tr '\n' ' ')"
	[ "${st#*:}" -ge 1 ] 2>/dev/null && ngated=$((ngated + 1))
done
row "siblings containerized (own mount ns, the image's root)" \
	"$([ $ncont = 2 ] && echo yes || echo no) ($ncont of 2)"
row "the gate preloaded in the container (/opt/krex/lib/libkrexgate.so)" "$([ $ngate = 2 ] && echo yes || echo no) ($ngate of 2)"
row "gated: their gate joined krexd (krex status: members >= 1)" "$([ $ngated = 2 ] && echo yes || echo no) ($ngated of 2)"
row "libcuda.so.1 in the container from the mount file" "$([ $ncuda = 2 ] && echo yes || echo no) ($ncuda of 2, $CTCUDA$([ "$MOCK" = 1 ] && echo ': the mock'))"
[ "$MOCK" = 1 ] || row "/dev/nvidia0 in the container (enroot's /dev)" "$([ $ndev = 2 ] && echo yes || echo no) ($ndev of 2)"

step "the owner on the host timing kernels in regions ($([ "$MODE" = pyxis ] && echo 'a --krex-shared job' || echo 'krex run'))"
cat >"$W/measure.sh" <<EOS
#!/bin/sh
cd $W
echo "job libraries: \$(grep -o '/[^ ]*libkrex[a-z]*\.so[.0-9]*' /proc/self/maps | sort -u | tr '\n' ' ')"
$WL/krex-victim run $IT 40 --label shared >> victim.out
$WL/krex-victim run $IT 10 --region sample --label in-regions >> victim.out
for i in 1 2 3; do
	$KREX_CLI region --json --cert cert\$i.json -- \\
		$WL/krex-victim run $IT 10 --label krex-region-\$i >> victim.out
done
# the siblings' counters over one second inside a region: frozen ones stand
$KREX_CLI region --json --cert cert4.json -- sh -c \\
	'a=\$(cat hog1.count hog2.count); sleep 1; b=\$(cat hog1.count hog2.count); [ "\$a" = "\$b" ] && echo siblings=frozen || echo siblings=moved' > frozen.out
EOS
chmod 755 "$W/measure.sh"
if [ "$MODE" = pyxis ]; then owner_pyxis; else owner_krexrun; fi
cp "$W/victim.out" "$W/measure.log" "$OUT/" 2>/dev/null

# ---- the certificates, the siblings after
field() { tr -d ' \n' <"$2" | grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2 | tr -d '"'; }
ncert=0 nclean=0 ndrained=0 nfrozen=0 sibs=""
for f in "$W"/cert[1-4].json; do
	[ -s "$f" ] || continue
	ncert=$((ncert + 1))
	cat "$f" >>"$OUT/certificates.json"
	echo >>"$OUT/certificates.json"
	o=$(field outcome_name "$f")
	[ -n "$o" ] || o=$(field outcome "$f")
	s=$(field siblings "$f") d=$(field drained "$f") z=$(field frozen "$f")
	note "${f##*/}: outcome $o, siblings $s, drained $d, frozen $z, drain_us $(field drain_us "$f")"
	sibs="$sibs $o/$s/$d/$z"
	[ "$o" = clean ] && nclean=$((nclean + 1))
	[ "${d:-0}" -ge 2 ] 2>/dev/null && ndrained=$((ndrained + 1))
	[ "${z:-0}" -ge 2 ] 2>/dev/null && nfrozen=$((nfrozen + 1))
done
row "siblings frozen during the owner's region (counters stand 1 s)" \
	"$(grep -q siblings=frozen "$W/frozen.out" 2>/dev/null && echo yes || echo "no ($(cat "$W/frozen.out" 2>/dev/null))")"
row "certificates: both siblings drained (drained >= 2)" "$([ $ncert = 4 ] && [ $ndrained = 4 ] && echo yes || echo no) ($ndrained of $ncert)"
row "certificates: both siblings frozen (frozen >= 2)" "$([ $ncert = 4 ] && [ $nfrozen = 4 ] && echo yes || echo no) ($nfrozen of $ncert)"
row "certificates: outcome clean" "$([ $ncert = 4 ] && [ $nclean = 4 ] && echo yes || echo no) ($nclean of $ncert; outcome/siblings/drained/frozen:$sibs)"
if [ "$MODE" = pyxis ] && grep -q "^#define HAVE_MUNGE 1" "$B/config.h" 2>/dev/null && [ -s "$W/cert1.json" ]; then
	if v=$(timeout 10 "$KREX_CLI" verify --socket "$KC_MUNGE_SOCK" "$W/cert1.json" 2>&1); then
		row "krex verify accepts a certificate" yes
	else
		row "krex verify accepts a certificate" "no: $(echo "$v" | tr '\n' ' ')"
	fi
fi
thawed=0
for i in 1 2; do counter_moves "$W/hog$i.count" && thawed=$((thawed + 1)); done
row "siblings run again after the regions" "$([ $thawed = 2 ] && echo yes || echo no) ($thawed of 2)"

step "stopping the siblings"
if [ "$MODE" = pyxis ]; then stop_pyxis; else stop_krexrun; fi
left=""
for p in $HOGPIDS; do kwait 15 sh -c "! kill -0 $p 2>/dev/null" || left="$left $p"; done
# nothing frozen: no process of this run stopped, no freezer cgroup of it FROZEN
frozen=""
for s in /proc/[0-9]*/status; do
	grep -q '^State:.*T (stopped)' "$s" 2>/dev/null || continue
	p=${s#/proc/}
	p=${p%/status}
	tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -e "$B" -e "$CT" -e "$W" && frozen="$frozen $p"
done
for d in $HOGCG; do
	[ -f "$d/freezer.state" ] && grep -q FROZEN "$d/freezer.state" && frozen="$frozen $d"
	[ -f "$d/cgroup.freeze" ] && [ "$(cat "$d/cgroup.freeze")" = 1 ] && frozen="$frozen $d"
done
if [ -n "${KC_NODES:-}" ]; then
	for f in $(find /sys/fs/cgroup/freezer/slurm_$KC_NODES /sys/fs/cgroup/freezer/krex-slurm/$$-* \
		-name freezer.state 2>/dev/null); do grep -q FROZEN "$f" && frozen="$frozen $f"; done
	for f in $(find /sys/fs/cgroup/krex-slurm /sys/fs/cgroup/system.slice -path "*krex-slurm/$$-*" -name cgroup.freeze 2>/dev/null) \
		$(find /sys/fs/cgroup/system.slice -path "*slurm*$KC_NODES*" -name cgroup.freeze 2>/dev/null); do
		[ "$(cat "$f" 2>/dev/null)" = 1 ] && frozen="$frozen $f"
	done
fi
row "siblings ended when stopped (scancel, or TERM)" "$([ -z "$left" ] && echo yes || echo "no: left$left")"
row "nothing left frozen after" "$([ -z "$frozen" ] && echo yes || echo "no:$frozen")"

echo
echo "== the measured kernel (ms; ev = GPU event time, wall = host time)"
awk '/^victim/ { delete v; for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	printf "  %-16s ev p50 %8s  ev p95 %8s  wall p95 %8s\n", v["label"], v["ev_p50"], v["ev_p95"], v["wall_p95"] }' \
	"$W/victim.out" | tee "$OUT/victim-summary.txt"
step "done"
exit "$FAILED"
