#!/bin/bash
# The README's main-job command: a one-node Slurm on localhost with KREX
# (test/slurm/cluster.sh), three --krex-shared jobs sharing one GPU, one of
# them timing work inside critical regions; prints each region's certificate
# and a summary, then stops the cluster.  Run as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."
top_srcdir=$PWD
top_builddir=$PWD
export top_srcdir top_builddir

say() { printf 'demo: %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

scripts/install-deps.sh
if [ ! -x spank/.libs/spank_krex.so ] && [ ! -f spank/.libs/spank_krex.so ] ||
	[ ! -x coordinator/krexd ] || [ ! -x tools/krex ]; then
	say "building KREX"
	[ -x configure ] || ./autogen.sh >/dev/null
	[ -f Makefile ] || ./configure -q
	make -j"$(nproc)" >/dev/null
fi

. test/lib.sh
. test/slurm/cluster.sh
cluster_check || die "$CLUSTER_WHY"
krexd_real || die "coordinator/krexd is not built: nothing can hold a region"

# The GPU: the real one where there is one, else the fake device of the tests.
gpu_note="no GPU here: jobs use KREX's mock CUDA driver (a test double)"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU 0' &&
	[ -e /dev/nvidia0 ]; then
	KC_GPU0=/dev/nvidia0
	gpu_note="GPU: $(nvidia-smi -L | head -1)"
fi
victim=$top_builddir/test/workloads/krex-victim
mock=$top_builddir/test/mock/.libs/libcuda.so.1
if [ ! -x "$victim" ] || { [ "$KC_GPU0" != /dev/nvidia0 ] && [ ! -f "$mock" ]; }; then
	victim=""
	gpu_note="no GPU workload built (test/workloads/krex-victim): jobs run a CPU stand-in"
	[ "$KC_GPU0" = /dev/nvidia0 ] && gpu_note="$gpu_note; $(nvidia-smi -L | head -1) is shared"
fi

mode=linuxproc
[ -w /sys/fs/cgroup/freezer/cgroup.procs ] && mode=cgroup
say "starting Slurm (proctrack/$mode) with spank_krex.so on localhost"
t0=$(date +%s%N)
cluster_start "$mode" 1 || die "$CLUSTER_WHY"
say "cluster up in $((($(date +%s%N) - t0) / 1000000)) ms; krexd started by slurmd: pid $(cat "$KC_DIR/run/$KC_NODES/krexd.pid")"
say "$gpu_note"

W=$KC_DIR/work
gcc -O1 -I"$top_srcdir/libregion/include" contrib/examples/region_example.c \
	-L"$top_builddir/libregion/.libs" -Wl,-rpath,"$top_builddir/libregion/.libs" \
	-lkrexregion -o "$W/region_example"

# Two sibling jobs keep the GPU (here: the CPUs) busy; the third measures.
if [ -n "$victim" ]; then
	sib="LD_LIBRARY_PATH=$(dirname "$mock") exec $victim"
	meas="LD_LIBRARY_PATH=$(dirname "$mock") $victim --region"
else
	sib="while :; do :; done"
	meas=""
fi
for i in 1 2; do
	ksbatch --krex-shared=label=sibling$i --gres=shard:1 -o "$W/sib$i.log" \
		--wrap="$sib" >"$W/sib$i.id"
done
cat >"$W/measure.sh" <<EOF
#!/bin/sh
# Outside regions the siblings compete; inside, KREX freezes them.
cd $W
if [ -n "$meas" ]; then
	$meas > measure.out 2>&1
	exit
fi
for i in 1 2 3 4 5; do
	./region_example --no-region | sed 's/^/outside /' >> measure.out
	$top_builddir/tools/krex region --json --cert cert\$i.json -- ./region_example --no-region |
		sed 's/^/inside /' >> measure.out
done
./region_example > api.out
EOF
chmod 755 "$W/measure.sh"
m=$(ksbatch --krex-shared=label=measure --gres=shard:1 -o "$W/measure.log" "$W/measure.sh")
say "three --krex-shared jobs on one GPU: $(krun squeue -h -o '%i %j %T' | tr '\n' ';')"
wait_for 120 kjob_done "$m" || die "the measuring job did not finish in 120 s"
say "measuring job $m: $(kjob_state "$m")"
krun scancel "$(cat "$W/sib1.id")" "$(cat "$W/sib2.id")" || true

echo
echo "== certificates (one per region)"
for f in "$W"/cert*.json; do
	[ -f "$f" ] && { cat "$f"; echo; }
done
[ -f "$W/api.out" ] && { echo "== from the C API (contrib/examples/region_example.c)"; cat "$W/api.out"; }
[ -f "$W/measure.out" ] || { cat "$W/measure.log"; die "no measurements"; }
echo
echo "== summary"
awk '$2 == "work:" { n[$1]++; s[$1] += $3; if ($3 > m[$1]) m[$1] = $3 }
	END { for (k in n) printf "%-8s %d runs  mean %.1f ms  max %.1f ms\n", k, n[k], s[k] / n[k], m[k] }' \
	"$W/measure.out" | sort
grep -ho '"outcome":"[a-z]*"' "$W"/cert*.json 2>/dev/null | sort | uniq -c | sed 's/^/regions: /' || true
say "stopping the cluster"
