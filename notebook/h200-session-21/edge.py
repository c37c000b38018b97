#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""edge.py - where the 0.1 ms per-sample excess is (issue 18, session 21).

One region per sample at SIZE ms, krex-victim run directly (--host-split: the
host's time in each call of a sample), variants side by side in rotated
rounds under one krexd (krexd's defaults of fidelity.py's krex mode,
settle=wait):

  phase "none": no sibling; alone (no gate), alone with a sleeping or a
  spinning gap before each sample, the gate with no region, and the region
  variants.
  phase "all": fidelity.py's every-sibling mix (async, sync, torch, cpu)
  running under the gate; the region variants only.
  then alone again (the reference's drift).

Region variants: the default (libregion's and the gate's of the tree run:
call 1 no spin, call 2 on); --warm-events (the region's warm-up kernel
between the timing events); KREX_REGION_SPIN_US=20000 and =0 (the owner
polls for krexd's replies instead of sleeping, or not); KREX_REGION_WARM_US
(the gate warms by time).

  edge.py --out DIR --summarize       (the table again from DIR's raw files)
  edge.py --builddir B --out DIR [--rounds 3] [--samples 1500] [--all-samples 800]
          [--size 0.1] [--phases none,all] [--mock auto]

Prints one line per run and, per phase and variant, pooled over the rounds:
event and wall p50/p95 and their inflation against alone (start and end
pooled), the host calls' p50 (rec0/launch/rec1/sync, us), the entry p50.
A diagnostic for the notebook, not a test: it judges nothing.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "perf"))
import fidelity as F  # noqa: E402
import perflib as P  # noqa: E402

# name -> (gate, region, victim flags, environment)
VARIANTS = {
    "alone": (False, "none", [], {}),
    "gap-sleep": (False, "none", ["--idle", "sleep:%(gap)d", "--region-warmup", "1"], {}),
    "gap-spin": (False, "none", ["--idle", "spin:%(gap)d", "--region-warmup", "1"], {}),
    "gate": (True, "none", [], {}),
    "krex": (True, "sample", ["--region-warmup", "1"], {}),
    "krex-wev": (True, "sample", ["--region-warmup", "1", "--warm-events"], {}),
    "krex-spin": (True, "sample", ["--region-warmup", "1"], {"KREX_REGION_SPIN_US": "20000"}),
    "krex-spin-wev": (True, "sample", ["--region-warmup", "1", "--warm-events"],
                      {"KREX_REGION_SPIN_US": "20000"}),
    "krex-nospin": (True, "sample", ["--region-warmup", "1"], {"KREX_REGION_SPIN_US": "0"}),
    "krex-nospin-wev": (True, "sample", ["--region-warmup", "1", "--warm-events"],
                        {"KREX_REGION_SPIN_US": "0"}),
    "krex-warm300": (True, "sample", ["--region-warmup", "1"], {"KREX_REGION_WARM_US": "300"}),
    "krex-warm1000": (True, "sample", ["--region-warmup", "1"], {"KREX_REGION_WARM_US": "1000"}),
}
PHASE_VARIANTS = {
    "none": ["alone", "gap-sleep", "gap-spin", "gate", "krex", "krex-wev", "krex-spin",
             "krex-spin-wev", "krex-nospin", "krex-nospin-wev", "krex-warm300", "krex-warm1000"],
    "all": ["krex", "krex-wev", "krex-spin", "krex-spin-wev", "krex-nospin", "krex-nospin-wev",
            "krex-warm300", "krex-warm1000"],
}


def read_raw(path):
    rows = []
    try:
        with open(path) as f:
            for ln in f:
                t = ln.split()
                if len(t) >= 3:
                    rows.append([float(x) for x in t[1:]])
    except OSError:
        pass
    return rows


def table(res):
    """Per phase and variant, pooled over the rounds."""
    ref = res.get(("none", "alone"), []) + res.get(("end", "alone"), [])
    ref_ev = P.percentile([x[0] for x in ref], 95) if ref else None
    ref_wall = P.percentile([x[1] for x in ref], 95) if ref else None
    print("\n| phase | variant | n | ev_p50 | ev_p95 | wall_p50 | wall_p95 | ev95_pct | "
          "wall95_pct | rec0 | launch | rec1 | sync | entry_p50 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (phase, name), rows in res.items():
        ev = [x[0] for x in rows]
        wall = [x[1] for x in rows]
        entry = [x[2] for x in rows if x[2] >= 0]
        hs = ["%.2f" % P.percentile([x[3 + c] for x in rows], 50) if len(rows[0]) > 6
              else "-" for c in range(4)]
        print("| %s | %s | %d | %.4f | %.4f | %.4f | %.4f | %s | %s | %s | %s |" % (
            phase, name, len(rows), P.percentile(ev, 50), P.percentile(ev, 95),
            P.percentile(wall, 50), P.percentile(wall, 95),
            P.fmt(P.inflation(P.percentile(ev, 95), ref_ev), 2),
            P.fmt(P.inflation(P.percentile(wall, 95), ref_wall), 2), " | ".join(hs),
            "%.3f" % P.percentile(entry, 50) if entry else "-"))


def summarize(d):
    """The table again from a run's raw files (DIR/raw/PHASE.VARIANT.K.txt)."""
    res = {}
    for f in sorted(os.listdir(os.path.join(d, "raw"))):
        t = f.split(".")
        if len(t) >= 4 and f.endswith(".txt"):
            res.setdefault((t[0], t[1]), []).extend(read_raw(os.path.join(d, "raw", f)))
    table(res)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builddir")
    ap.add_argument("--out", required=True)
    ap.add_argument("--summarize", action="store_true",
                    help="only print the table of the raw files in --out (a run cut short)")
    ap.add_argument("--mock", default=None)
    ap.add_argument("--size", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=1500)
    ap.add_argument("--all-samples", type=int, default=800)
    ap.add_argument("--gap-us", type=int, default=300, help="the alone gaps (a mix-none entry)")
    ap.add_argument("--phases", default="none,all")
    ap.add_argument("--variants", default=None, help="only these (comma separated)")
    e = ap.parse_args()
    if e.summarize:
        return summarize(e.out)
    argv = ["fidelity.py", "--full", "--builddir", e.builddir, "--srcdir",
            os.path.join(HERE, "..", ".."), "--out", e.out, "--krexd-opt", "settle=wait",
            "--no-drain-log"]
    if e.mock:
        argv += ["--mock", e.mock]
    sys.argv = argv
    a = F.parse_args()
    P.on_term()
    b = F.Bench(a)
    iters = b.calibrate(e.size)
    b.calibrate(5.0)
    b.calibrate(1.0)
    only = set(e.variants.split(",")) if e.variants else None
    res = {}  # (phase, variant) -> list of raw rows
    kv = {}   # (phase, variant) -> list of victim dicts
    t = b.tools

    def run(phase, name, n, wrap):
        gate, region, flags, env = VARIANTS[name]
        label = "%s.%s.%d" % (phase, name, len(kv.get((phase, name), [])))
        raw = os.path.join(b.out, "raw", label + ".txt")
        cmd = (wrap if gate else []) + [t["victim"], "run", str(iters), str(n), "--region",
                                        region, "--warmup", "20", "--host-split", "--label",
                                        label, "--raw", raw]
        cmd += [f % {"gap": e.gap_us} for f in flags]
        env2 = dict(b.env)
        if not gate:
            env2.pop("KREX_SOCKET", None)
        env2.update(env)
        rc, out, err = P.run_capture(cmd, env2, 60 + n * 0.05, b.logpath)
        d = P.parse_kv(out, "victim")
        if rc != 0 or d is None:
            print("%s: FAILED rc %s %s" % (label, rc, (err.strip().splitlines() or [""])[-1]))
            return
        kv.setdefault((phase, name), []).append(d)
        res.setdefault((phase, name), []).extend(read_raw(raw))
        print("%-28s ev_p95 %s wall_p95 %s entry_p50 %s host_p50_us %s host_p95_us %s" % (
            label, d.get("ev_p95"), d.get("wall_p95"), d.get("entry_p50"),
            d.get("host_p50_us"), d.get("host_p95_us")), flush=True)

    krexd = P.Krexd(t["krexd"], F.krexd_opts(a, "krex"), b.out, b.env, "edge")
    groups = []
    try:
        if not krexd.wait_ready():
            print("krexd did not start: %s" % " ".join(krexd.log_tail(3)))
            return 1
        b.env["KREX_SOCKET"] = krexd.sock
        wrap = [t["krex"], "run", "--"]
        for phase in e.phases.split(","):
            names = [v for v in PHASE_VARIANTS["none" if phase == "none" else "all"]
                     if not only or v in only]
            n = e.samples if phase == "none" else e.all_samples
            if phase != "none":
                note = b.start_siblings(phase, wrap, "edge." + phase, groups)
                print("siblings of %s started%s" % (phase, ": " + note if note else ""),
                      flush=True)
                time.sleep(a.settle_s)
            for r in range(e.rounds):
                k = r % len(names)
                for name in names[k:] + names[:k]:  # rotated: no variant always first
                    run(phase, name, n, wrap)
            for g in groups:
                if not g.alive():
                    print("warning: sibling %s ended early" % g.name)
                g.stop()
            groups = []
        if not only or "alone" in only:
            run("end", "alone", e.samples, wrap)
    finally:
        for g in groups:
            g.stop()
        krexd.stop()
        P.cgroups_remove()
    table(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
