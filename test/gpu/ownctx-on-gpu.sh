#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ownctx-on-gpu.sh - a sibling's work in a context of its own (cuCtxCreate)
# when its primary context ends, on a real GPU, in one call (doc/gate.md,
# "Ending a context: the gate forgets what it made there").
#
#	bash test/gpu/ownctx-on-gpu.sh [BUILDDIR]     (from the source tree's root, as root)
#
# A private krexd on GPU 0; the sibling `krex run -- krex-ownctx MS W/own`
# (test/workloads/ownctx.c: a reference run in its primary context, then
# fma_loop of about MS ms, 1500 by default, queued on a stream of a context
# of its own (KREX_OWNCTX_N=N: the last of N, the others kept; the gate
# notes up to 1024) with a host function after it that writes the time it ran,
# then the primary context's last release, nothing more queued); once it
# says so, an owner's region around a command that writes the time it
# started.  Expected: the drain waited for the sibling's kernel, so its host
# function ran before the owner's command (a frozen process runs none);
# the region clean; the sibling's result the reference's.  Before the gate
# kept such a context, the last release made it forget the kernel and the
# region ran beside it.  Prints a table (check, expected, got, PASS/FAIL);
# the files under $OUT (default ./ownctx-out).  Under a minute; every step
# has a limit.
#
# KREX_GPU_MOCK=1: a dry run on the mock NVML and the mock CUDA driver
# (TEST DOUBLES), no GPU: it checks the script and the gate's path, not the
# driver.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/test/gpu/gpu-lib.sh"
gpu_out ownctx-out
gpu_start "${1:-}"
gpu_krex_env ownctx
MS=${KREX_OWNCTX_MS:-1500}
N=${KREX_OWNCTX_N:-1}
[ "$MOCK" = 1 ] || export KREX_WL_MODULE=${KREX_WL_MODULE:-$B/test/workloads/fma.fatbin}
gpu_rows
waitfor() { # SECONDS CMD...
	local i
	for ((i = 0; i < $1 * 10; i++)); do "${@:2}" && return 0; sleep 0.1; done
	return 1
}
j() { # j KEY: a member of the owner's certificate (null when absent)
	python3 -c '
import json, sys
c = [ln for ln in open(sys.argv[1]) if ln.startswith("{")][-1]
v = json.loads(c).get(sys.argv[2])
print("null" if v is None else v)' "$OUT/owner.json" "$1" 2>/dev/null || echo "?"
}

echo "build: $B; GPU before: $(gpu_clocks)"
mkdir -p "$W/run" "$W/own"
rm -f "$W/own/queued" "$W/own/go" "$W/own/out" "$W/granted"
krexd_up "$W/krexd.log" -v -r "$W/run" -o gpus=0 -o log_level=debug \
	-o "cgroup_subtree=krex-ownctx-$$"
timeout 120 "$KREX" run --label own -- "$B/test/workloads/krex-ownctx" "$MS" "$W/own" "$N" \
	>"$W/own.log" 2>&1 &
SIB=$!
PIDS="$PIDS $SIB"
waitfor 60 test -e "$W/own/queued"
gpu_row "the sibling queued its kernel in its own context (of $N) and released the primary one" \
	"yes" "$(test -e "$W/own/queued" && echo yes || { echo no; tail -3 "$W/own.log" >&2; })"
timeout 60 "$KREX" region --json -- sh -c "date +%s.%N >'$W/granted'" \
	2>"$OUT/owner.json" >/dev/null || echo "warning: krex region failed: $(tail -2 "$OUT/owner.json")"
touch "$W/own/go"
wait "$SIB"
st=$?
granted=$(cat "$W/granted" 2>/dev/null)
ran=$(sed -n 's/.* ran=\([0-9.]*\).*/\1/p' "$W/own/out" 2>/dev/null)
gpu_row "the owner's region (drain_us $(j drain_us))" "clean" "$(j outcome)"
gpu_row "the sibling's kernel ended before the owner's command (ran ${ran:-?}, command ${granted:-?})" \
	"before" "$(python3 -c "import sys; print('before' if 0 < float(sys.argv[1]) < float(sys.argv[2]) else 'after')" "${ran:-0}" "${granted:-0}" 2>/dev/null)"
gpu_row "the sibling's result, synchronized after the region" "done rc=0 result=ok" \
	"$(sed 's/ ran=.*//' "$W/own/out" 2>/dev/null)"
gpu_row "the sibling exits 0" "0" "$st"
echo "krexd: $(grep -h 'acknowledged the drain' "$W/krexd.log" | tail -1)"
stop_all
krexd_down
left=$(grep -l '^State:.*T (stopped)' /proc/[0-9]*/status 2>/dev/null | wc -l)
echo "GPU after: $(gpu_clocks); stopped processes left on the machine: $left"
gpu_table ownctx-on-gpu
