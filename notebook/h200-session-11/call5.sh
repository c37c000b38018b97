#!/bin/bash
# Device call 5 of session 11 (issue 18): call 4 again, with krexd's cost
# line naming the accept of the region's connection (conn_ns), so that
# entry_split.py --owner splits the time before krexd queues a request into
# "call to accept" and "accept to queued".  Entry runs (fidelity.py, every
# sibling, one region per sample): 1 ms at krexd's default (sched_priority
# = 0: nice 0), 1 ms and 0.1 ms at sched_priority = 1 (nice -20 there).
. notebook/gpu-call-prologue.sh
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } >"$O/env.txt" 2>&1
# run NAME SIZE [krexd-opt...]
run() {
	local name=$1 size=$2
	shift 2
	st "entry $name"
	timeout -k 5 60 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" \
		--out "/tmp/o/$name" --sizes "$size" --samples "$size:400" --mixes all --sample-mixes all \
		--modes krex --regions sample --budget-s 45 --krexd-opt settle=wait "$@" >"/tmp/o/$name.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$name.txt"
	{
		echo "==== $name ($size ms $*)"
		tail -n +5 "/tmp/o/$name/fidelity-entry.md" | head -1 | cut -c1-220
		python3 test/perf/entry_split.py --owner /tmp/o/$name/raw/krex_all_*_sample.certs \
			"/tmp/o/$name/krex.all.krexd.log" 2>&1
		grep -ho "scheduling [a-z -]*[0-9]*" /tmp/o/$name/*.krexd.log | head -1
	} >>"$O/owner.md"
}
run e1-nice0 1
run e1-nice20 1 --krexd-opt sched_priority=1
run e01-nice20 0.1 --krexd-opt sched_priority=1
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' e1-nice0 e1-nice20 e01-nice20 2>/dev/null
cat "$O/owner.md"
cat "$O/steps.txt"
