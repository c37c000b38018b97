#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""start-bench.py - what `krex run` adds to starting a command.

Starts a krexd of its own (a private run directory, the cgroup subtree
perflib uses), then times, one after the other, --n starts each of

  bare      /bin/true
  krex-run  krex run --gpus G -- /bin/true   (a participant: its cgroup made,
            the pid moved into it, the gate preloaded into /bin/true, which
            joins; at the exit the participant ends)

and prints p50/p95/max of each and, from krexd's log, how long making the
participant took on krexd's loop ("made in N us": the cgroup's mkdir and the
move of the pid into it, which for the kernel is a cgroup migration).  With
--parallel K, K starters run at once (a busy node's rate of commands);
--gap-ms G sleeps G ms between a starter's starts (a node where commands
come a few a second: back to back, the kernel's RCU state from the last
move often serves the next, doc/admin.md "Making participants"); --busy C
keeps C CPU busy loops running meanwhile (a loaded node).  No GPU needed; on
the mock or a real node alike.  A benchmark: prints figures, never fails on
a time.

  start-bench.py --builddir BUILD [--n 50] [--parallel 1] [--gap-ms 0]
                 [--busy 0] [--gpus g0]
"""

import argparse
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perflib as P  # noqa: E402


def times(cmd, env, n, gap_s):
    out = []
    for _ in range(n):
        if gap_s:
            time.sleep(gap_s)
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out.append((time.perf_counter() - t) * 1000.0)
    return out


def row(name, v):
    return "%-9s n %4d  p50 %8.2f ms  p95 %8.2f ms  max %8.2f ms" % (
        name, len(v), P.percentile(v, 50), P.percentile(v, 95), max(v))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    P.add_common_args(ap)
    ap.add_argument("--n", type=int, default=50, help="starts of each kind (default 50)")
    ap.add_argument("--parallel", type=int, default=1, help="starters at once (default 1)")
    ap.add_argument("--gap-ms", type=float, default=0.0,
                    help="sleep between a starter's starts (default 0)")
    ap.add_argument("--busy", type=int, default=0, help="CPU busy loops meanwhile (default 0)")
    a = ap.parse_args()
    a.preset, a.drain_log = None, False  # krexd at log_level=info (set below)
    if a.n < 1 or a.parallel < 1:
        ap.error("--n and --parallel must be at least 1")
    if a.gap_ms < 0 or a.busy < 0:
        ap.error("--gap-ms and --busy cannot be negative")
    tools = P.find_tools(a)
    if not (tools["krexd"] and tools["krex"]):
        print("start-bench: krexd/krex not built under %s" % a.builddir)
        return 77
    env = P.base_env(a)
    out = P.out_dir(a, "start")
    opts = P.krexd_opts(a, a.queue_cap, "participants") + ["log_level=info"]
    log = os.path.join(out, "start.krexd.log")
    if os.path.exists(log):
        os.unlink(log)  # Group appends: this run's krexd only
    k = P.Krexd(tools["krexd"], opts, out, env, "start")
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(a.busy)]
    try:
        if not k.wait_ready():
            print("start-bench: krexd did not start: %s" % "".join(k.log_tail()))
            return 1
        env["KREX_SOCKET"] = k.sock
        gpus = ["--gpus", a.gpus] if a.gpus else []
        res = {}
        for name, cmd in (("bare", ["/bin/true"]),
                          ("krex-run", [tools["krex"], "run"] + gpus + ["--", "/bin/true"])):
            res[name] = []
            lock = threading.Lock()

            def one():
                v = times(cmd, env, a.n, a.gap_ms / 1000.0)
                with lock:
                    res[name].extend(v)
            th = [threading.Thread(target=one) for _ in range(a.parallel)]
            for t in th:
                t.start()
            for t in th:
                t.join()
    finally:
        for b in busy:
            b.kill()
            b.wait()
        k.stop()
    made = P.made_in(k.g.logpath)
    print("start-bench: %d starts of each, %d at once, %g ms apart, %d busy loops; krex %s" % (
        a.n, a.parallel, a.gap_ms, a.busy, tools["krex"]))
    for name, v in res.items():
        print(row(name, v))
    if made:
        print(row("made", made) + "   (krexd's loop: the cgroup made, the pid moved)")
    else:
        print("made      no participant in krexd's log (%s)" % k.g.logpath)
    return 0


if __name__ == "__main__":
    sys.exit(main())
