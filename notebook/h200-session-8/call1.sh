#!/bin/bash
# Device call 1 of session 8 (issue 20): JAX alone beside the harmless
# owner, after the gate's change "work onto a busy stream goes through in
# the drain's first round" (doc/gate.md).  One run, 30 s per pass (the
# round had 210 s of device time left).  Besides harmless's verdict: every
# gated process's counts (KREX_GATE_COUNTS: drains, passes, launches let
# through onto busy streams), krexd's wait for each sibling's ack
# (log_level=debug, krexd only: the siblings' stderr stays as in a normal
# run), and the "Delay kernel timed out" lines of JAX.
. notebook/gpu-call-prologue.sh
st "harmless, jax only"
KREX_GATE_COUNTS=/tmp/o/counts KREX_HARMLESS_LIMIT=110 timeout 120 bash test/gpu/harmless.sh --builddir "$B" \
	--out /tmp/o/harmless --seconds 30 --runs 1 --only jax --krexd-opt log_level=debug >/tmp/o/harmless.txt 2>&1
echo "rc=$?" >>/tmp/o/harmless.txt
st done
cp /tmp/o/harmless.txt "$O/harmless.md" 2>/dev/null
cp /tmp/o/counts "$O/gate-counts.txt" 2>/dev/null
echo "---- harmless"
grep -E "^\| jax|Goal|^All regions" /tmp/o/harmless.txt | cut -c1-400
echo "---- Delay kernel timed out (jax.err of the krex pass)"
grep -c "Delay kernel timed out" /tmp/o/harmless/run*/krex/jax.err 2>/dev/null
echo "---- gate counts (summed over gated processes)"
awk '$2 ~ /^gate\./ { n[$2] += $3 } END { for (k in n) print k, n[k] }' /tmp/o/counts 2>/dev/null | sort
echo "---- krexd's wait for each participant's ack"
L=$(ls /tmp/o/harmless/run*/krex/own.krexd.log 2>/dev/null | head -1)
python3 test/perf/krexlog.py "$L" | tee "$O/acks.md"
tar czf "$O/detail.tgz" -C /tmp/o harmless 2>/dev/null
cat "$O/steps.txt"
