#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""python_dobench_job.py - the measuring job of python-dobench.sh: for each
timer krex.do_bench has here (triton, torch, cuda-driver), one do_bench of a
4096x4096 fp16 matmul (PyTorch) inside one region; one JSON line per timer
(the Bench: figures, per-call times, certificate) to --out, and a summary
line per timer on stdout.  KREX_GPU_MOCK=1: the mock libcuda's 2 ms kernel
instead (test/python/krextest.py), cuda-driver timer only; timings mean
nothing."""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
MOCK = os.environ.get("KREX_GPU_MOCK") == "1"


def workload(size):
    if MOCK:
        sys.path.insert(0, os.path.join(HERE, "..", "python"))
        from krextest import mock_kernel
        return mock_kernel(2000), ("cuda-driver",)
    import torch
    x = torch.randn(size, size, device="cuda", dtype=torch.float16)
    y = torch.randn(size, size, device="cuda", dtype=torch.float16)
    return (lambda: x @ y), ("triton", "torch", "cuda-driver")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--rep", type=float, default=200)
    a = ap.parse_args()
    import krex
    print("krex: %s from %s (%s)" % (krex.__file__, *krex.library()))
    fn, timers = workload(a.size)
    rc = 0
    with open(a.out, "a") as out:
        for t in timers:
            try:
                b = krex.do_bench(fn, warmup=25, rep=a.rep, timer=t, timeout_ms=60000)
            except (krex.BenchError, krex.KrexError) as e:
                print("%s %s: ERROR %s" % (a.label, t, e))
                out.write(json.dumps({"label": a.label, "timer": t, "error": str(e)}) + "\n")
                rc = 1
                continue
            d = dict(b.as_dict(), label=a.label)
            out.write(json.dumps(d) + "\n")
            print("%s %s: n=%d median=%.4f p95=%.4f ms value=%s outcome=%s siblings=%s "
                  "drain_us=%s note=%s" % (a.label, b.timer, b.n, b.median or 0, b.p95 or 0,
                                           b.value if not isinstance(b.value, list) else "list",
                                           b.cert.get("outcome_name"), b.cert.get("siblings"),
                                           b.cert.get("drain_us"), b.cert.get("note")))
    return rc


if __name__ == "__main__":
    sys.exit(main())
