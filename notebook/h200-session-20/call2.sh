#!/bin/bash
# Device call 2 of session 20 (issue 18): one region per sample at 0.1 and
# 1 ms, every sibling, is timed +0.5-0.7 % slower in GPU event time than
# alone (p95).  The kernel (test/workloads/fma.cu) is pure FMA: its time
# follows the SM clock, and krexd's settle grants within clock_tolerance (1 %)
# of the nominal (1980 MHz; 1965 is 0.76 % under).  Each sample paired with
# its region's certificate clocks (krex-victim --certs, clocksplit.py), with
# nvidia-smi's SM clock every 100 ms beside.  fidelity.py, modes alone and
# krex, one region per sample, 2000 samples each, settle=wait (and
# fidelity.py's own alone again at the end).
. notebook/gpu-call-prologue.sh
N=notebook/h200-session-20
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv,noheader -lms 100 >/tmp/o/smi.csv 2>&1 &
smi=$!
st "fidelity per sample"
timeout -k 10 200 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/fid \
	--sizes 0.1,1 --samples 0.1:2000,1:2000 --mixes all --sample-mixes all --modes alone,krex \
	--regions sample --budget-s 170 --krexd-opt settle=wait >/tmp/o/fid.txt 2>&1
echo "rc=$?" >>/tmp/o/fid.txt
kill $smi
st done
python3 $N/clocksplit.py /tmp/o/fid >"$O/clocksplit.txt" 2>&1
awk -F', ' '{print $2}' /tmp/o/smi.csv | sort | uniq -c | sort -rn | head -12 >"$O/smi-clocks.txt"
cat /tmp/o/fid/fidelity.md /tmp/o/fid/*entry*.md >"$O/fidelity.md" 2>/dev/null
tail -3 /tmp/o/fid.txt >>"$O/fidelity.md"
tar czf "$O/call2.tgz" -C /tmp/o fid smi.csv fid.txt 2>/dev/null
cat "$O/clocksplit.txt" "$O/smi-clocks.txt" "$O/fidelity.md" "$O/steps.txt"
