#!/bin/bash
# exiting-siblings.sh - session 17, call 3 (issue 18): do drains meet
# siblings whose CUDA is shutting down, and what does the H200's driver
# answer them?  A private krexd (log_level=debug) on GPU 0; three loops of
# short-lived CUDA siblings (`krex run -- krex-hog ITERS --seconds 0.3`, one
# after another, each a new process that starts, launches and exits); an
# owner taking a region per sample (`krex-victim run --region sample`) for
# DURATION seconds.  Prints the drain acks by status (0 drained, 1 failed,
# 2 exiting: the driver said deinitialized), the exiting siblings judged at
# the settle (left the GPU / still on it), the exit waits and the
# certificates' outcomes and notes (the region log).
#
#	bash notebook/h200-session-17/exiting-siblings.sh BUILDDIR [DURATION]
#
# KREX_GPU_MOCK=1: a dry run on the mock driver and mock NVML (TEST
# DOUBLES): it checks the script only.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/test/gpu/gpu-lib.sh"
gpu_out exiting-out
gpu_start "${1:-}"
gpu_krex_env exiting
DUR=${2:-60}
WL=$B/test/workloads
export KREX_WL_MODULE=${KREX_WL_MODULE:-$WL/fma.fatbin}
krexd_up "$W/krexd.log" -r "$W/run" -o gpus=0 -o log_level=debug -o "region_log=$W/regions.log"
IT=$(timeout 60 "$WL/krex-victim" calib 1)
echo "calib: $IT iterations for 1 ms"
[ -n "$IT" ] || { echo "FAIL: no calibration"; exit 1; }
churn() {
	local end=$((SECONDS + DUR + 5))
	while [ $SECONDS -lt $end ]; do
		KREX_LOG=info timeout 30 "$KREX" run --label "churn$1" -- "$WL/krex-hog" "$IT" --seconds 0.3 \
			>/dev/null 2>>"$W/churn$1.err"
	done
}
for i in 1 2 3; do
	churn $i &
	PIDS="$PIDS $!"
done
sleep 2
# a region per sample, about 50 a second: DUR x 50 samples, at most DUR + 30 s
timeout $((DUR + 30)) "$KREX" run --label owner -- "$WL/krex-victim" run "$IT" $((DUR * 50)) \
	--region sample --label owner >"$W/owner.txt" 2>"$W/owner.err" ||
	echo "owner: rc $? ($(tail -2 "$W/owner.err" | tr '\n' ' '))"
stop_all
krexd_down
L=$W/krexd.log
echo "regions: $(wc -l <"$W/regions.log"), clean $(grep -c '"outcome":"clean"' "$W/regions.log")"
for s in 0 1 2; do echo "drain acks with status $s: $(grep -c "acknowledged the drain after .* status $s\$" "$L")"; done
echo "exiting at the drain, left the GPU by the settle: $(grep -c 'was exiting at the drain and has left the GPU' "$L")"
echo "exiting at the drain, listed again: $(grep -c 'process was exiting at its drain: the processes are listed again' "$L")"
echo "exit waits: $(grep -c 'would make it degraded and are exiting' "$L"), gone $(grep -c 'exiting processes to leave its GPUs .*: gone' "$L"), outlived $(grep -c 'still on its GPUs after exit_wait' "$L")"
grep -o 'waited [0-9]* us after the freeze for exiting processes' "$L" | awk '{print $2}' | sort -n |
	awk '{a[NR]=$1} END {if (NR) printf "exit wait us: n %d p50 %d p95 %d max %d\n", NR, a[int(NR*0.5+0.5)], a[int(NR*0.95+0.5)], a[NR]}'
echo "notes:"
grep -o '"note":"[^"]*"' "$W/regions.log" | sed 's/[0-9][0-9]*/N/g' | sort | uniq -c | sort -rn | head -8
echo "gate lines: exiting $(cat "$W"/churn*.err | grep -c 'drain: the GPU runtime is shutting down'), could not wait $(cat "$W"/churn*.err | grep -c 'could not be waited for')"
tail -1 "$W/owner.txt"
