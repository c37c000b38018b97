#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""measure.py - harmless.py's measuring job: KREX regions at random moments.

Run under `krex run` (it must be a participant).  Waits for --go, then takes
regions until --stop exists or --seconds pass:

  - for the first --startup-s seconds a region right after the other (gaps of
    0-5 ms): the siblings are importing, creating contexts, compiling;
  - then after a random gap of 0 to --gap-ms;
  - and at once whenever a sibling writes "begin capture|compile|autotune"
    into its phase file (--phases DIR, *.phases; sib_common.py), so that
    regions land in capture and autotuning on purpose.

Each region is held a random 0 to --hold-ms (the owner sleeps).  Every
certificate (the library's own JSON, krex_certificate_json) goes into
--certs as one line with the times (CLOCK_MONOTONIC s) the region was asked
for, granted and ended, and why it was taken then.  A region that is not
granted is recorded with its error.  Every --check-every regions it waits
100 ms after the end and records siblings still frozen (--pids: a file of
pids, one a line; their process trees) and whether its own CPU affinity came
back.  Prints one JSON summary line at the end.
"""

import argparse
import glob
import json
import os
import random
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import procstate  # noqa: E402

TRIGGERS = ("capture", "compile", "autotune")


def parse():
    ap = argparse.ArgumentParser(description="harmless.py's measuring job")
    ap.add_argument("--binding", required=True, help="directory of the krex package (python/ of the source tree)")
    ap.add_argument("--go", required=True)
    ap.add_argument("--stop", required=True)
    ap.add_argument("--certs", required=True)
    ap.add_argument("--phases", default=None, help="directory of the siblings' *.phases")
    ap.add_argument("--pids", default=None, help="file: the siblings' top pids")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gap-ms", type=float, default=50)
    ap.add_argument("--hold-ms", type=float, default=20)
    ap.add_argument("--startup-s", type=float, default=3)
    ap.add_argument("--timeout-ms", type=int, default=30000, help="longest wait for a grant")
    ap.add_argument("--check-every", type=int, default=10)
    ap.add_argument("--go-timeout", type=float, default=120)
    ap.add_argument("--plant-dishonest", type=int, default=-1, metavar="I",
                    help="self-test: record region I's certificate as clean with a late "
                    "sibling (harmless.py --plant cert must call it not honest)")
    return ap.parse_args()


class PhaseWatch(threading.Thread):
    """Tails every *.phases file; sets .ev when a trigger phase begins and
    remembers which."""

    def __init__(self, d):
        super().__init__(daemon=True)
        self.d = d
        self.ev = threading.Event()
        self.why = None
        self.off = {}

    def run(self):
        while True:
            for f in glob.glob(os.path.join(self.d, "*.phases")):
                try:
                    if os.path.getsize(f) <= self.off.get(f, 0):
                        continue
                    with open(f) as fh:
                        fh.seek(self.off.get(f, 0))
                        data = fh.read()
                except OSError:
                    continue
                cut = data.rfind("\n") + 1
                self.off[f] = self.off.get(f, 0) + cut
                for ln in data[:cut].splitlines():
                    p = ln.split()
                    if len(p) == 3 and p[1] == "begin" and p[2] in TRIGGERS:
                        self.why = "phase:%s:%s" % (os.path.basename(f)[:-7], p[2])
                        self.ev.set()
            time.sleep(0.002)


def main():
    a = parse()
    sys.path.insert(0, a.binding)
    import krex
    rng = random.Random(a.seed)
    end = time.monotonic() + a.go_timeout
    while not os.path.exists(a.go):
        if time.monotonic() > end or os.path.exists(a.stop):
            print(json.dumps({"measure": 1, "regions": 0, "error": "no go"}))
            return 1
        time.sleep(0.002)
    t_go = time.monotonic()
    deadline = t_go + a.seconds
    watch = None
    if a.phases:
        watch = PhaseWatch(a.phases)
        watch.start()
    aff0 = sorted(os.sched_getaffinity(0))
    n = failed = stuck = owner_pinned = 0
    out = open(a.certs, "a", buffering=1)
    while time.monotonic() < deadline and not os.path.exists(a.stop):
        now = time.monotonic()
        if now - t_go < a.startup_s:
            gap, why = rng.uniform(0, 0.005), "startup"
        else:
            gap, why = rng.uniform(0, a.gap_ms / 1000.0), "random"
        if watch:
            if watch.ev.wait(gap):
                why = watch.why
                watch.ev.clear()
        else:
            time.sleep(gap)
        rec = {"i": n, "trigger": why, "t_req": time.monotonic()}
        try:
            krex.begin(timeout_ms=a.timeout_ms)
        except krex.KrexError as e:
            rec["error"] = str(e)
            rec["t_end"] = time.monotonic()
            failed += 1
            out.write(json.dumps(rec) + "\n")
            n += 1
            time.sleep(0.05)
            continue
        rec["t_grant"] = time.monotonic()
        time.sleep(rng.uniform(0, a.hold_ms / 1000.0))
        try:
            krex.end()
            rec["cert"] = json.loads(krex.last_certificate_json())
        except (krex.KrexError, ValueError) as e:
            rec["error"] = "end: %s" % e
            failed += 1
        rec["t_end"] = time.monotonic()
        if n == a.plant_dishonest and "cert" in rec:
            rec["cert"].update(outcome="clean", late=1, planted=1)
        if a.check_every and n % a.check_every == a.check_every - 1:
            time.sleep(0.1)
            frozen = procstate.frozen_pids(procstate.read_pids(a.pids)) if a.pids else []
            rec["after_100ms"] = {"frozen": frozen,
                                  "owner_affinity": procstate.cpulist(os.sched_getaffinity(0))}
            stuck += bool(frozen)
            owner_pinned += bool(set(aff0) - os.sched_getaffinity(0))  # CPUs not given back
        out.write(json.dumps(rec) + "\n")
        n += 1
    out.close()
    print(json.dumps({"measure": 1, "regions": n, "failed": failed, "stuck_frozen": stuck,
                      "owner_pinned": owner_pinned,
                      "owner_affinity_before": procstate.cpulist(aff0),
                      "owner_affinity_after": procstate.cpulist(os.sched_getaffinity(0))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
