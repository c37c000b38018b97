#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's main-job command: a one-node Slurm on localhost with KREX
# (test/slurm/cluster.sh), three --krex-shared jobs sharing one GPU, one of
# them timing kernels inside critical regions; prints each region's
# certificate and a summary, then stops the cluster.  Run as root on a fresh
# Debian 12 machine: it installs what it needs and builds if not built.
#
# KREX_INSTALLED=1: run KREX as installed (the packages, or make install)
# instead of the build tree's: the plugin that plugstack.conf.d/krex.conf
# names (KREX_PLUGSTACK, default /etc/slurm/plugstack.conf.d/krex.conf),
# krexd and krex from $PATH, libkrexregion and the gate from ld.so's cache.
# The build tree gives only the test workloads and the mock CUDA driver.
set -euo pipefail
cd "$(dirname "$0")/.."
top_srcdir=$PWD
# KREX_BUILDDIR: a build made elsewhere (configure run outside the source tree).
top_builddir=${KREX_BUILDDIR:-$PWD}
export top_srcdir top_builddir

say() { printf 'demo: %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

scripts/install-deps.sh
B=$top_builddir
INSTALLED=${KREX_INSTALLED:-0}
built() {
	[ "$INSTALLED" = 1 ] || { [ -f $B/spank/.libs/spank_krex.so ] && [ -x $B/krexd/krexd ] && [ -x $B/krex/krex ]; }
}
if ! built || [ ! -x $B/test/workloads/krex-victim ] || [ ! -f $B/test/mock/.libs/libcuda.so.1 ]; then
	[ "$B" = "$PWD" ] || die "KREX_BUILDDIR=$B is not fully built (make, then make -C test/mock check)"
	say "building KREX"
	[ -x configure ] || ./autogen.sh >/dev/null
	[ -f Makefile ] || ./configure -q
	make -j"$(nproc)" >/dev/null
	# the test doubles and workloads are check programs
	make -C test/mock -j"$(nproc)" check >/dev/null 2>&1 || true
	make -C test/workloads -j"$(nproc)" check >/dev/null 2>&1 || true
fi

KREX_CLI=$top_builddir/krex/krex
if [ "$INSTALLED" = 1 ]; then
	snippet=${KREX_PLUGSTACK:-/etc/slurm/plugstack.conf.d/krex.conf}
	[ -r "$snippet" ] || die "KREX_INSTALLED=1: no $snippet (install slurm-spank-krex, or make install; KREX_PLUGSTACK names another)"
	KC_PLUGIN=$(awk '$1 == "required" || $1 == "optional" { print $2; exit }' "$snippet")
	KC_REAL_KREXD=$(PATH=$PATH:/usr/sbin:/usr/local/sbin command -v krexd) || die "KREX_INSTALLED=1: no krexd on PATH"
	KREX_CLI=$(command -v krex) || die "KREX_INSTALLED=1: no krex on PATH"
	# (awk reads to the end: an early exit can kill ldconfig with SIGPIPE,
	# and under pipefail and set -e the demo then ended without a word)
	libregion=$(ldconfig -p | awk '$1 == "libkrexregion.so.1" && !f { print $NF; f = 1 }')
	[ -n "$libregion" ] || die "KREX_INSTALLED=1: ld.so does not know libkrexregion.so.1 (ldconfig)"
	libregion=$(readlink -f "$libregion")
	KC_GATE=$(dirname "$libregion")/libkrexgate.so
	[ -f "$KC_GATE" ] || die "KREX_INSTALLED=1: no gate next to $libregion"
	export KC_PLUGIN KC_REAL_KREXD KC_GATE
	say "KREX as installed: plugin $KC_PLUGIN, krexd $KC_REAL_KREXD, gate $KC_GATE, krex $KREX_CLI, $libregion"
fi

. test/lib.sh
. test/slurm/cluster.sh
cluster_check || die "$CLUSTER_WHY"
krexd_real || die "$KC_REAL_KREXD is not there: nothing can hold a region"

# The GPU: the real one where there is one, else the fake device of the tests
# with KREX's mock CUDA driver (test/mock) behind the workloads.
WL=$top_builddir/test/workloads
MOCKLIB=$top_builddir/test/mock/.libs
[ -x "$WL/krex-victim" ] && [ -x "$WL/krex-hog" ] || die "test/workloads not built"
KREX_MOCK_GPU=
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU 0' &&
	[ -e /dev/nvidia0 ]; then
	KC_GPU0=/dev/nvidia0
	gpu_note="GPU: $(nvidia-smi -L | head -1)"
else
	[ -f "$MOCKLIB/libcuda.so.1" ] || die "test/mock not built"
	gpu_note="no GPU here: jobs use KREX's mock CUDA driver (a test double)"
	# Every job sees the one mock GPU (shared memory named by KREX_MOCK_GPU);
	# sbatch passes the environment on to the jobs.
	KREX_MOCK_GPU=/krex-demo-$$
	export KREX_MOCK_GPU
	export LD_LIBRARY_PATH=$MOCKLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [ "$INSTALLED" != 1 ]; then
	export LD_LIBRARY_PATH=$top_builddir/libregion/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	# The gate refers to libkrexregion weakly and passes everything through
	# without it; where the gate built here does not pull it in, preload it
	# too (the plugin puts the gate in front).
	if ! readelf -d "$KC_GATE" 2>/dev/null | grep -q 'libkrexregion'; then
		export LD_PRELOAD=$top_builddir/libregion/.libs/libkrexregion.so${LD_PRELOAD:+:$LD_PRELOAD}
	fi
fi

mode=linuxproc
[ -w /sys/fs/cgroup/freezer/cgroup.procs ] && mode=cgroup
# The bounded queue: each sibling stream keeps about queue_time of GPU work
# queued (long kernels one at a time), so that a region's drain is quick
# (doc/design.md "Bounded drain", krexd.conf(5)).
KC_PLUGARGS="queue_cap=2 queue_time=1ms max_region=20s"
say "starting Slurm (proctrack/$mode) with spank_krex.so on localhost ($KC_PLUGARGS)"
t0=$(date +%s%N)
cluster_start "$mode" 1 || die "$CLUSTER_WHY"
trap 'cluster_stop; [ -z "$KREX_MOCK_GPU" ] || rm -f "/dev/shm$KREX_MOCK_GPU"' EXIT
kpid=$(cat "$KC_DIR/run/$KC_NODES/krexd.pid")
say "cluster up in $((($(date +%s%N) - t0) / 1000000)) ms; krexd started by slurmd: pid $kpid, $(readlink "/proc/$kpid/exe")"
say "$gpu_note"
W=$KC_DIR/work

# The measured kernel: about 2 ms alone; the siblings launch 5 ms kernels.
IT=$("$WL/krex-victim" calib 2)
HIT=$("$WL/krex-victim" calib 5)
"$WL/krex-victim" run "$IT" 40 --label alone >"$W/victim.out"

# Two sibling jobs keep the GPU busy (queues of async kernels); the third
# measures: outside regions (shared), inside one region per sample, and in
# three regions entered with `krex region`, each with its certificate.
for i in 1 2; do
	ksbatch --krex-shared=label=hog$i --gres=shard:1 -o "$W/hog$i.log" \
		--wrap="exec $WL/krex-hog $HIT --counter $W/hog$i.count" >"$W/hog$i.id"
done
wait_for 60 test -s "$W/hog1.count" && wait_for 30 test -s "$W/hog2.count" ||
	die "the sibling jobs did not start: $(krun squeue -h -o '%i %T %r' | tr '\n' ' ')"
cat >"$W/measure.sh" <<EOS
#!/bin/sh
cd $W
# Which KREX libraries the job runs with (the gate preloaded by the plugin).
echo "job libraries: \$(grep -o '/[^ ]*libkrex[a-z]*\.so[.0-9]*' /proc/self/maps | sort -u | tr '\n' ' ')"
$WL/krex-victim run $IT 40 --label shared >> victim.out
$WL/krex-victim run $IT 10 --region sample --label in-regions >> victim.out
for i in 1 2 3; do
	$KREX_CLI region --json --cert cert\$i.json -- \\
		$WL/krex-victim run $IT 10 --label krex-region-\$i >> victim.out
done
EOS
chmod 755 "$W/measure.sh"
m=$(ksbatch --krex-shared=label=measure --gres=shard:1 -o "$W/measure.log" "$W/measure.sh")
say "three --krex-shared jobs on one GPU:"
krun squeue -o '%.10i %.10j %.8T %b' | sed 's/^/  /'
kwait 180 kjob_done "$m" || die "the measuring job did not finish in 180 s"
say "measuring job $m: $(kjob_state "$m")"
krun scancel "$(cat "$W/hog1.id")" "$(cat "$W/hog2.id")" || true

echo
echo "== certificates (one per krex region)"
for f in "$W"/cert*.json; do
	[ -f "$f" ] && { cat "$f"; echo; }
done
echo
echo "== the measured kernel (ms; ev = GPU event time, wall = host time)"
cat "$W/victim.out"
if [ -s "$W/measure.log" ]; then
	echo "== the measuring job's log"
	cat "$W/measure.log"
fi
echo
echo "== summary"
awk '/^victim/ { delete v; for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	printf "  %-16s ev p50 %8s  ev p95 %8s  wall p95 %8s\n", v["label"], v["ev_p50"], v["ev_p95"], v["wall_p95"] }' \
	"$W/victim.out"
grep -ho '"outcome":"[a-z]*"' "$W"/cert*.json 2>/dev/null | sort | uniq -c | sed 's/^ */  regions: /' || true
say "stopping the cluster"
