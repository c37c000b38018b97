#!/bin/bash
# Device call 5 of session 11 (issue 18): whose is the entry's tail?  Two
# entry runs (fidelity.py, every sibling, one region per sample, 1 ms and
# 0.1 ms, krexd at its default: nice -20 there), each region's
# krex_region_begin as the owner saw it (krex-victim --certs: call and
# return, CLOCK_MONOTONIC) set against krexd's log of the same region
# (conn_ns, enq_ns, close_ns, grant_ns): test/perf/entry_split.py --owner, now split at krexd's accept of the connection.
. notebook/gpu-call-prologue.sh
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } >"$O/env.txt" 2>&1
for size in 1 0.1; do
	st "entry $size"
	timeout -k 5 60 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" \
		--out "/tmp/o/e$size" --sizes "$size" --samples "$size:400" --mixes all --sample-mixes all \
		--modes krex --regions sample --budget-s 45 --krexd-opt settle=wait >"/tmp/o/e$size.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/e$size.txt"
	{
		echo "==== $size ms"
		tail -n +5 "/tmp/o/e$size/fidelity-entry.md" | head -1 | cut -c1-220
		python3 test/perf/entry_split.py --owner /tmp/o/e$size/raw/krex_all_*_sample.certs \
			"/tmp/o/e$size/krex.all.krexd.log" 2>&1
		grep -ho "scheduling [a-z -]*[0-9]*" /tmp/o/e$size/*.krexd.log | head -1
	} >>"$O/owner.md"
done
st done
ls /tmp/o/e1/raw /tmp/o/e0.1/raw 2>&1 | head
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' e1 e0.1 2>/dev/null
cat "$O/owner.md"
cat "$O/steps.txt"
