#!/bin/bash
# Device call 1 of session 23 (issue 18): where the stretch of slow samples
# late in a 0.1 ms batch region comes from (session 22's proofs: events +1.7
# us, host +1.0 us a sample, from 24-29 ms after the region's start to its
# end, in 2 of 6 regions).  fidelity.py as the proof runs it (every sibling,
# settle=wait, alone and krex interleaved) but 0.1 ms batch only, 8 rounds of
# 334 samples (35 ms regions, as the proof's), krex-victim --host-split
# --stamps; beside it sysprobe.py (NVML clocks, power, temperature, reasons
# and each CPU's /proc/stat every 2 ms) on CPU 15.  stretch.py reads both.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
nproc >"$O/cpus.txt"; lscpu >>"$O/cpus.txt" 2>&1
st fidelity
taskset -c 15 python3 notebook/h200-session-23/sysprobe.py 2 290 /tmp/o/probe.txt >/tmp/o/probe.out 2>&1 &
sp=$!
timeout -k 10 280 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/fid \
	--sizes 0.1 --samples 0.1:2672 --mixes all --sample-mixes all --modes alone,krex \
	--regions batch --rounds 8 --budget-s 220 --krexd-opt settle=wait \
	--victim-args "--host-split --stamps" >/tmp/o/fid.txt 2>&1
echo "rc=$?" >>/tmp/o/fid.txt
kill -TERM $sp 2>/dev/null
for i in $(seq 50); do kill -0 $sp 2>/dev/null || break; sleep 0.2; done
st analysis
timeout 60 python3 notebook/h200-session-23/stretch.py /tmp/o/fid/raw /tmp/o/probe.txt 0.1 >"$O/stretch.txt" 2>&1
cp /tmp/o/fid/fidelity.md /tmp/o/fid/fidelity-rounds.md "$O/" 2>/dev/null
tar czf "$O/call1.tgz" -C /tmp/o fid.txt probe.txt probe.out fid 2>/dev/null
st done
tail -4 /tmp/o/fid.txt; cat /tmp/o/probe.out; cat "$O/fidelity-rounds.md"; grep -A4 "^## bins" "$O/stretch.txt"; cat "$O/steps.txt"
