#!/bin/bash
# Planned device call for the next session (issue 18, entry p95 <= 10 ms over
# MPS and without): not run in session 29.  Where the freeze's 3 ms tail and
# the isolation's steady 1 ms go (notebook/h200-session-29/README.md, "Where
# the entry goes over MPS"): the proof's entry run (all siblings, 1 ms, one
# region per sample, 300 regions, settle=wait) twice, with krexd at
# log_level=debug (fidelity.py --full keeps its log), then entry_split.py on
# krexd's cost lines (fz_prepare/fz_start/fz_poll, isolate_us, iso_cpuset,
# state_us) and the owner's side (--owner).  About 150 s with the build.
. notebook/gpu-call-prologue.sh
for r in 1 2; do
	st "entry$r"
	timeout 60 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir . \
		--out "/tmp/o/entry$r" --sizes 1 --samples 1:300 --mixes all --sample-mixes all \
		--modes krex --regions sample --budget-s 40 --krexd-opt settle=wait \
		--krexd-opt log_level=debug >"$O/entry$r.txt" 2>&1
	for f in /tmp/o/entry$r/*.krexd.log; do
		[ -f "$f" ] || continue
		timeout 30 python3 test/perf/entry_split.py "$f" >"$O/entry$r-split.txt" 2>&1
		c=$(ls /tmp/o/entry$r/raw/*_sample.certs 2>/dev/null | head -1)
		[ -n "$c" ] && timeout 30 python3 test/perf/entry_split.py --owner "$c" "$f" \
			>"$O/entry$r-owner.txt" 2>&1
	done
	cp /tmp/o/entry$r/fidelity-entry.md "$O/entry$r-fidelity-entry.md" 2>/dev/null
done
st done
cat "$O"/entry*-split.txt "$O"/entry*-fidelity-entry.md 2>/dev/null | head -120
cat "$O/steps.txt"
