# gpu-call-proof.sh - sourced by a device call script after
# gpu-call-prologue.sh (from session 23 on): test/gpu/proof.sh under
# `timeout ${PROOF_LIMIT:-480}` with the build $B, its table and fidelity
# tables copied to $O, its raw files in $O/${CALL:-call}.tgz, then printed.
# KREX_PROOF_PART (exported by the caller) picks the part (from session 24
# on; the agents part's tables are copied to $O too).
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st proof
OUT=/tmp/o/proof timeout -k 10 "${PROOF_LIMIT:-480}" bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
st done
cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
cat /tmp/o/proof/fidelity/fidelity.md /tmp/o/proof/fidelity/fidelity-rounds.md \
	/tmp/o/proof/env.txt >"$O/proof-fidelity.md" 2>/dev/null
tar czf "$O/${CALL:-call}.tgz" -C /tmp/o proof.txt proof/fidelity/fidelity.md \
	proof/fidelity/fidelity.csv proof/fidelity/fidelity-rounds.csv proof/fidelity/raw \
	proof/entry2/raw proof/entry3/raw proof/agents/agents.md proof/agents/agents.csv \
	proof/agents-cmd/agents.md proof/agents-cmd/agents.csv proof/env.txt 2>/dev/null
for f in agents/agents.md agents/agents-breakdown.md agents-cmd/agents.md agents-cmd/agents-breakdown.md; do
	[ -f "/tmp/o/proof/$f" ] && { echo "==== $f"; cat "/tmp/o/proof/$f"; }
done >"$O/proof-agents.md"
cat "$O/proof.md" "$O/steps.txt"
tail -3 /tmp/o/proof.txt
