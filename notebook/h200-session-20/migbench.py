#!/usr/bin/env python3
# migbench.py - the kernel's cost of moving a process into a cgroup (a write
# of its pid to cgroup.procs, as krexd does for every participant it makes),
# with GAP ms between moves (a node where commands come a few a second) and
# BUSY CPU busy loops running, and of a fork+exit+wait.  Notebook tool of
# session 20 (favordynmods); prints figures, never fails on a time.
#   python3 migbench.py CGROUP_PARENT [N] [GAP_MS] [BUSY] [LABEL]
import os, subprocess, sys, time
parent = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
gap = float(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.3
busy = int(sys.argv[4]) if len(sys.argv) > 4 else 0
label = sys.argv[5] if len(sys.argv) > 5 else ""
cg = os.path.join(parent, "krex-migbench")
os.makedirs(cg, exist_ok=True)
loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(busy)]
ts = []
try:
    for _ in range(n):
        time.sleep(gap)
        p = subprocess.Popen(["sleep", "30"])
        t0 = time.perf_counter()
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(p.pid))
        ts.append((time.perf_counter() - t0) * 1e3)
        p.kill()
        p.wait()
    t0 = time.perf_counter()
    for _ in range(2000):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    fork_us = (time.perf_counter() - t0) / 2000 * 1e6
finally:
    for p in loops:
        p.kill()
        p.wait()
    os.rmdir(cg)
ts.sort()
pct = lambda q: ts[min(len(ts) - 1, int(q * len(ts)))]
print("%-14s move into a cgroup, %d moves %g ms apart, %d busy loops: p50 %.3f p90 %.3f max %.3f ms; fork+exit+wait %.0f us"
      % (label, n, gap * 1000, busy, pct(0.5), pct(0.9), ts[-1], fork_us))
