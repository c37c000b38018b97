#!/bin/bash
# Device call 4 of session 19 (issue 18, the brief's "do no harm"): the
# harmless proof (test/gpu/harmless.sh: every framework as a sibling of an
# owner taking regions, each sibling's results checked, nothing left frozen
# or pinned) with the gate's context hold, the default since 781270f: a
# framework started during a region now waits there to make its context.
# The gate counts summed over every gated process (gate.context_held: the
# contexts that waited).
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st harmless
KREX_GATE_COUNTS=/tmp/o/counts KREX_HARMLESS_LIMIT=300 timeout 310 bash test/gpu/harmless.sh --builddir "$B" \
	--out /tmp/o/harmless --seconds 20 --runs 2 >/tmp/o/harmless.txt 2>&1
echo "rc=$?" >>/tmp/o/harmless.txt
cp /tmp/o/harmless.txt "$O/harmless.md" 2>/dev/null
awk '$2 ~ /^gate\./ { n[$2] += $3 } END { for (k in n) print k, n[k] }' /tmp/o/counts 2>/dev/null | sort >"$O/gate-counts.txt"
st done
grep -E "Goal|new under|left:|Overall|budget|PASS|FAIL|regions" /tmp/o/harmless.txt | cut -c1-300 | head -30
tail -3 /tmp/o/harmless.txt
cat "$O/gate-counts.txt" "$O/env.txt" "$O/steps.txt"
