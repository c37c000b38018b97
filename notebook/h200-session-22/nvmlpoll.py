#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""nvmlpoll.py PERIOD_MS [SECONDS] - read GPU 0's SM clock and its clock event
reasons every PERIOD_MS, as krexd does during a held region (issue 18, session
22): does the read itself disturb a timed kernel?  Prints "nvmlpoll reads=N
p50_us=X max_us=Y" at the end (SIGTERM or SECONDS).  A notebook tool."""
import ctypes
import signal
import sys
import time


def main():
    period = float(sys.argv[1]) / 1000.0
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 3600.0
    try:
        nv = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as e:
        print("nvmlpoll: no NVML: %s" % e, flush=True)
        return 1
    if nv.nvmlInit_v2() != 0:
        print("nvmlpoll: nvmlInit failed", flush=True)
        return 1
    dev = ctypes.c_void_p()
    if nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) != 0:
        print("nvmlpoll: no GPU 0", flush=True)
        return 1
    reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        nv.nvmlDeviceGetCurrentClocksThrottleReasons
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    mhz = ctypes.c_uint()
    why = ctypes.c_ulonglong()
    took = []
    end = time.monotonic() + secs
    nxt = time.monotonic()
    while not stop and time.monotonic() < end:
        t0 = time.perf_counter()
        nv.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(mhz))  # NVML_CLOCK_SM
        reasons(dev, ctypes.byref(why))
        took.append((time.perf_counter() - t0) * 1e6)
        nxt += period
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
    took.sort()
    print("nvmlpoll reads=%d p50_us=%.1f max_us=%.1f" % (
        len(took), took[len(took) // 2] if took else 0, took[-1] if took else 0), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
