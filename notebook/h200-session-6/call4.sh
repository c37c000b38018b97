#!/bin/bash
# Device call 4 of session 6: a diagnostic, not a proof.  harmless x3 with every
# sibling's gate at KREX_LOG=debug (one line per drain: its time, the wait for
# calls inside the driver, passes, launches let through, threads parked) and
# krexd at log_level=debug, to find where JAX's 100 ms drains (and its "Delay
# kernel timed out") and triton's left-pinned threads come from (issue 20).
# The harness's verdict is meaningless here (every debug line counts as new).
set -u
O=${OUT:?}
mkdir -p /tmp/o
t0=$(date +%s)
st() { echo "== $(($(date +%s) - t0)) s: $*" | tee -a "$O/steps.txt"; }
st build
B=$(timeout 90 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
st harmless-debug
KREX_LOG=debug KREX_HARMLESS_LIMIT=285 timeout 295 bash test/gpu/harmless.sh --builddir "$B" --out /tmp/o/harmless \
	--seconds 20 --runs 3 --krexd-opt log_level=debug >/tmp/o/harmless.txt 2>&1
echo "rc=$?" >>/tmp/o/harmless.txt
st done
# the JAX drains over 50 ms, and the delay-kernel lines, per run
for r in /tmp/o/harmless/run*/krex; do
	echo "== $r"
	grep -c "drain: " "$r/jax.err"
	grep "Delay kernel" "$r/jax.err" | cut -c1-80
	grep "drain: [0-9]* us" "$r/jax.err" | awk '{ if ($4 + 0 > 50000) print }' | head -12
	grep -h "left\|pinned" /tmp/o/harmless/harmless.md | head -5
done >"$O/jax-drains.txt" 2>&1
tar czf "$O/detail.tgz" -C /tmp/o . 2>/dev/null
grep -E "Overall|left:" /tmp/o/harmless.txt | head
cat "$O/jax-drains.txt" | cut -c1-260 | head -60
cat "$O/steps.txt"
