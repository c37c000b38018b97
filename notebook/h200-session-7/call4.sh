#!/bin/bash
# Device call 4 of session 7 (issues 18 and 20), after the telemetry fix
# (one cgroup read per GPU process) and the stalled-drain thread snapshot:
#  - entry, all mix, three runs (issue 18's goal: p95 <= 10 ms in 3 of 3),
#    krexd at log_level=debug: per-sibling acks and the telemetry time at start
#  - harmless x3 (issue 20's goal: PASS 3 of 3); the triton sibling now notes
#    how a failed `ptxas --version` probe failed
set -u
O=${OUT:?}
mkdir -p /tmp/o
t0=$(date +%s)
st() { echo "== $(($(date +%s) - t0)) s: $*" | tee -a "$O/steps.txt"; }
st build
B=$(timeout 90 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
timeout 60 /usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-o /tmp/o/fma.fatbin test/workloads/fma.cu >/tmp/o/nvcc.log 2>&1
for run in 1 2 3; do
	st "entry-all run $run"
	KREX_WL_MODULE=/tmp/o/fma.fatbin timeout -k 5 80 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir . \
		--out /tmp/o/entry$run --sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex --regions sample \
		--budget-s 60 --krexd-opt settle=wait --krexd-opt log_level=debug >/tmp/o/entry$run.txt 2>&1
	echo "rc=$?" >>/tmp/o/entry$run.txt
	L=$(ls /tmp/o/entry$run/*all*.krexd.log 2>/dev/null | head -1)
	python3 - "$L" >"$O/acks$run.txt" 2>&1 <<'PY'
import re, sys
regs, w, d, tel = {}, {}, {}, []
for ln in open(sys.argv[1], errors="replace"):
    m = re.search(r"participant (\d+): pid (\d+) .*?'([^']*)'", ln)
    if m:
        regs[m.group(1)] = "pid %s %s" % (m.group(2), m.group(3))
    m = re.search(r"participant (\d+) \(pid \d+\) acknowledged the drain after (\d+) us, its own drain (\d+) us", ln)
    if m:
        w.setdefault(m.group(1), []).append(int(m.group(2)))
        d.setdefault(m.group(1), []).append(int(m.group(3)))
    m = re.search(r"telemetry at start (\d+) us", ln)
    if m:
        tel.append(int(m.group(1)))
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))]
for p in sorted(w, key=int):
    print("participant %s (%s): %d acks; krexd's wait p50 %d p95 %d max %d us; own drain p50 %d p95 %d max %d us"
          % (p, regs.get(p, "?"), len(w[p]), q(w[p], .5), q(w[p], .95), max(w[p]), q(d[p], .5), q(d[p], .95), max(d[p])))
if tel:
    print("telemetry at start: %d regions, p50 %d p95 %d max %d us" % (len(tel), q(tel, .5), q(tel, .95), max(tel)))
PY
done
st harmless
KREX_HARMLESS_LIMIT=285 timeout 295 bash test/gpu/harmless.sh --builddir "$B" --out /tmp/o/harmless --seconds 20 --runs 3 >/tmp/o/harmless.txt 2>&1
echo "rc=$?" >>/tmp/o/harmless.txt
st done
cp /tmp/o/harmless.txt "$O/harmless.md" 2>/dev/null
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' . 2>/dev/null
for run in 1 2 3; do
	echo "---- entry $run"; grep -A4 "Where region entry" /tmp/o/entry$run.txt | tail -1 | cut -c1-300; tail -1 /tmp/o/entry$run.txt
	cat "$O/acks$run.txt"
done
echo "---- harmless"; grep -E "^\| (jax|triton)|Goal|new under|left:|tool probe|Overall|budget" /tmp/o/harmless.txt | cut -c1-300 | head -30
cat "$O/steps.txt"
