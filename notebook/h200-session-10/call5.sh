#!/bin/bash
# Device call 5 of session 10 (issue 18): does krexd's nice -20 (the
# fallback of sched_priority where real-time is refused, as here) help or
# hurt a region's entry with every sibling?  Call 4's proof measured entry
# p95 11.6-13.9 ms at nice -20, call 3's runs 9.0-10.9 at nice 0, in
# different calls.  Here side by side, interleaved: the all mix, 1 ms, one
# region per sample, three runs each of the default and sched_priority=0.
. notebook/gpu-call-prologue.sh
timeout 60 /usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-o /tmp/o/fma.fatbin test/workloads/fma.cu >/tmp/o/nvcc.log 2>&1
entry() { # NAME [fidelity.py options...]
	local n=$1
	shift
	st "entry $n"
	KREX_WL_MODULE=/tmp/o/fma.fatbin timeout -k 5 40 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir . \
		--out /tmp/o/entry-$n --sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex --regions sample \
		--budget-s 30 --krexd-opt settle=wait --krexd-opt log_level=debug "$@" >/tmp/o/entry-$n.txt 2>&1
	echo "rc=$?" >>/tmp/o/entry-$n.txt
}
for r in 1 2 3; do
	entry nice$r
	entry normal$r --krexd-opt sched_priority=0
done
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' . 2>/dev/null
for n in nice1 normal1 nice2 normal2 nice3 normal3; do
	echo "---- $n: $(grep -ho 'scheduling [a-z -]*[0-9]*' /tmp/o/entry-$n/*all*.krexd.log | head -1)"
	grep -A4 "Where region entry" /tmp/o/entry-$n.txt | tail -1 | cut -c1-300; tail -1 /tmp/o/entry-$n.txt
done
cat "$O/steps.txt"
