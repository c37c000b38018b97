#!/bin/bash
# Device call 2 of session 31 (issue 18, regions are cheap): what a freeze
# at scale waits for.  At 16-32 agent sessions the freeze took 13-19 ms a
# region (sessions 24-28) against 2-3 ms at p95 beside the proof's four
# siblings.  krexd's new debug line (b32658b, "freeze laggard") says, for a
# freeze still going at 5 ms, where each sibling not yet frozen has its
# tasks: runnable (waiting for a CPU), in the driver (D), asleep.
# agents.py KREX at 32 sessions without MPS, then over an MPS control daemon
# of the call's own (52 s windows, krexd at debug: --full's drain log);
# entry_split.py on each krexd log.  About 330 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; nproc; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
agents() { # NAME LIMIT
	timeout -k 10 "$2" python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
		--out "/tmp/o/$1" --n 32 --modes krex --scale 0.2 --window 52 --warm-s 8 \
		--budget-s $(($2 - 20)) >"/tmp/o/$1.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$1.txt"
	{
		tables "/tmp/o/$1" agents.md agents-breakdown.md agents-commands.md
		echo "==== entry_split.py"
		timeout 60 python3 test/perf/entry_split.py /tmp/o/$1/*.krexd.log
		tail -3 "/tmp/o/$1.txt"
	} >"$O/call2-$1.md" 2>&1
	gzip -c /tmp/o/$1/*.krexd.log >"$O/call2-$1-krexd.log.gz" 2>/dev/null
}
st "agents krex 32 without MPS"
agents nomps 150
mps_start
st "agents krex 32 over MPS"
agents mps 150
mps_stop
st done
cut -c1-300 "$O"/call2-*.md
cat "$O/steps.txt"
