#!/bin/bash
# Device call 2 planned in session 40 (issue 18), for a round with device
# time: the mover's hold (KREXD_MOVE_HOLD_MS, 5c9eb42) side by side at 32
# sessions, as session 38's call 1 compared the mover with the loop:
# agents.py's KREX mode over MPS, H N H N (H: KREXD_MOVE_HOLD_MS=100, N:
# none), then 24 once each while time is left; the proof's KREX windows
# (--scale 0.2 --window 52 --warm-s 8).  Wanted: the freeze's start and the
# thaw (entry_split.py's fz_start_us, thaw_us p95/p99; session 39: up to 34
# and 36/67 ms with the mover against 8-10 and 9/13 on the loop), the
# entry's "other", the rate, and what the hold cost the REGISTERs (moves.py:
# held and queued).  About 520 s.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
. notebook/gpu-call-mps.sh
mps_start
run() { # NAME N [hold]
	st "$1"
	if [ "${3:-}" = hold ]; then export KREXD_MOVE_HOLD_MS=100; else unset KREXD_MOVE_HOLD_MS; fi
	timeout -k 10 100 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$B" \
		--out "/tmp/o/$1" --n "$2" --modes krex --scale 0.2 --window 52 --warm-s 8 \
		--budget-s 95 >"/tmp/o/$1.txt" 2>&1
	echo "$1: rc $?" >>"$O/steps.txt"
	unset KREXD_MOVE_HOLD_MS
}
run h32a 32 hold
run n32a 32
run h32b 32 hold
run n32b 32
if [ $(($(date +%s) - t0)) -lt 330 ]; then
	run h24 24 hold
	run n24 24
fi
mps_stop
st done
for r in h32a n32a h32b n32b h24 n24; do
	[ -d "/tmp/o/$r" ] || continue
	echo "######## $r"
	tables "/tmp/o/$r" agents.md agents-breakdown.md
	L=$(ls /tmp/o/$r/agents.krex.*.krexd.log 2>/dev/null | head -1)
	[ -n "$L" ] || continue
	timeout 30 python3 notebook/h200-session-40/moves.py "$L"
	timeout 60 python3 test/perf/entry_split.py "$L" | sed -n '/^phase/,$p'
done >"$O/call2.md" 2>&1
tar czf "$O/call2.tgz" -C /tmp/o $(cd /tmp/o && ls -d h32a n32a h32b n32b h24 n24 *.txt 2>/dev/null) 2>/dev/null
[ -s "$O/build.err" ] || rm -f "$O/build.err"
cat "$O/call2.md"
