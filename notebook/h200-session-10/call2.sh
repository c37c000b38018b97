#!/bin/bash
# Device call 2 of session 10, a diagnostic (issues 20 and 18):
#  - entry, all mix, 1 ms, one region per sample: three runs with krexd's
#    run directory on /dev/shm (the perf drivers' new default, a tmpfs as
#    /run/krex is in production) and one in the output directory (before);
#    file system types of both;
#  - JAX alone beside the harmless owner, 2 runs of 30 s passes, every gate
#    tracing its queue waits, parks, passes and drains with the wall clock
#    (KREX_GATE_TRACE), krexd at debug: for each "Delay kernel timed out"
#    of XLA, what JAX's gate did in the 300 ms before it.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; df -T /tmp /dev/shm; } >"$O/env.txt" 2>&1
timeout 60 /usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-o /tmp/o/fma.fatbin test/workloads/fma.cu >/tmp/o/nvcc.log 2>&1
entry() { # NAME [env...]
	local n=$1
	shift
	st "entry $n"
	env "$@" KREX_WL_MODULE=/tmp/o/fma.fatbin timeout -k 5 70 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir . \
		--out /tmp/o/entry-$n --sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex --regions sample \
		--budget-s 55 --krexd-opt settle=wait --krexd-opt log_level=debug >/tmp/o/entry-$n.txt 2>&1
	echo "rc=$?" >>/tmp/o/entry-$n.txt
}
mkdir -p /tmp/o/rd
entry shm1
entry disk KREX_PERF_RUNDIR=/tmp/o/rd
entry shm2
entry shm3
st "harmless jax, traced"
mkdir -p /tmp/o/trace
KREX_GATE_TRACE=/tmp/o/trace KREX_HARMLESS_LIMIT=190 timeout 200 bash test/gpu/harmless.sh --builddir "$B" \
	--out /tmp/o/harmless --seconds 30 --runs 2 --only jax --krexd-opt log_level=debug >/tmp/o/harmless.txt 2>&1
echo "rc=$?" >>/tmp/o/harmless.txt
st done
cp /tmp/o/harmless.txt "$O/harmless.md" 2>/dev/null
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude=rd . 2>/dev/null
cat "$O/env.txt"
for n in shm1 disk shm2 shm3; do
	echo "---- entry $n"; grep -A4 "Where region entry" /tmp/o/entry-$n.txt | tail -1 | cut -c1-300; tail -1 /tmp/o/entry-$n.txt
	python3 - /tmp/o/entry-$n/*all*.krexd.log <<'PY'
import re, sys
rows = []
for l in open(sys.argv[1], errors="replace"):
    m = re.search(r"cost siblings=\d+ (.*)", l)
    if m:
        rows.append({k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())})
def q(k, p):
    v = sorted(r[k] for r in rows)
    return v[min(len(v) - 1, int(len(v) * p))] if v else -1
print("krexd: %d regions; " % len(rows) + " ".join("%s p50 %d p95 %d" % (k, q(k, .5), q(k, .95))
      for k in ("entry_us", "state_us", "state_writes", "exit_us")))
PY
done
echo "---- harmless"
grep -E "^\| jax|Goal|Overall" /tmp/o/harmless.txt | cut -c1-300
echo "---- XLA timeouts and JAX's gate in the 300 ms before each"
python3 - <<'PY'
import glob, re, datetime, os
for err in sorted(glob.glob("/tmp/o/harmless/run*/krex/jax.err")):
    d = os.path.dirname(err)
    hits = []
    for l in open(err, errors="replace"):
        m = re.match(r"W(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)\s+(\d+) cuda_timer", l)
        if m and "Delay kernel timed out" in l:
            hits.append(m)
    print("%s: %d timeouts" % (err, len(hits)))
    if not hits:
        continue
    trace = []
    for f in glob.glob("/tmp/o/trace/trace.*"):
        pid = f.rsplit(".", 1)[1]
        for l in open(f, errors="replace"):
            p = l.split(None, 2)
            if len(p) == 3:
                trace.append((float(p[0]), pid, p[1], p[2].rstrip()))
    trace.sort()
    year = datetime.datetime.utcnow().year
    for m in hits:
        mo, dd, hh, mi, ss, us, tid = m.groups()
        t = datetime.datetime(year, int(mo), int(dd), int(hh), int(mi), int(ss), int(us[:6].ljust(6, "0")),
                              tzinfo=datetime.timezone.utc).timestamp()
        print("== timeout at %.6f (XLA thread %s)" % (t, tid))
        for (ts, pid, ttid, msg) in trace:
            if t - 0.3 <= ts <= t + 0.05:
                print("  %+8.1f ms pid %s tid %s %s" % ((ts - t) * 1000, pid, ttid, msg[:160]))
PY
echo "---- trace totals"
cat /tmp/o/trace/trace.* 2>/dev/null | awk '{ k = $3; if (k == "queue-wait") k = k " " $6; n[k]++ } END { for (k in n) print n[k], k }' | sort -rn | head
cat "$O/steps.txt"
