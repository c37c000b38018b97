#!/bin/bash
# Device call 1 of session 11 (issue 18), the tree of 9bd8a1b + entry_split's
# process-list lines: NVML's process list at a region's start on krexd's
# thread (the default) against on its loop (KREXD_PROCS_INLINE=1, as before),
# side by side in one call:
#  - agents.py, KREX at 24 and 32 sessions, thread then inline, then both
#    again at 32; the command lock at 24 and 32 once;
#  - entry: fidelity.py, 1 ms, one region per sample, every sibling, thread
#    then inline;
# each krexd's debug log split by test/perf/entry_split.py (phases, krexd's
# own work, the process list's parts).
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
AG=(python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --scale 0.2 --window 24 --warm-s 6 --budget-s 90)
# ag NAME N MODES [ENV...]
ag() {
	local name=$1 n=$2 modes=$3
	shift 3
	st "agents $name ($n, $modes${*:+, $*})"
	env "$@" timeout -k 5 100 "${AG[@]}" --out "/tmp/o/$name" --n "$n" --modes "$modes" >"/tmp/o/$name.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$name.txt"
}
# entry NAME [ENV...]
entry() {
	local name=$1
	shift
	st "entry $name${*:+ ($*)}"
	env "$@" timeout -k 5 55 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" \
		--out "/tmp/o/$name" --sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex \
		--regions sample --budget-s 40 --krexd-opt settle=wait >"/tmp/o/$name.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$name.txt"
}
ag thread-a 24,32 krex
ag inline-a 24,32 krex KREXD_PROCS_INLINE=1
entry entry-thread
entry entry-inline KREXD_PROCS_INLINE=1
ag thread-b 32 krex
ag inline-b 32 krex KREXD_PROCS_INLINE=1
ag cmd 24,32 cmd
st done
for r in thread-a inline-a thread-b inline-b cmd entry-thread entry-inline; do
	{
		echo "==== $r"
		cat "/tmp/o/$r.txt" | grep -E "^rc=|results:"
		for f in agents.md agents-breakdown.md fidelity-entry.md; do
			[ -f "/tmp/o/$r/$f" ] && { echo "-- $f"; cat "/tmp/o/$r/$f"; }
		done
		for l in /tmp/o/$r/*.krexd.log; do
			[ -f "$l" ] || continue
			echo "-- entry_split $(basename "$l")"
			python3 test/perf/entry_split.py "$l" 2>&1 | grep -vE "^(iso_|fz_|undo|thaw|state_)"
		done
	} >>"$O/summary.md"
done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' . 2>/dev/null
ls -la "$O/detail.tgz"
grep -E "^====|^\| (24|32) |process list \(NVML\)|telemetry at start|in after the close|certificate waited|^entry |^wait |^drain |^freeze " "$O/summary.md" | cut -c1-200 | head -90
cat "$O/steps.txt"
