#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""wake-bench.py - how long a sleeping process waits for a CPU once woken,
beside busy loops on every core, at nice 0, at nice -20 (krexd's
fallback when real-time priority is refused), at nice -20 with a 0.1 ms slice
("slice": sched_attr's sched_runtime, Linux 6.12 on) and at SCHED_FIFO 1
where it is allowed: the scheduler's part of a region's entry, without
krexd or a GPU.

A waker writes its clock to a pipe every --period-ms; the sleeper, blocked
in read(), takes its clock when it runs and records the difference.  The
waker runs at the best priority this process may take.  Prints, per
setting, p50 / p95 / p99 / max in microseconds, with and without the busy
loops, and the kernel and its scheduler features where debugfs shows them.

    wake-bench.py [--wakes 300] [--period-ms 10] [--busy N]   (root for nice -20 / FIFO)
"""
import argparse
import os
import platform
import struct
import sys
import time


def busy(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    os._exit(0)


def set_slice(nice, slice_ns):
    """SCHED_OTHER at nice with a custom slice (sched_attr.sched_runtime,
    Linux 6.12 on): EEVDF gives a short slice an early deadline, so that it
    preempts at wakeup.  True when the kernel took it."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # struct sched_attr: size, policy, flags, nice, priority, runtime, deadline, period
    attr = struct.pack("IIQiIQQQ", 48, 0, 0, nice, 0, slice_ns, 0, 0)
    buf = ctypes.create_string_buffer(attr, 48)
    return libc.syscall(314, 0, buf, 0) == 0  # SYS_sched_setattr (x86_64)


def set_prio(kind):
    """kind: 'nice0', 'nice-20', 'slice', 'fifo1'; returns the setting taken or None."""
    try:
        if kind == "slice":
            return kind if platform.machine() == "x86_64" and set_slice(-20, 100000) else None
        if kind == "fifo1":
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        else:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            os.setpriority(os.PRIO_PROCESS, 0, 0 if kind == "nice0" else -20)
        return kind
    except (PermissionError, OSError):
        return None


def run(kind, wakes, period, nbusy, waker_kind):
    r, w = os.pipe()
    rr, rw = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.close(rr)
        ok = set_prio(kind)
        os.write(rw, b"1" if ok else b"0")
        lat = []
        for _ in range(wakes):
            b = os.read(r, 8)
            if len(b) < 8:
                break
            lat.append(time.monotonic_ns() - struct.unpack("q", b)[0])
        os.write(rw, struct.pack("%dq" % len(lat), *lat))
        os._exit(0)
    os.close(r)
    os.close(rw)
    took = os.read(rr, 1) == b"1"
    busy_pids = []
    for _ in range(nbusy):
        p = os.fork()
        if p == 0:
            busy(wakes * period / 1000.0 + 5)
        busy_pids.append(p)
    set_prio(waker_kind)
    time.sleep(0.3)
    for _ in range(wakes):
        time.sleep(period / 1000.0)
        os.write(w, struct.pack("q", time.monotonic_ns()))
    data = b""
    while True:
        chunk = os.read(rr, 65536)
        if not chunk:
            break
        data += chunk
    os.waitpid(pid, 0)
    for p in busy_pids:
        try:
            os.kill(p, 9)
            os.waitpid(p, 0)
        except OSError:
            pass
    os.close(w)
    os.close(rr)
    lat = sorted(x / 1000.0 for x in struct.unpack("%dq" % (len(data) // 8), data))
    if not took or not lat:
        return None
    n = len(lat)
    return (lat[n // 2], lat[int(n * 0.95)], lat[int(n * 0.99)], lat[-1], n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wakes", type=int, default=300)
    ap.add_argument("--period-ms", type=float, default=10.0)
    ap.add_argument("--busy", type=int, default=os.cpu_count() or 1,
                    help="busy loops beside it (default: one per core)")
    a = ap.parse_args()
    feats = ""
    try:
        with open("/sys/kernel/debug/sched/features") as f:
            feats = " ".join(x for x in f.read().split() if "PARITY" in x or "PLACE" in x)
    except OSError:
        feats = "(debugfs not readable)"
    print("kernel %s, %d CPUs; scheduler features: %s" % (platform.release(), os.cpu_count(), feats))
    waker = "fifo1" if set_prio("fifo1") else "nice-20" if set_prio("nice-20") else "nice0"
    set_prio("nice0")
    print("waker at %s; %d wakes every %g ms" % (waker, a.wakes, a.period_ms))
    print("%-9s %-6s %9s %9s %9s %9s" % ("sleeper", "busy", "p50_us", "p95_us", "p99_us", "max_us"))
    for kind in ("nice0", "nice-20", "slice", "fifo1"):
        for nb in (0, a.busy):
            res = run(kind, a.wakes, a.period_ms, nb, waker)
            if res is None:
                print("%-9s %-6d refused" % (kind, nb))
                continue
            print("%-9s %-6d %9.0f %9.0f %9.0f %9.0f" % ((kind, nb) + res[:4]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
