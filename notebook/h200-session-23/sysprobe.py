#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sysprobe.py PERIOD_MS SECONDS OUT - what the machine does while a run
times kernels (issue 18, session 23: the stretch of slow samples late in a
0.1 ms batch region).  Every PERIOD_MS on CLOCK_MONOTONIC (time.monotonic(),
krex-victim --stamps' clock), kept in memory and written to OUT at the end
(SIGTERM or SECONDS):

  n T_MS SM_MHZ MEM_MHZ POWER_MW TEMP_C REASONS   GPU 0 through NVML
  c T_MS BUSY0 STEAL0 IRQ0 BUSY1 ...              each CPU's jiffies from
                                                  /proc/stat (busy = user +
                                                  nice + system; irq = irq +
                                                  softirq), cumulative

A notebook tool; run it pinned to a CPU the run leaves alone."""
import ctypes
import signal
import sys
import time


def nvml():
    try:
        nv = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None, None, None
    if nv.nvmlInit_v2() != 0:
        return None, None, None
    dev = ctypes.c_void_p()
    if nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) != 0:
        return None, None, None
    reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        nv.nvmlDeviceGetCurrentClocksThrottleReasons
    return nv, dev, reasons


def cpu_line(t):
    out = ["c", "%.3f" % t]
    with open("/proc/stat") as f:
        for ln in f:
            if not ln.startswith("cpu") or ln.startswith("cpu "):
                continue
            v = [int(x) for x in ln.split()[1:]]
            # user nice system idle iowait irq softirq steal
            out += [str(v[0] + v[1] + v[2]), str(v[7] if len(v) > 7 else 0), str(v[5] + v[6])]
    return " ".join(out)


def main():
    period = float(sys.argv[1]) / 1000.0
    secs = float(sys.argv[2])
    path = sys.argv[3]
    nv, dev, reasons = nvml()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    sm, mem, pw, tmp = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    why = ctypes.c_ulonglong()
    lines = []
    end = time.monotonic() + secs
    nxt = time.monotonic()
    while not stop and time.monotonic() < end:
        t = time.monotonic() * 1000.0
        if nv:
            nv.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(sm))  # NVML_CLOCK_SM
            nv.nvmlDeviceGetClockInfo(dev, 2, ctypes.byref(mem))  # NVML_CLOCK_MEM
            nv.nvmlDeviceGetPowerUsage(dev, ctypes.byref(pw))
            nv.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(tmp))
            reasons(dev, ctypes.byref(why))
            lines.append("n %.3f %u %u %u %u %#x" % (t, sm.value, mem.value, pw.value, tmp.value,
                                                     why.value))
        lines.append(cpu_line(t))
        nxt += period
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("sysprobe: %d lines to %s" % (len(lines), path), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
