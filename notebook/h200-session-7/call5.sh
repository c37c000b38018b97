#!/bin/bash
# Device call 5 of session 7: a diagnostic, not a proof (issue 20).  harmless
# x2 with every gate at KREX_LOG=debug and krexd at log_level=debug: for the
# long drains (44-92 ms in calls 1 and 4, JAX's "Delay kernel timed out"),
# which sibling was late (krexd's per-ack line), and the late gate's own
# line, with its threads' states once stalled 50 ms (gate_stall_snapshot).
set -u
O=${OUT:?}
mkdir -p /tmp/o
t0=$(date +%s)
B=$(timeout 90 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
echo "build $(($(date +%s) - t0)) s"
KREX_LOG=debug KREX_HARMLESS_LIMIT=150 timeout 160 bash test/gpu/harmless.sh --builddir "$B" --out /tmp/o/harmless \
	--seconds 20 --runs 2 --krexd-opt log_level=debug >/tmp/o/harmless.txt 2>&1
echo "harmless rc=$? at $(($(date +%s) - t0)) s"
for r in /tmp/o/harmless/run*/krex; do
	echo "== $r"
	grep -h "Delay kernel" "$r"/jax.err | cut -c1-80
	# acks that took 30 ms or more, by sibling
	grep -h "acknowledged the drain after" "$r"/own.krexd.log |
		awk '{ for (i = 1; i <= NF; i++) if ($i == "after") { us = $(i + 1); if (us >= 30000) print } }' | cut -c1-200 | head -12
	for f in "$r"/*.err; do
		n=$(grep -c "no progress for" "$f")
		[ "$n" -gt 0 ] && { echo "-- $(basename "$f"): $n stall snapshots"; grep -h "no progress for" "$f" | cut -c1-900 | head -4; }
		grep -h "drain: [0-9]* us" "$f" | awk '{ us = $4; if (us + 0 >= 30000) print }' | cut -c1-220 | head -4
	done
done
tar czf "$O/detail.tgz" -C /tmp/o harmless 2>/dev/null
ls -la "$O"
