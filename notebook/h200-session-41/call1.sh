#!/bin/bash
# Device call 1 of session 41 (issue 18): session 40's two planned calls in
# one, since starts were refused for most of this session's first hour and
# each refusal costs device time.  call1.sh of session 40 (cgmutex.py
# alternated; the proof's settle part with the owner's own NVML watch),
# then call2.sh's hold runs at 32 sessions only (H N H N:
# KREXD_MOVE_HOLD_MS=100 against none, agents.py's KREX mode over MPS), a
# run started only while 105 s are left of LIMIT (default 560; a smaller
# one when the round's time left is short).  About 540 s.
. notebook/gpu-call-prologue.sh
st "cgmutex.py"
timeout 30 python3 notebook/h200-session-39/cgmutex.py 5 >"$O/cgmutex.txt" 2>&1
export KREX_PROOF_PART=settle
CALL=settle PROOF_LIMIT=150 PROOF_MPS=0
. notebook/gpu-call-proof.sh >/dev/null 2>&1
cp /tmp/o/proof/settle/table.md "$O/settle-table.md" 2>/dev/null
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
. notebook/gpu-call-mps.sh
mps_start
run() { # NAME N [hold]
	if [ $(($(date +%s) - t0)) -gt $((${LIMIT:-560} - 105)) ]; then
		st "$1 not started: too little time left"
		return
	fi
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
mps_stop
st done
for r in h32a n32a h32b n32b; do
	[ -d "/tmp/o/$r" ] || continue
	echo "######## $r"
	tables "/tmp/o/$r" agents.md agents-breakdown.md
	L=$(ls /tmp/o/$r/agents.krex.*.krexd.log 2>/dev/null | head -1)
	[ -n "$L" ] || continue
	timeout 20 python3 notebook/h200-session-40/moves.py "$L"
	timeout 30 python3 test/perf/entry_split.py "$L" | sed -n '/^phase/,$p'
done >"$O/hold.md" 2>&1
tar czf "$O/hold.tgz" -C /tmp/o $(cd /tmp/o && ls -d h32a n32a h32b n32b *.txt 2>/dev/null) 2>/dev/null
[ -s "$O/build.err" ] || rm -f "$O/build.err"
cat "$O/cgmutex.txt" "$O/settle-table.md" "$O/steps.txt"
grep -E "^(########|phase|fz_start|thaw|entry|queued|of it|written)" "$O/hold.md" | head -80
