#!/bin/bash
# Device call 6 of session 12 (issue 18, settle in chains): test/gpu/settle.sh
# with its new chain mode beside the power-hungry torch sibling: alone, wait
# (one owner, a 300 ms gap before each region: each region settles), chain
# (two owners, no gap: regions chained; only a chain's first should wait).
. notebook/gpu-call-prologue.sh
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv; } >"$O/env.txt" 2>&1
st settle
OUT=/tmp/o/settle MODES="alone wait chain" REGIONS=20 timeout -k 5 300 bash test/gpu/settle.sh "$B" >/tmp/o/settle.txt 2>&1
echo "rc=$?" >>/tmp/o/settle.txt
st done
cp /tmp/o/settle.txt "$O/settle.txt"
python3 - /tmp/o/settle/chain.jsonl >"$O/chain-regions.txt" 2>&1 <<'PY'
import json, sys
for ln in open(sys.argv[1]):
    r = json.loads(ln)
    print(r["label"], r["i"], "chained", r.get("chained"), "chain_us", r.get("chain_us"),
          "settle_us", r.get("settle_us"), "entry_ms %.1f" % r["entry_ms"], r["outcome"])
PY
tar czf "$O/detail.tgz" -C /tmp/o settle 2>/dev/null
cat "$O/settle.txt"; head -50 "$O/chain-regions.txt"; cat "$O/steps.txt"
