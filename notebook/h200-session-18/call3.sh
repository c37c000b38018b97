#!/bin/bash
# Device call 3 of session 18 (issue 18): does a sibling that is only making
# or ending a CUDA context (what a command does at its start and its exit)
# disturb a kernel timed beside it?  Call 2 found krexd's freeze at 32
# sessions waiting for such siblings (p50 40 ms, up to 107 ms: a task in the
# driver freezes only when its call returns).  No KREX here: krex-victim
# alone (back to back, 0.1 ms and 1 ms kernels), then beside 4 loops of
# processes that each make a context, load the module and exit (ctx_churn.py
# once), then beside 4 idle contexts (ctx_churn.py hold), then alone again.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin KREX_GATE=off
V=$B/test/workloads/krex-victim
C=notebook/h200-session-18/ctx_churn.py
i01=$(timeout 60 "$V" calib 0.1) && i1=$(timeout 60 "$V" calib 1) || { echo "calib failed"; exit 1; }
echo "iters 0.1 ms $i01, 1 ms $i1" | tee "$O/result.txt"
measure() {
	echo "== $1" >>"$O/result.txt"
	timeout 60 "$V" run "$i01" 5000 --warmup 200 --label "$1-0.1ms" >>"$O/result.txt" 2>&1
	timeout 60 "$V" run "$i1" 2000 --warmup 100 --label "$1-1ms" >>"$O/result.txt" 2>&1
}
churn() { # churn SECONDS TAG: ctx_churn.py once, back to back, counted
	local end=$((SECONDS + $1)) n=0
	while [ $SECONDS -lt $end ]; do timeout 30 python3 "$C" once "$KREX_WL_MODULE" && n=$((n + 1)); done
	echo "$n" >"/tmp/o/churn.$2"
}
st "alone"
measure alone
st "beside 4 context churners"
pids=
for j in 1 2 3 4; do churn 25 "$j" & pids="$pids $!"; done
sleep 3
measure churn4
wait $pids
echo "contexts made and ended by the 4 churners in 25 s: $(cat /tmp/o/churn.* | awk '{s += $1} END {print s}')" >>"$O/result.txt"
st "beside 4 idle contexts"
pids=
for j in 1 2 3 4; do timeout 40 python3 "$C" hold "$KREX_WL_MODULE" 30 & pids="$pids $!"; done
sleep 5
measure idle4
wait $pids
st "alone again"
measure alone2
st done
cat "$O/result.txt" "$O/steps.txt"
