#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# python-dobench.sh - krex.do_bench (python/krex) on a real GPU, in one call
# (doc/python.md "do_bench on a GPU").
#
#	OUT=DIR bash test/gpu/python-dobench.sh [BUILDDIR]   (source tree's root, as root)
#
# BUILDDIR as settle.sh (default $KREX_BUILDDIR, else the source tree; built
# if it has no krexd).  Two runs of python_dobench_job.py, each a do_bench of
# a 4096x4096 fp16 matmul with every timer there is (triton, torch,
# cuda-driver), each inside one region (Triton flushes L2 before each call, the
# others do not):
#   alone  no krexd, no sibling (KREX_UNPROTECTED=1: certificates say unprotected)
#   krex   krexd, and a power-hungry torch sibling under `krex run`
# Writes dobench.jsonl (every Bench: times, figures, certificate) and the logs
# under $OUT (default ./dobench-out); prints one line per run and timer, then
# PASS/FAIL lines: every timer gave figures, the krex run's certificates are
# from krexd (region id > 0) and name the sibling, the timers agree on the
# alone median within 25 %.  Under ~3 minutes; reads clocks, sets none.
# KREX_GPU_MOCK=1: a dry run on the mock CUDA driver (TEST DOUBLE), no GPU or
# torch, cuda-driver timer only: it checks the script; timings mean nothing.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/test/gpu/gpu-lib.sh"
gpu_out dobench-out
gpu_need_torch
gpu_build "${1:-${KREX_BUILDDIR:-$src}}" "$W" || { echo "FAIL: no build (see $W/*.log)"; exit 1; }
export KREX_GATE_LIB=$B/gate/.libs/libkrexgate.so
export KREX_LIBRARY=$B/libregion/.libs/libkrexregion.so
export KREX_SOCKET=$W/run/krexd.sock
export PYTHONDONTWRITEBYTECODE=1
JOB="python3 $src/test/gpu/python_dobench_job.py"
if [ "$MOCK" = 1 ]; then
	echo "MOCK RUN: mock CUDA driver, no GPU; the timings mean nothing"
	export KREX_GPU_MOCK=1 KREX_MOCK_GPU=/krex-dobench-$$ KREX_GPUS=g0
	export LD_LIBRARY_PATH=$B/test/mock/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	HOG="$B/test/workloads/krex-hog 2000 --seconds 120"
	GPUS=g0
	FREEZER="-o freezer=signal"
else
	export KREX_GPUS=0
	HOG="python3 $src/test/gpu/settle_job.py hog --seconds 120"
	GPUS=0
	FREEZER=
fi
rm -f "$OUT/dobench.jsonl"

echo "build: $B"
KREX_UNPROTECTED=1 KREX_SOCKET=$W/none.sock timeout 150 $JOB --label alone \
	--out "$OUT/dobench.jsonl" >"$W/alone.log" 2>&1
rc_alone=$?
cat "$W/alone.log"

mkdir -p "$W/run"
# shellcheck disable=SC2086
krexd_up "$W/krexd.log" -v -r "$W/run" -o "gpus=$GPUS" $FREEZER -o "cgroup_subtree=krex-dobench-$$"
# shellcheck disable=SC2086
timeout 150 "$B/krex/krex" run -- $HOG >"$W/hog.log" 2>&1 &
PIDS=$!
sleep 3
timeout 150 "$B/krex/krex" run -- $JOB --label krex --out "$OUT/dobench.jsonl" >"$W/krex.log" 2>&1
rc_krex=$?
cat "$W/krex.log"
stop_all
krexd_down

python3 - "$OUT/dobench.jsonl" "$rc_alone" "$rc_krex" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ok = lambda c, d: print("%s: %s" % ("PASS" if c else "FAIL", d)) or c
good = [r for r in rows if "error" not in r]
res = [ok(sys.argv[2] == "0" and sys.argv[3] == "0", "both runs exit 0 (alone %s, krex %s)" % tuple(sys.argv[2:4]))]
res.append(ok(good and all(r["n"] > 0 and r["median"] > 0 for r in good) and len(good) == len(rows),
              "every timer gave figures (%s)" % ", ".join("%s/%s n=%s" % (r["label"], r.get("timer"), r.get("n")) for r in rows)))
kr = [r for r in good if r["label"] == "krex"]
res.append(ok(kr and all(r["cert"]["region_id"] > 0 and r["cert"]["siblings"] >= 1 for r in kr),
              "krex run: certificates from krexd naming the sibling (%s)" % ", ".join("%s %s siblings=%s" % (r["timer"], r["cert"]["outcome_name"], r["cert"]["siblings"]) for r in kr)))
al = {r["timer"]: r["median"] for r in good if r["label"] == "alone"}
if len(al) > 1:
    lo, hi = min(al.values()), max(al.values())
    res.append(ok(hi <= lo * 1.25, "timers agree on the alone median within 25 %% (%s)" % ", ".join("%s %.4f" % kv for kv in al.items())))
tr = [r for r in good if r["timer"] == "triton"]
if tr:
    res.append(ok(all(r["times"] for r in tr), "triton gave per-call times (Triton >= 3)"))
sys.exit(0 if all(res) else 1)
PY
