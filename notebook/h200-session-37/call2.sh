#!/bin/bash
# Device call 2 of session 37 (issue 18), at once after call 1 on the same
# machine: plain sharing (no lock, no KREX, its timings not clean) at 16 /
# 24 / 32 sessions over an MPS control daemon of the call's own, in the
# windows call 1's proof gave KREX (52 s, 44 s counted), so that the
# throughput plot (test/perf/plot.sh) shows KREX, the lock and sharing from
# one machine and one code; then the proof's fidelity part without MPS
# (KREX_PROOF_PART=fidelity: per sample and batch at 0.1 / 1 / 10 ms with
# alone-gapped, the entry three times).  About 400 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mps_start
st "plain sharing at 16, 24, 32 over MPS"
mkdir -p /tmp/o/share
timeout -k 10 200 python3 test/perf/agents.py --full --builddir "$B" --srcdir . \
	--out /tmp/o/share --n 16,24,32 --scale 0.2 --warm-s 8 --modes share \
	--window 52 --budget-s 190 >/tmp/o/share.txt 2>&1
echo "rc=$?" >>/tmp/o/share.txt
mps_stop
{
	tables /tmp/o/share agents.md agents-breakdown.md agents-commands.md
	tail -3 /tmp/o/share.txt
} >"$O/call2-share.md" 2>&1
tar czf "$O/call2-share.tgz" -C /tmp/o share.txt share/agents.csv share/agents-breakdown.csv \
	share/agents-commands.csv 2>/dev/null
export KREX_PROOF_PART=fidelity
CALL=call2 PROOF_LIMIT=330 PROOF_MPS=0
. notebook/gpu-call-proof.sh
{
	echo "==== steps.txt"
	cat "$O/steps.txt"
} >>"$O/proof.md" 2>/dev/null && rm -f "$O/steps.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
rm -f "$O/proof-agents.md"
cat "$O/call2-share.md" | head -30
ls "$O"
