#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""nvml-calls.py - how long each NVML call krexd makes takes on this GPU.

krexd makes its NVML calls (common/nvmlapi.c) on its event loop, except the
process list and the nominal clocks (krexd/gpuprocs.c).  This times each of
them, REPS times in a row (interleaved, one of each per round), and prints
p50 / p95 / max in microseconds, so that a driver that answers one of them
slowly shows.  Reads only; no clock, power or mode is set.

    nvml-calls.py [--gpu 0] [--reps 200] [--label TEXT]

With KREX_MOCK_NVML set (the mock NVML, a TEST DOUBLE) it times the mock.
Exit 0 when every call could be timed, 2 when NVML did not load.
"""
import argparse
import ctypes
import time

import perflib


class Violation(ctypes.Structure):
    _fields_ = [("reference_time", ctypes.c_ulonglong), ("violation_time", ctypes.c_ulonglong)]


class ProcInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong), ("gi", ctypes.c_uint),
                ("ci", ctypes.c_uint)]


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    nv, dev = perflib.nvml_open(a.gpu)
    if not nv:
        print("nvml-calls: %s" % dev)
        return 2
    u = ctypes.c_uint()
    ull = ctypes.c_ulonglong()
    viol = Violation()
    procs = (ProcInfo * 256)()
    n = ctypes.c_uint()

    def plist():
        n.value = 256
        return nv.nvmlDeviceGetComputeRunningProcesses_v3(dev, ctypes.byref(n), procs)

    calls = [
        ("ClockInfo (SM)", "sample, settle", lambda: nv.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(u))),
        ("CurrentClocksEventReasons", "sample, settle",
         lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(dev, ctypes.byref(ull))),
        ("MaxClockInfo (SM)", "nominal", lambda: nv.nvmlDeviceGetMaxClockInfo(dev, 1, ctypes.byref(u))),
        ("ApplicationsClock (SM)", "nominal",
         lambda: nv.nvmlDeviceGetApplicationsClock(dev, 1, ctypes.byref(u))),
        ("Temperature", "grant, end", lambda: nv.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(u))),
        ("ViolationStatus (power)", "grant, end",
         lambda: nv.nvmlDeviceGetViolationStatus(dev, 0, ctypes.byref(viol))),
        ("ComputeRunningProcesses_v3", "start (thread)", plist),
    ]
    times = {c[0]: [] for c in calls}
    fails = {c[0]: 0 for c in calls}
    for _ in range(a.reps):
        for name, _, fn in calls:
            t0 = time.perf_counter_ns()
            rc = fn()
            times[name].append((time.perf_counter_ns() - t0) / 1000)
            fails[name] += rc != 0
    print("NVML calls on GPU %d%s, %d rounds (us)" % (a.gpu, " (%s)" % a.label if a.label else "", a.reps))
    print("%-28s %-15s %9s %9s %9s %6s" % ("call", "krexd uses it", "p50", "p95", "max", "failed"))
    for name, use, _ in calls:
        v = times[name]
        print("%-28s %-15s %9.1f %9.1f %9.1f %6d" % (name, use, pct(v, 0.5), pct(v, 0.95), max(v), fails[name]))
    print("processes listed at the end: %d" % n.value)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
