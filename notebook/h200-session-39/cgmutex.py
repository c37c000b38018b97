#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cgmutex.py [SECONDS] - on a cgroup v2 host without favordynmods, does a
move into a cgroup (a write to cgroup.procs, waiting for an RCU grace
period) hold up the other cgroup operations krexd's loop makes: mkdir and
rmdir of a participant's cgroup and a write to cgroup.freeze?  Session 39's
question about the mover thread (doc/architecture.md "Making a
participant"): if the kernel holds cgroup_mutex during the move's wait,
those operations wait behind it on whatever thread makes them.

A sleeping child is moved back and forth between two cgroups of this
script's own, by a thread, 50 ms apart (so that each move waits for a grace
period of its own, as krexd's do; back to back, the kernel's rcu_sync
would let the later ones through at once) ("moves on"), while the main thread
times mkdir + rmdir of a third cgroup and writes of 0 to an empty cgroup's
cgroup.freeze; the same operations are timed with no move under way first
("moves off"), the two in turn first (session 39's first run timed the
mkdir first each time, so the freeze write never met a move).  Prints p50
/ p90 / max of each in ms, and how many took over 5 ms.  Removes everything
it made; touches no other cgroup.  Root only.  A tool of the notebook, not
of KREX.
"""
import os
import sys
import threading
import time

def cgroup2_root():
    """The first cgroup2 mount point and its super options (mountinfo)."""
    for ln in open("/proc/self/mountinfo"):
        if " - cgroup2 " in ln:
            f = ln.split()
            return f[4], f[-1]
    return None, None


ROOT, SUPER = cgroup2_root()
BASE = os.path.join(ROOT or "/nonexistent", "krex-cgmutex-%d" % os.getpid())


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100.0 * len(v)))] if v else float("nan")


def line(name, v):
    """One row: name, count, p50 / p90 / max (ms), and how many over 5 ms."""
    print("%-34s n %5d  p50 %7.3f  p90 %7.3f  max %7.3f ms  over 5 ms %4d" % (
        name, len(v), q(v, 50), q(v, 90), max(v) if v else float("nan"),
        sum(1 for x in v if x > 5)))


def write(path, s):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, s.encode())
    finally:
        os.close(fd)


def ops(seconds, out):
    """mkdir+rmdir and cgroup.freeze writes, timed, for `seconds`."""
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        d = os.path.join(BASE, "c%d" % i)
        # in turn first: a blocked call absorbs the move's rest, and the
        # call right after it never meets a move
        for op in (("mkdir", "freeze") if i % 2 == 0 else ("freeze", "mkdir")):
            t0 = time.monotonic()
            if op == "mkdir":
                os.mkdir(d)
                os.rmdir(d)
                out["mkdir+rmdir"].append((time.monotonic() - t0) * 1e3)
            else:
                write(os.path.join(BASE, "f", "cgroup.freeze"), "0")
                out["cgroup.freeze write"].append((time.monotonic() - t0) * 1e3)
        i += 1
        time.sleep(0.002)


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    if os.geteuid() != 0:
        print("cgmutex.py: root only")
        return 1
    if not ROOT:
        print("cgmutex.py: no cgroup2 mount")
        return 1
    print("cgroup2 at %s, options %s (favordynmods %s)" % (
        ROOT, SUPER, "on" if "favordynmods" in SUPER else "off"))
    os.mkdir(BASE)
    for d in ("a", "b", "f"):
        os.mkdir(os.path.join(BASE, d))
    pid = os.fork()
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    stop = threading.Event()
    moves = []

    def mover():
        i = 0
        while not stop.is_set():
            t0 = time.monotonic()
            write(os.path.join(BASE, "ab"[i % 2], "cgroup.procs"), str(pid))
            moves.append((time.monotonic() - t0) * 1e3)
            i += 1
            stop.wait(0.05)  # longer than a grace period: each move waits anew
    try:
        off = {"mkdir+rmdir": [], "cgroup.freeze write": []}
        ops(secs, off)
        on = {"mkdir+rmdir": [], "cgroup.freeze write": []}
        th = threading.Thread(target=mover)
        th.start()
        ops(secs, on)
        stop.set()
        th.join()
        line("move (cgroup.procs write)", moves)
        for k in off:
            line(k + ", moves off", off[k])
            line(k + ", moves on", on[k])
    finally:
        stop.set()
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        for d in ("a", "b", "f"):
            try:
                os.rmdir(os.path.join(BASE, d))
            except OSError:
                pass
        os.rmdir(BASE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
