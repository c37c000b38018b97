#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""batchedge.py - where the batch-style excess is (issue 18, session 22).

Many samples per region (batch style, about 100 ms of GPU time a region, as
fidelity.py's proof runs it), krex-victim run directly, variants side by side
in rotated rounds under one krexd (fidelity.py's krex options, settle=wait):

  alone          no gate, no region
  alone-nvml20   alone, with nvmlpoll.py reading the SM clock and the clock
                 event reasons every 20 ms (what krexd does in a held region)
  alone-nvml2    the same every 2 ms (the disturbance, if any, magnified)
  gate           under the gate, no region
  gate-old       the same under another build's gate (--old-builddir)
  krex           batch regions

phase "none": no sibling, every variant; phase "all": fidelity.py's
every-sibling mix under the gate, krex only; then alone again.  Sizes 0.1
and 1 ms by default.

For krex, each sample's place in its region: the share of samples slower
than alone's wall p95 (by definition 5 % of alone's) by time since the
region's first sample (0-2, 2-10, 10-20, 20-50, 50+ ms), by index (the first
10), and within 1.5 ms after each 20 ms mark (krexd's NVML samples fall
there, 20 ms after the grant and every 20 ms after) against elsewhere.

  batchedge.py --builddir B --out DIR [--rounds 4] [--sizes 0.1,1] [--mock auto]
  batchedge.py ... --old-builddir OLD --variants alone,gate,gate-old,krex --launchrate 200000
  batchedge.py --out DIR[,DIR2] --summarize

