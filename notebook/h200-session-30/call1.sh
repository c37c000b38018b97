#!/bin/bash
# Device call 1 of session 30 (issue 18, entry p95 <= 10 ms over MPS): the
# freeze poll schedule (krexd.conf freeze_poll, new in this session: every
# 250 us in a freeze's first 10 ms, where it doubled from 100 us before).
# Over an MPS control daemon of the call's own:
#   1. side by side, krexd at log_level=debug: the proof's entry run (all
#      siblings, 1 ms, one region per sample, 300 regions, settle=wait) with
#      freeze_poll=0 (the old doubling) and then with the default;
#      entry_split.py on each krexd log (the last poll round: the timer or a
#      cgroup.events change, and its gap);
#   2. the proof's fidelity part (KREX_PROOF_PART=fidelity: per sample and
#      batch at 0.1 / 1 / 10 ms with alone-gapped, the entry three times),
#      which judges the entry goal over MPS.
# About 460 s with the build.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
mps_start
for fp in 0 250us; do
	st "entry freeze_poll=$fp"
	d=/tmp/o/entry-fp$fp
	timeout 60 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir . \
		--out "$d" --sizes 1 --samples 1:300 --mixes all --sample-mixes all \
		--modes krex --regions sample --budget-s 40 --krexd-opt settle=wait \
		--krexd-opt log_level=debug --krexd-opt freeze_poll=$fp >"$O/entry-fp$fp.txt" 2>&1
	for f in "$d"/*.krexd.log; do
		[ -f "$f" ] || continue
		timeout 30 python3 test/perf/entry_split.py "$f" >"$O/entry-fp$fp-split.txt" 2>&1
		gzip -c "$f" >"$O/entry-fp$fp-krexd.log.gz"
	done
	cp "$d/fidelity-entry.md" "$O/entry-fp$fp-fidelity-entry.md" 2>/dev/null
done
export KREX_PROOF_PART=fidelity
CALL=call1 PROOF_LIMIT=360 PROOF_MPS=0
. notebook/gpu-call-proof.sh
mps_stop
for fp in 0 250us; do
	echo "==== freeze_poll=$fp"
	cat "$O/entry-fp$fp-split.txt" "$O/entry-fp$fp-fidelity-entry.md" 2>/dev/null | head -60
done
cat "$O/steps.txt"
