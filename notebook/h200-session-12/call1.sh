#!/bin/bash
# Device call 1 of session 12 (issue 18): session 11's call 5 again, now
# that libregion keeps its connection to krexd open between regions (the
# request arrives whole: no connect that wakes krexd first).  The owner's
# krex_region_begin against krexd's cost line (entry_split.py --owner), and
# the entry p95 (fidelity.py, every sibling, one region per sample): 1 ms
# and 0.1 ms at krexd's default (sched_priority = 0: nice 0) and at
# sched_priority = 1 (nice -20 there).
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
		python3 test/perf/entry_split.py "/tmp/o/$name/krex.all.krexd.log" 2>&1 | head -8
		grep -ho "scheduling [a-z -]*[0-9]*" /tmp/o/$name/*.krexd.log | head -1
		echo "connections accepted: $(grep -c 'connection [0-9]* from pid' /tmp/o/$name/krex.all.krexd.log)"
	} >>"$O/owner.md"
}
run e1-nice0 1
run e1-nice20 1 --krexd-opt sched_priority=1
run e01-nice0 0.1
run e01-nice20 0.1 --krexd-opt sched_priority=1
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' e1-nice0 e1-nice20 e01-nice0 e01-nice20 2>/dev/null
cat "$O/owner.md"
cat "$O/steps.txt"