--launchrate N: after the phases, krex-launchrate N (empty kernels, launches
a second) alone, under the gate and under the old gate, --rounds times
rotated (the open gate's cost on a launch-bound loop).
A diagnostic for the notebook, not a test: it judges nothing.
"""

import argparse
import math
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "perf"))
sys.path.insert(0, os.path.join(HERE, "..", "h200-session-21"))
import edge as E  # noqa: E402  (read_raw)
import fidelity as F  # noqa: E402
import perflib as P  # noqa: E402

# name -> (gate, region, NVML poll period in ms or 0)
VARIANTS = {
    "alone": (False, "none", 0),
    "alone-nvml20": (False, "none", 20),
    "alone-nvml2": (False, "none", 2),
    "gate": (True, "none", 0),
    "gate-old": (True, "none", 0),
    "krex": (True, "batch", 0),
}
PHASES = {"none": ["alone", "alone-nvml20", "alone-nvml2", "gate", "gate-old", "krex"],
          "all": ["krex"]}
SAMPLES = {0.1: 5000, 1.0: 2000}
BUCKETS = [(0, 2), (2, 10), (10, 20), (20, 50), (50, 1e9)]


def pct(xs, q):
    return P.percentile(xs, q) if xs else None


def places(rows, batch, ref95):
    """krex: slow shares (wall > ref95) by place in the region."""
    by_t = {b: [0, 0] for b in BUCKETS}
    first = [0, 0]
    mark = [0, 0]
    other = [0, 0]
    t = 0.0
    for k, r in enumerate(rows):
        if k % batch == 0:
            t = 0.0
        slow = 1 if r[1] > ref95 else 0
        for b in BUCKETS:
            if b[0] <= t < b[1]:
                by_t[b][0] += slow
                by_t[b][1] += 1
        if k % batch < 10:
            first[0] += slow
            first[1] += 1
        ph = t % 20.0
        if t >= 19.0 and (ph >= 19.0 or ph < 0.5):
            mark[0] += slow
            mark[1] += 1
        elif t >= 20.0:
            other[0] += slow
            other[1] += 1
        t += r[1]

    def f(c):
        return "%.1f%% of %d" % (100.0 * c[0] / c[1], c[1]) if c[1] else "-"
    return ([f(by_t[b]) for b in BUCKETS], f(first), f(mark), f(other))


def table(res, batches):
    for size in sorted({k[0] for k in res}):
        ref = [x for k, v in res.items() if k[0] == size and k[2] == "alone"
               and k[1].startswith(("none", "end")) for x in v]
        if not ref:
            continue
        ref_ev = pct([x[0] for x in ref], 95)
        ref_wall = pct([x[1] for x in ref], 95)
        print("\n### %s ms (alone pooled: ev p95 %.4f, wall p95 %.4f)\n" % (size, ref_ev, ref_wall))
        print("| phase | variant | n | ev_p50 | ev_p95 | wall_p50 | wall_p95 | ev95_pct | "
              "wall95_pct | slow_pct |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for (sz, phase, name), rows in sorted(res.items()):
            if sz != size:
                continue
            ev = [x[0] for x in rows]
            wall = [x[1] for x in rows]
            slow = 100.0 * sum(1 for x in wall if x > ref_wall) / len(wall)
            print("| %s | %s | %d | %.4f | %.4f | %.4f | %.4f | %s | %s | %.1f |" % (
                phase, name, len(rows), pct(ev, 50), pct(ev, 95), pct(wall, 50),
                pct(wall, 95), P.fmt(P.inflation(pct(ev, 95), ref_ev), 2),
                P.fmt(P.inflation(pct(wall, 95), ref_wall), 2), slow))
        print("\nkrex, share slower than alone's wall p95, by place in the region:\n")
        print("| phase | " + " | ".join("%g-%g ms" % b if b[1] < 1e9 else "%g+ ms" % b[0]
                                       for b in BUCKETS) +
              " | first 10 samples | from 1 ms before to 0.5 ms after each 20 ms mark | elsewhere after 20 ms |")
        print("|---|" + "---|" * (len(BUCKETS) + 3))
        for phase in sorted({k[1] for k in batches if k[0] == size}):
            runs = batches.get((size, phase), [])
            if not runs:
                continue
            rows = []
            for r in runs:
                rows.extend(r)
            bt, first, mark, other = places(rows, BATCH[size], ref_wall)
            print("| %s | %s | %s | %s | %s |" % (phase, " | ".join(bt), first, mark, other))


BATCH = {}


def summarize(dirs):
    """The tables again from the raw files of one or more runs (comma separated)."""
    res, batches = {}, {}
    for d, f in sorted((d, f) for d in dirs.split(",") for f in os.listdir(os.path.join(d, "raw"))):
        t = f[:-4].split("@") if f.endswith(".txt") else []
        if len(t) != 4:
            continue
        size, phase, name = float(t[0]), t[1], t[2]
        rows = E.read_raw(os.path.join(d, "raw", f))
        res.setdefault((size, phase, name), []).extend(rows)
        if name == "krex":
            batches.setdefault((size, phase), []).append(rows)
    with open(os.path.join(dirs.split(",")[0], "batch.txt")) as f:
        for ln in f:
            s, b = ln.split()
            BATCH[float(s)] = int(b)
    table(res, batches)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builddir")
    ap.add_argument("--out", required=True)
    ap.add_argument("--summarize", action="store_true")
    ap.add_argument("--mock", default=None)
    ap.add_argument("--sizes", default="0.1,1")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--batch-ms", type=float, default=100.0)
    ap.add_argument("--phases", default="none,all")
    ap.add_argument("--variants", default=None, help="only these (comma separated)")
    ap.add_argument("--tag", default="", help="appended to each phase's name (a second krexd)")
    ap.add_argument("--noiso", action="store_true", help="krexd's isolate=none")
    ap.add_argument("--old-builddir", help="the gate-old variant's build tree")
    ap.add_argument("--launchrate", type=int, default=0)
    e = ap.parse_args()
    if e.summarize:
        return summarize(e.out)
    argv = ["fidelity.py", "--full", "--builddir", e.builddir, "--srcdir",
            os.path.join(HERE, "..", ".."), "--out", e.out, "--krexd-opt", "settle=wait",
            "--no-drain-log"]
    if e.noiso:
        argv += ["--krexd-opt", "isolate=none"]
    if e.mock:
        argv += ["--mock", e.mock]
    sys.argv = argv
    a = F.parse_args()
    P.on_term()
    b = F.Bench(a)
    sizes = [float(s) for s in e.sizes.split(",")]
    iters = {}
    for s in sizes:
        iters[s] = b.calibrate(s)
        BATCH[s] = max(1, int(math.ceil(e.batch_ms / s)))
    os.makedirs(os.path.join(b.out, "raw"), exist_ok=True)
    with open(os.path.join(b.out, "batch.txt"), "w") as f:
        for s in sizes:
            f.write("%g %d\n" % (s, BATCH[s]))
    only = set(e.variants.split(",")) if e.variants else None
    if not e.old_builddir:
        only = (only or set(VARIANTS)) - {"gate-old"}
    old_gate = os.path.join(os.path.abspath(e.old_builddir or "."), P.GATE_LIB)
    res, batches, count = {}, {}, {}
    t = b.tools
    poll = os.path.join(HERE, "nvmlpoll.py")

    def run(size, phase, name, wrap):
        gate, region, period = VARIANTS[name]
        k = count.get((size, phase, name), 0)
        count[(size, phase, name)] = k + 1
        label = "%g@%s@%s@%d" % (size, phase, name, k)
        raw = os.path.join(b.out, "raw", label + ".txt")
        n = SAMPLES.get(size, 2000)
        cmd = (wrap if gate else []) + [t["victim"], "run", str(iters[size]), str(n), "--region",
                                        region, "--warmup", "20", "--label", label, "--raw", raw]
        if region == "batch":
            cmd += ["--batch", str(BATCH[size]), "--region-warmup", "1"]
        env2 = dict(b.env)
        if not gate:
            env2.pop("KREX_SOCKET", None)
        if name == "gate-old":
            env2["KREX_GATE_LIB"] = old_gate
        poller = None
        if period:
            poller = subprocess.Popen([sys.executable, poll, str(period), "600"], env=env2,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            time.sleep(0.2)
        rc, out, err = P.run_capture(cmd, env2, 60 + n * size * 0.01, b.logpath)
        said = ""
        if poller:
            poller.send_signal(signal.SIGTERM)
            said = (poller.communicate(timeout=10)[0] or "").strip().replace("\n", " ")
        d = P.parse_kv(out, "victim")
        if rc != 0 or d is None:
            print("%s: FAILED rc %s %s" % (label, rc, (err.strip().splitlines() or [""])[-1]))
            return
        rows = E.read_raw(raw)
        res.setdefault((size, phase, name), []).extend(rows)
        if name == "krex":
            batches.setdefault((size, phase), []).append(rows)
        print("%-28s ev_p95 %s wall_p95 %s entry_p50 %s %s" % (
            label, d.get("ev_p95"), d.get("wall_p95"), d.get("entry_p50"), said), flush=True)

    krexd = P.Krexd(t["krexd"], F.krexd_opts(a, "krex"), b.out, b.env, "batchedge")
    groups = []
    try:
        if not krexd.wait_ready():
            print("krexd did not start: %s" % " ".join(krexd.log_tail(3)))
            return 1
        b.env["KREX_SOCKET"] = krexd.sock
        wrap = [t["krex"], "run", "--"]
        for phase in e.phases.split(","):
            names = [v for v in PHASES["none" if phase == "none" else "all"]
                     if not only or v in only]
            if phase != "none":
                note = b.start_siblings(phase, wrap, "batchedge." + phase, groups)
                print("siblings of %s started%s" % (phase, ": " + note if note else ""),
                      flush=True)
                time.sleep(a.settle_s)
            for r in range(e.rounds):
                for size in sizes:
                    k = r % len(names)
                    for name in names[k:] + names[:k]:  # rotated: no variant always first
                        run(size, phase + e.tag, name, wrap)
            for g in groups:
                if not g.alive():
                    print("warning: sibling %s ended early" % g.name)
                g.stop()
            groups = []
        rates = {}
        lr = os.path.join(os.path.dirname(t["victim"]), "krex-launchrate")
        if not os.path.exists(lr):  # not linked through libtool
            lr = os.path.join(os.path.dirname(os.path.dirname(lr)), "krex-launchrate")
        for r in range(e.rounds if e.launchrate else 0):
            names = [v for v in ("alone", "gate", "gate-old") if v in (only or VARIANTS)]
            k = r % len(names)
            for name in names[k:] + names[:k]:
                env2 = dict(b.env)
                if name == "gate-old":
                    env2["KREX_GATE_LIB"] = old_gate
                cmd = ([] if name == "alone" else wrap) + [lr, str(e.launchrate)]
                if name == "alone":
                    env2.pop("KREX_SOCKET", None)
                rc, out, err = P.run_capture(cmd, env2, 120, b.logpath)
                d = P.parse_kv(out, "launchrate")
                v = d.get("per_s") if rc == 0 and d else None
                print("launchrate %s round %d: %s" % (name, r, v), flush=True)
                if v:
                    rates.setdefault(name, []).append(float(v))
        for name, v in rates.items():
            print("launchrate %s: per_s %s, mean %.0f" % (
                name, " ".join("%.0f" % x for x in v), sum(v) / len(v)), flush=True)
        if not only or "alone" in only:
            for size in sizes:
                run(size, "end" + e.tag, "alone", wrap)
    finally:
        for g in groups:
            g.stop()
        krexd.stop()
        P.cgroups_remove()
    table(res, batches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
