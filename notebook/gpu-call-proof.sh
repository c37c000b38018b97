# gpu-call-proof.sh - sourced by a device call script after
# gpu-call-prologue.sh (from session 23 on): test/gpu/proof.sh under
# `timeout ${PROOF_LIMIT:-480}` with the build $B, its table and fidelity
# tables copied to $O, its raw files in $O/${CALL:-call}.tgz, then printed.
# KREX_PROOF_PART (exported by the caller) picks the part (from session 24
# on; the agents part's tables are copied to $O too).  PROOF_MPS=1: over an
# MPS control daemon of the call's own (gpu-call-mps.sh; from session 25 on).
# From session 26 on: the KREX windows' region log (proof.sh's
# agents/regions.jsonl) gzipped to $O and its causes counted
# (notebook/h200-session-25/causes.py) into $O/proof-causes.md.  From
# session 37 on: the share part's tables (KREX_PROOF_PART=...,share) too.
# From session 39 on: the settle part's (KREX_PROOF_PART=...,settle)
# records and table, its table also in $O/proof-settle.md.
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
if [ "${PROOF_MPS:-0}" = 1 ]; then
	. notebook/gpu-call-mps.sh
	mps_start
fi
st proof
OUT=/tmp/o/proof timeout -k 10 "${PROOF_LIMIT:-480}" bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
[ "${PROOF_MPS:-0}" = 1 ] && mps_stop
st done
cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
cat /tmp/o/proof/fidelity/fidelity.md /tmp/o/proof/fidelity/fidelity-rounds.md \
	/tmp/o/proof/env.txt >"$O/proof-fidelity.md" 2>/dev/null
tar czf "$O/${CALL:-call}.tgz" -C /tmp/o proof.txt proof/fidelity/fidelity.md \
	proof/fidelity/fidelity.csv proof/fidelity/fidelity-rounds.csv proof/fidelity/raw \
	proof/entry2/raw proof/entry3/raw proof/agents/agents.md proof/agents/agents.csv \
	proof/agents-cmd/agents.md proof/agents-cmd/agents.csv proof/agents/agents-breakdown.csv \
	proof/agents/agents-commands.csv proof/agents/agents-siblings.csv \
	proof/agents-cmd/agents-breakdown.csv proof/agents-cmd/agents-commands.csv proof/env.txt \
	proof/agents-share/agents.md proof/agents-share/agents.csv \
	proof/agents-share/agents-breakdown.csv proof/agents-share/agents-commands.csv \
	proof/settle.txt proof/settle.err proof/settle/table.md proof/settle/alone.jsonl \
	proof/settle/wait.jsonl proof/settle/chain.jsonl proof/settle/work/krexd-chain.log \
	proof/settle/work/krexd-wait.log 2>/dev/null
cp /tmp/o/proof/settle.txt "$O/proof-settle.md" 2>/dev/null
if [ -f /tmp/o/proof/agents/regions.jsonl ]; then
	gzip -c /tmp/o/proof/agents/regions.jsonl >"$O/${CALL:-call}-regions.jsonl.gz"
	python3 notebook/h200-session-25/causes.py /tmp/o/proof/agents/regions.jsonl \
		>"$O/proof-causes.md" 2>&1
fi
tables /tmp/o/proof agents/agents.md agents/agents-breakdown.md agents/agents-siblings.md \
	agents/agents-commands.md agents-cmd/agents.md agents-cmd/agents-breakdown.md \
	agents-cmd/agents-commands.md agents-share/agents.md agents-share/agents-breakdown.md \
	>"$O/proof-agents.md"
cat "$O/proof.md" "$O/steps.txt"
tail -3 /tmp/o/proof.txt
