#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""region_job.py - run by python_region.sh under `krex run` (a private krexd,
the gate, the mock libcuda): one region through krex.region(), then one
krex.do_bench() of a 2 ms mock kernel; prints key=value lines."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # krextest

import krex  # noqa: E402
from krextest import mock_kernel  # noqa: E402

fn = mock_kernel(2000)
held = [krex.held()]
with krex.region(timeout_ms=20000) as cert:
    held.append(krex.held())
    fn()
held.append(krex.held())
print("outcome=%s" % cert["outcome_name"])
print("held=%s" % ",".join("1" if h else "0" for h in held))
for k in ("region_id", "siblings", "drained", "frozen", "gpus", "note", "ungated", "ungated_gpu",
          "ungated_who"):
    print("%s=%s" % (k, cert[k]))
if fn is None:
    print("bench=no mock")
    sys.exit(0)
b = krex.do_bench(fn, warmup=10, rep=40, timer="cuda-driver", timeout_ms=20000)
print("bench_timer=%s" % b.timer)
print("bench_n=%d" % b.n)
print("bench_min=%.3f" % b.min)
print("bench_median=%.3f" % b.median)
print("bench_outcome=%s" % b.cert["outcome_name"])
print("bench_region_id=%s" % b.cert["region_id"])
print("bench_siblings=%s" % b.cert["siblings"])
