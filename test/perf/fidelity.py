#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""fidelity.py - how much sharing a GPU inflates a timing, with and without KREX.

A victim kernel of fixed work (calibrated once alone to ~0.1, 1 and 10 ms) is
timed with CUDA events and the wall clock while siblings share the GPU, in
several modes side by side in one run:

  alone       no siblings, no krexd (the reference)
  shared      siblings, no krexd
  krex        siblings and victim under krexd (gate, drain, freeze, isolation,
              bounded queue on); the victim times inside regions
  krex-noiso  as krex, isolate=none
  krex-nocap  as krex, queue_cap=0 (no bounded queue)
  alone-gapped  alone, at the end, with an idle gap before each sample equal to
              the entry p50 the krex mode measured for that size (krex-victim
              --idle sleep:US, then the same --region-warmup kernels a
              region runs): a dedicated GPU used the way one region per
              sample uses it.  Every per-sample row is shown against both
              references (infl_* against back-to-back alone, gap_* against
              alone-gapped).
  alone-end   alone again at the end (drift of the reference over the run);
              every KREX row is also shown against alone and alone-end
              pooled (brk_wall_p95_pct: alone before and after it)

--rounds R interleaves: alone and every group of the other modes (krexd and
siblings started afresh) R times in turn, each run with 1/R of the samples;
each row then pools its rounds' raw samples (the rounds' own rows in
fidelity-rounds.csv/.md).  The GPU's own state wanders: on the H200 a
kernel's time sat on one of a few steps about 0.3 % apart for seconds at a
time, alone too, and a reference taken only before and after the KREX rows
could sit on another step than they did.

Sibling mixes: async (5 ms kernels, never synchronizing), sync (1 ms kernels,
synchronizing each), torch (test/workloads/torch_loop.py), cpu (busy loops on
every core), all (all four at once) and none (no sibling: what the gate and
a region cost by themselves).  In the KREX modes the victim times
"sample" (one region per sample) and "batch" (many samples per region), each
after --region-warmup untimed kernels inside every region (as benchmark tools
warm up; 0 times the very first launch after the region opens too), and
"none" (under the gate, no region: the gate's own cost per launch).
--spacer-ms X: before each sample's start event an untimed kernel of X ms,
not waited for (krex-victim --spacer), so that CUDA events time the
kernel's GPU time only, not the host's launch of it; rows are then read
against an alone measured the same way.

Output: p50/p95/p99 of event and wall time, p95 inflation versus alone (and
versus alone-gapped for one region per sample), region entry p50/p95 and clean
outcomes, as CSV + markdown in --out; then, per KREX row, where a region's
entry went (fidelity-entry.csv/.md), from each region's certificate
(krex-victim --certs): waiting in the region queue, the drain (all siblings
together: the certificate has no per-sibling figure; see --drain-log), the freeze, the
isolation (after the freeze), the settle, what is left (grant,
the gate's warm-up, wake-up), and the first-kernel warm-up (the
--region-warmup kernels' wall time).  With --drain-log (on with --full,
and with --quick on the mock), the drain per sibling (fidelity-siblings.csv/.md,
per KREX mode and mix): krexd runs at log_level=debug, each sibling's gate at
KREX_LOG=debug, each sibling labelled with its name (`krex run --label`), and
krexlog.py turns the logs into one row per sibling: its drains, krexd's wait
for its ack and its gate's own drain (p50/p95/max), the regions whose drain it
ended, what its gate let through, its time held back.  The markdown is printed last.  GPU
clocks are read (never set) before and after.

  fidelity.py --quick --mock auto        (CI, mock driver, ~1 minute)
  fidelity.py --full --builddir BUILD    (the H200, ~4 minutes)

Exit status: 0 when every measurement that ran produced figures, 1 when one
failed (crash, unparsable output), 77 when the victim is not built.  Timings
never decide it.
"""

import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import krexlog  # noqa: E402
import perflib as P  # noqa: E402

MIXES = {
    "async": ["async"],
    "sync": ["sync"],
    "torch": ["torch"],
    "cpu": ["cpu"],
    "all": ["async", "sync", "torch", "cpu"],
    "none": [],
}
MODES = ["alone", "shared", "krex", "krex-noiso", "krex-nocap", "alone-gapped"]
ABLATIONS = ["krex-noiso", "krex-nocap"]

PRESETS = {
    # CI against the mock driver: two sizes, the all-siblings mix, three modes.
    "quick": dict(sizes="1,10", samples="1:200,10:40", mixes="all",
                  modes="alone,shared,krex,alone-gapped", regions="sample,batch", warmup=10,
                  budget_s=75.0, batch_ms=50.0, cell_s=8.0, region_warmup=1),
    # The H200: every size, mix and mode.  Samples budgeted so that this run
    # takes about 4 minutes (shared 10 ms kernels run ~2x slower; one region
    # per sample adds an entry of a few ms to each of them).
    "full": dict(sizes="0.1,1,10", samples="0.1:1000,1:1000,10:300",
                 mixes="all,async,sync,cpu,torch", modes=",".join(MODES),
                 regions="sample,batch", warmup=20, budget_s=240.0, batch_ms=100.0,
                 cell_s=15.0, region_warmup=1),
}

COLS = ["size_ms", "mode", "mix", "region", "n", "ev_p50", "ev_p95", "ev_p99", "wall_p50",
        "wall_p95", "wall_p99", "infl_ev_p95_pct", "infl_wall_p95_pct", "infl_wall_p99_pct",
        "brk_wall_p95_pct", "gap_ev_p95_pct", "gap_wall_p95_pct", "entry_p50", "entry_p95", "clean", "note"]
DIGITS = {"infl_ev_p95_pct": 2, "infl_wall_p95_pct": 2, "infl_wall_p99_pct": 2,
          "brk_wall_p95_pct": 2,
          "gap_ev_p95_pct": 2, "gap_wall_p95_pct": 2, "entry_p50": 3, "entry_p95": 3}
# Where a region's entry went (ms), per KREX row, from the certificates.
PHASES = ["entry", "wait", "drain", "freeze", "isolate", "settle", "other", "warm"]
ECOLS = ["size_ms", "mode", "mix", "region", "regions"] + [
    "%s_%s" % (ph, q) for ph in PHASES for q in ("p50", "p95")]
# The drain per sibling, per KREX mode and mix (--drain-log: krexlog.py).
SCOLS = ["mode", "mix"] + krexlog.COLS + ["note"]


def parse_args():
    ap = P.preset_parser(__doc__)
    ap.add_argument("--sizes", help="kernel sizes in ms, comma separated")
    ap.add_argument("--samples", help="samples per size, e.g. 0.1:1000,1:1000,10:300")
    ap.add_argument("--mixes", help="sibling mixes: " + ",".join(MIXES))
    ap.add_argument("--modes", help="modes: " + ",".join(MODES))
    ap.add_argument("--regions", help="region styles in the krex mode: sample,batch,none")
    ap.add_argument("--spacer-ms", type=float, default=0,
                    help="an untimed kernel of this many ms before each sample's start "
                    "event, not waited for (default 0: none)")
    ap.add_argument("--ablation-mixes", default="all",
                    help="mixes the krex-noiso/krex-nocap modes run with (default all)")
    ap.add_argument("--ablation-regions", default="sample",
                    help="region styles of the ablation modes (default sample)")
    ap.add_argument("--sample-mixes", default="all",
                    help="mixes the krex mode times with one region per sample (default "
                    "all; the others use batch only)")
    ap.add_argument("--batch-ms", type=float, help="GPU time of one region in batch style")
    ap.add_argument("--warmup", type=int, help="untimed samples before timing")
    ap.add_argument("--warm-events", action="store_true",
                    help="the region's untimed warm-up kernels between the timing events, "
                         "waited for as a sample is (krex-victim --warm-events)")
    ap.add_argument("--region-warmup", type=int,
                    help="untimed kernels right after each region begins (default 1)")
    ap.add_argument("--cell-s", type=float,
                    help="seconds one region-per-sample measurement may take; fewer samples "
                    "(at least 50) when entries are slow (0 = no limit)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="interleave: alone and every KREX group this many times in turn, "
                    "each with its share of the samples, pooled (default 1); a batch "
                    "region then holds at most a round's samples")
    ap.add_argument("--settle-s", type=float, default=0.5,
                    help="wait after the siblings started before timing")
    ap.add_argument("--torch-args", default="",
                    help="extra arguments for torch_loop.py (space separated)")
    ap.add_argument("--victim-args", default="",
                    help="extra arguments for every krex-victim run (space separated), "
                    "e.g. \"--host-split --stamps\" to place slow samples in the raw files")
    ap.set_defaults(preset="quick")
    a = ap.parse_args()
    for k, v in PRESETS[a.preset].items():
        if getattr(a, k, None) is None:
            setattr(a, k, v)
    a.sizes = [float(s) for s in a.sizes.split(",")]
    a.samples = {float(k): int(v) for k, v in (kv.split(":") for kv in a.samples.split(","))}
    a.mixes = [m for m in a.mixes.split(",") if m]
    a.modes = [m for m in a.modes.split(",") if m]
    a.regions = [r for r in a.regions.split(",") if r]
    a.ablation_mixes = [m for m in a.ablation_mixes.split(",") if m]
    a.ablation_regions = [r for r in a.ablation_regions.split(",") if r]
    a.sample_mixes = [m for m in a.sample_mixes.split(",") if m]
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    for m in a.mixes + a.ablation_mixes:
        if m not in MIXES:
            ap.error("unknown mix %s" % m)
    for m in a.modes:
        if m not in MODES:
            ap.error("unknown mode %s" % m)
    for r in a.regions + a.ablation_regions:
        if r not in ("sample", "batch", "none"):
            ap.error("unknown region style %s" % r)
    return a


def samples_for(a, size):
    """Samples for a size: the table's, else 1000 for short kernels and
    ~3 s of work for long ones."""
    if size in a.samples:
        return a.samples[size]
    return 1000 if size <= 1 else max(100, int(3000 / size))


def krexd_opts(a, mode):
    cap = 0 if mode == "krex-nocap" else a.queue_cap
    iso = "none" if mode == "krex-noiso" else "participants"
    return P.krexd_opts(a, cap, iso)


class SlowEntry(Exception):
    """Region entries too slow for one region per sample within --cell-s."""


class Bench:
    def __init__(self, a):
        self.a = a
        self.tools = P.find_tools(a)
        self.env = P.base_env(a)
        self.out = P.out_dir(a, "fidelity")
        os.makedirs(os.path.join(self.out, "raw"), exist_ok=True)
        self.logpath = os.path.join(self.out, "fidelity.log")
        self.iters = {}
        self.rows = []
        self.failed = 0
        self.alone = {}
        self.gapped = {}
        self.entry_rows = []
        self.sibling_rows = []
        self.too_slow = {}  # (mode, mix) -> why its region-per-sample runs are skipped
        self.round = None  # the round being measured (--rounds > 1)
        self.round_rows = []
        # Siblings bound their own life, so nothing outlives a killed driver
        # for long.
        self.sibling_s = a.budget_s + 120

    def raw_path(self, label, ext):
        return os.path.join(self.out, "raw", label.replace("/", "_") + ext)

    def victim_cmd(self, size, samples, region, label, wrap, idle_us=0):
        a = self.a
        cmd = wrap + [self.tools["victim"], "run", str(self.iters[size]), str(samples),
                      "--region", region, "--warmup", str(a.warmup), "--label", label,
                      "--raw", self.raw_path(label, ".txt")]
        if region != "none":
            cmd += ["--certs", self.raw_path(label, ".certs")]
        if idle_us > 0:
            cmd += ["--idle", "sleep:%d" % idle_us]
        if region == "batch":
            cmd += ["--batch", str(self.batch(size, samples))]
        if (region != "none" or idle_us > 0) and a.region_warmup:
            cmd += ["--region-warmup", str(a.region_warmup)]
            if a.warm_events:
                cmd += ["--warm-events"]
        if a.spacer_ms > 0:
            cmd += ["--spacer", str(self.calibrate(a.spacer_ms))]
        return cmd + a.victim_args.split()

    def batch(self, size, samples):
        """Samples per region in batch style: about batch_ms of GPU time."""
        return max(1, min(samples, int(math.ceil(self.a.batch_ms / size))))

    def calibrate(self, ms):
        """ITERS for ms of work alone (once per size)."""
        if ms in self.iters:
            return self.iters[ms]
        rc, out, err = P.run_capture([self.tools["victim"], "calib", "%g" % ms], self.env, 120,
                                     self.logpath)
        toks = out.split()
        if rc != 0 or not toks or not toks[-1].isdigit() or int(toks[-1]) <= 0:
            raise RuntimeError("krex-victim calib %g failed (rc %s): %s" % (ms, rc, err[-300:]))
        self.iters[ms] = int(toks[-1])
        P.log("calib %g ms -> %d iters" % (ms, self.iters[ms]))
        return self.iters[ms]

    def measure(self, size, mode, mix, region, wrap, note="", idle_us=0):
        """One victim run; appends a row."""
        a = self.a
        n = samples_for(a, size)
        row = dict(size_ms="%g" % size, mode=mode, mix=mix, region=region, n=n, note=note)
        label = "%s/%s/%g/%s" % (mode, mix, size, region)
        if self.round is not None:
            n = -(-n // a.rounds)  # its share
            row.update(n=n, round=self.round)
            label += "/r%d" % self.round
            row["label"] = label
        self.rows.append(row)
        if a.budget_s and P.elapsed() > a.budget_s and mode != "alone-end":
            row["note"] = "skipped: time budget spent"
            return
        try:
            cost = 0.0  # ms of region entry and sample each, measured by the probe
            if region == "sample" and a.cell_s:
                n, cost = self.fit_samples(size, n, label, wrap, row)
            limit = 60 + n * (max(size * 30 + 20, cost * 3)) / 1000.0
            limit += n * idle_us / 1e6
            rc, out, err = P.run_capture(self.victim_cmd(size, n, region, label, wrap, idle_us),
                                         self.env, limit, self.logpath)
        except SlowEntry as e:
            row["note"] = "%s; %s" % (e, note) if note else str(e)
            P.log("%s: %s" % (label, e))
            return
        except P.Interrupted:
            row["note"] = "interrupted"
            raise
        d = P.parse_kv(out, "victim")
        if rc != 0 or d is None:
            self.failed += 1
            why = "timed out" if rc is None else "rc %s" % rc
            row["note"] = ("FAILED: %s %s" % (why, (err.strip().splitlines() or [""])[-1]))[:160]
            P.log("%s: %s" % (label, row["note"]))
            return
        for k in ("ev_p50", "ev_p95", "ev_p99", "wall_p50", "wall_p95", "wall_p99", "entry_p50",
                  "entry_p95"):
            row[k] = P.num(d.get(k))
        row["n"] = int(P.num(d.get("n")) or n)
        if region != "none":
            b = 1 if region == "sample" else self.batch(size, n)
            row["clean"] = "%s/%d" % (d.get("outcome_clean", "-"), -(-row["n"] // b))
        if self.round is not None:
            row["figures"] = 1  # pooled by pool_rounds()
            return
        if mode == "alone":
            self.alone[size] = row
        if mode == "alone-gapped":
            self.gapped[size] = row
        if region != "none":
            self.entry_rows.append(self.entry_breakdown(row, [label]))
        self.inflate(row)
        P.log("%s: ev_p95 %s wall_p95 %s entry_p95 %s" % (
            label, P.fmt(row["ev_p95"]), P.fmt(row["wall_p95"]), P.fmt(row["entry_p95"])))

    def entry_breakdown(self, row, labels):
        """Where the row's region entries went, from krex-victim --certs (of
        each of its runs: one, or one per round)."""
        e = {k: row.get(k) for k in ("size_ms", "mode", "mix", "region")}
        cols = {ph: [] for ph in PHASES}
        lines = []
        try:
            for label in labels:
                with open(self.raw_path(label, ".certs")) as f:
                    lines.extend(f)
        except OSError as err:
            e["note"] = "no certificates: %s" % err
            return e
        for ln in lines:
            t = ln.split()
            if len(t) < 7:
                continue
            ent, warm = float(t[0]), float(t[1])
            wait, drain, freeze, iso, settle = (int(x) / 1000.0 for x in t[2:7])
            cols["entry"].append(ent)
            cols["wait"].append(wait)
            cols["drain"].append(drain)
            cols["freeze"].append(freeze)
            cols["isolate"].append(iso)
            cols["settle"].append(settle)
            # the isolation runs after the freeze, before the settle
            cols["other"].append(max(0.0, ent - wait - drain - freeze - iso - settle))
            cols["warm"].append(warm)
        e["regions"] = len(cols["entry"])
        for ph, v in cols.items():
            e[ph + "_p50"] = P.percentile(v, 50) if v else None
            e[ph + "_p95"] = P.percentile(v, 95) if v else None
        return e

    def bracket_refs(self):
        """Each KREX row against alone before and after it (alone and
        alone-end pooled): a drift of the machine over the run moves both."""
        for row in self.rows:
            if row.get("region") in ("sample", "batch") and row.get("wall_p95") is not None:
                label = "%s/%s/%s/%s" % (row["mode"], row["mix"], row["size_ms"], row["region"])
                row["brk_wall_p95_pct"] = P.bracketed_wall_p95(
                    os.path.join(self.out, "raw"), float(row["size_ms"]),
                    os.path.basename(self.raw_path(label, "")))

    def inflate(self, row):
        """The row's p95/p99 inflation against alone of its size."""
        ref = self.alone.get(float(row["size_ms"]), {})
        for k in ("ev_p95", "wall_p95", "wall_p99"):
            row["infl_%s_pct" % k] = P.inflation(row.get(k), ref.get(k))

    def pool_rounds(self):
        """--rounds: each (size, mode, mix, region)'s runs of every round as
        one row, from their raw samples pooled (written as the row's raw
        file, so that bracket_refs() reads it as any other); the rounds'
        own rows go to fidelity-rounds.csv."""
        pooled = {}
        out = []
        for row in self.rows:
            if "round" not in row:
                out.append(row)
                continue
            self.round_rows.append(row)
            key = (row["size_ms"], row["mode"], row["mix"], row["region"])
            if key in pooled:
                continue
            rs = [r for r in self.rows if "round" in r and
                  (r["size_ms"], r["mode"], r["mix"], r["region"]) == key]
            p = dict(size_ms=key[0], mode=key[1], mix=key[2], region=key[3])
            pooled[key] = p
            out.append(p)
            ran = [r for r in rs if r.get("figures")]
            notes = sorted({r["note"] for r in rs if r.get("note")})
            p["note"] = "; ".join(["%d of %d rounds" % (len(ran), len(rs))] + notes)[:160]
            ev, wall, entry = [], [], []
            label = "%s/%s/%s/%s" % (key[1], key[2], key[0], key[3])
            with open(self.raw_path(label, ".txt"), "w") as f:
                for r in ran:
                    for x in P.raw_rows(self.raw_path(r["label"], ".txt")):
                        ev.append(x[0])
                        wall.append(x[1])
                        if x[2] >= 0:
                            entry.append(x[2])
                        f.write("%d %.4f %.4f %.4f\n" % (len(wall) - 1, x[0], x[1], x[2]))
            if not wall:
                continue
            p["n"] = len(wall)
            for name, v in (("ev", ev), ("wall", wall), ("entry", entry)):
                for q in (50, 95, 99):
                    if v and (name != "entry" or q != 99):
                        p["%s_p%d" % (name, q)] = P.percentile(v, q)
            cl = [r["clean"].split("/") for r in ran if r.get("clean")]
            if cl:
                p["clean"] = "%d/%d" % (sum(int(c[0]) if c[0].isdigit() else 0 for c in cl),
                                        sum(int(c[1]) for c in cl))
            if key[3] != "none":
                self.entry_rows.append(self.entry_breakdown(p, [r["label"] for r in ran]))
            if key[1] == "alone":
                self.alone[float(key[0])] = p
        self.rows = out
        for row in self.rows:
            if row.get("wall_p95") is not None:
                self.inflate(row)  # against the pooled alone

    def gapped_refs(self):
        """Each per-sample row against alone-gapped of its size."""
        for row in self.rows:
            ref = self.gapped.get(float(row["size_ms"]))
            if row.get("region") != "sample" or not ref:
                continue
            row["gap_ev_p95_pct"] = P.inflation(row.get("ev_p95"), ref.get("ev_p95"))
            row["gap_wall_p95_pct"] = P.inflation(row.get("wall_p95"), ref.get("wall_p95"))

    def run_gapped(self):
        """alone-gapped: alone with an idle gap before each sample equal to the
        entry p50 the krex mode measured for that size, one region per sample
        (the all-sibling mix first)."""
        for size in self.a.sizes:
            src = [r for r in self.rows if r.get("mode") == "krex" and
                   r.get("region") == "sample" and float(r["size_ms"]) == size and
                   r.get("entry_p50")]
            src.sort(key=lambda r: r.get("mix") != "all")
            if not src:
                self.rows.append(dict(size_ms="%g" % size, mode="alone-gapped", mix="none",
                                      region="none",
                                      note="skipped: no krex per-sample entry measured"))
                continue
            gap_us = int(round(src[0]["entry_p50"] * 1000))
            self.measure(size, "alone-gapped", "none", "none", [],
                         "gap %d us (krex/%s entry p50)" % (gap_us, src[0]["mix"]), gap_us)

    def fit_samples(self, size, n, label, wrap, row):
        """Samples for one region per sample within --cell-s: each costs a
        region entry, unknown before (a few ms with the queue cap, the whole
        queued work of the siblings without it), so a probe measures
        it first (5 samples; over --cell-s raises SlowEntry).  Never fewer than
        50; the row's note says when n was cut.  Returns (samples, ms of entry
        and sample each)."""
        key = (row["mode"], row["mix"])
        if key in self.too_slow:
            raise SlowEntry(self.too_slow[key])
        probe = min(n, 5)
        rc, out, err = P.run_capture(self.victim_cmd(size, probe, "sample", label + "/probe",
                                                     wrap), self.env, self.a.cell_s, self.logpath)
        if rc is None:
            self.too_slow[key] = ("skipped: %d region entries took over --cell-s %g s" %
                                  (probe, self.a.cell_s))
            raise SlowEntry(self.too_slow[key])
        d = P.parse_kv(out, "victim") if rc == 0 else None
        if not d:
            return n, 0.0  # the real run will say what is wrong
        cost = (P.num(d.get("entry_p50")) or 0) + (P.num(d.get("wall_p50")) or size)
        fit = max(50, int(self.a.cell_s * 1000 / (cost * 1.5)))
        if fit < n:
            row["note"] = ("n cut from %d (entry+sample %.1f ms); " % (n, cost) +
                           row.get("note", "")).strip("; ")
            P.log("%s: %d samples fit --cell-s %g (%.1f ms each)" % (label, fit, self.a.cell_s,
                                                                     cost))
            return fit, cost
        return n, cost

    def start_siblings(self, mix, wrap, tag, groups):
        """Start the mix's siblings, appending each to groups as soon as it
        exists (so that an interrupt still stops it); returns a note."""
        a, t = self.a, self.tools
        notes = []
        for s in MIXES[mix]:
            counter = os.path.join(self.out, "%s.%s.count" % (tag, s))
            if os.path.exists(counter):
                os.unlink(counter)
            env = dict(self.env)
            if wrap and P.drain_log(a):
                env["KREX_LOG"] = "debug"  # its gate logs each drain (krexlog.py)
            wait = 20.0
            if s in ("async", "sync"):
                ms = 5.0 if s == "async" else 1.0
                cmd = [t["hog"], str(self.calibrate(ms))] + (["--sync"] if s == "sync" else [])
                cmd += ["--seconds", "%d" % self.sibling_s, "--counter", counter]
            elif s == "torch":
                if not t["torch_loop"]:
                    notes.append("no torch_loop.py")
                    continue
                cmd = [a.python, os.path.join(P.HERE, "perflib.py"), "torch", counter,
                       t["torch_loop"], "--seconds", "%d" % self.sibling_s] + a.torch_args.split()
                wait = 120.0  # importing torch and building the model
            else:
                env["KREX_PERF_COUNTER"] = counter
                cmd = [sys.executable, os.path.join(P.HERE, "perflib.py"), "cpubusy",
                       str(P.ncpus()), "%d" % self.sibling_s]
            g = P.Group(P.labelled(wrap, s) + cmd, env,
                        os.path.join(self.out, "%s.%s.log" % (tag, s)), s)
            groups.append(g)
            if not P.wait_file(counter, wait, [g]):
                groups.remove(g)
                g.stop()
                notes.append("%s did not start (see %s.%s.log)" % (s, tag, s))
        return "; ".join(notes)

    def skip_rows(self, mode, mix, regions, why):
        for size in self.a.sizes:
            for r in regions:
                self.rows.append(dict(size_ms="%g" % size, mode=mode, mix=mix, region=r,
                                      note=why))

    def run_group(self, mode, mix):
        """Every size and region style of one mode with one sibling mix."""
        a, t = self.a, self.tools
        tag = "%s.%s" % (mode, mix)
        if mode in ABLATIONS:
            regions = a.ablation_regions
        elif mode == "krex":
            # One region per sample costs an entry per sample: only where asked.
            regions = [r for r in a.regions if r != "sample" or mix in a.sample_mixes]
        else:
            regions = ["none"]
        if a.budget_s and P.elapsed() > a.budget_s:
            return self.skip_rows(mode, mix, regions, "skipped: time budget spent")
        skip = None
        if mix != "none" and not t["hog"] and any(s in ("async", "sync") for s in MIXES[mix]):
            skip = "skipped: krex-hog not built"
        if mode.startswith("krex") and not (t["krexd"] and t["krex"]):
            skip = "skipped: krexd/krex not built"
        if skip:
            return self.skip_rows(mode, mix, regions, skip)
        saved = dict(self.env)
        mock = P.MockGpu(self.env, tag)
        krexd, wrap, groups, note = None, [], [], ""
        try:
            if mode.startswith("krex"):
                krexd = P.Krexd(t["krexd"], krexd_opts(a, mode), self.out, self.env, tag)
                if not krexd.wait_ready():
                    why = "skipped: krexd did not start: " + " ".join(
                        ln.strip() for ln in krexd.log_tail(2))
                    return self.skip_rows(mode, mix, regions, why[:160])
                self.env["KREX_SOCKET"] = krexd.sock
                wrap = [t["krex"], "run", "--"]
            if mix != "none":
                note = self.start_siblings(mix, wrap, tag, groups)
                if not groups:
                    return self.skip_rows(mode, mix, regions,
                                          "skipped: no sibling started: " + note)
                time.sleep(a.settle_s)
            for size in a.sizes:
                for r in regions:
                    self.measure(size, mode, mix, r, P.labelled(wrap, "victim"), note)
            for g in groups:
                if not g.alive():
                    P.log("warning: sibling %s of %s ended early" % (g.name, tag))
        finally:
            for g in groups:
                g.stop()
            if krexd:
                krexd.stop()
            mock.close()
            self.env = saved
        if krexd and P.drain_log(a):
            self.drain_per_sibling(mode, mix, krexd, groups, note)

    def drain_per_sibling(self, mode, mix, krexd, groups, note):
        """The group's drain per sibling (krexlog.py) from krexd's log and each
        sibling's own (its gate's drain lines), named as start_siblings
        labelled them."""
        parsed = krexlog.parse_krexd(krexlog.read_lines(krexd.g.logpath))
        gates = {g.name: krexlog.parse_gate(krexlog.read_lines(g.logpath)) for g in groups}
        rows = krexlog.table(parsed, lambda label, pid: label, gates, [g.name for g in groups])
        if not parsed["parts"]:
            rows = [dict(note="no participant in krexd's log (%s)" % os.path.basename(
                krexd.g.logpath))]
        if self.round is not None:
            note = ("round %d; %s" % (self.round, note)).strip("; ")
        for r in rows:
            r.update(mode=mode, mix=mix)
            if note:
                r.setdefault("note", note)  # e.g. a sibling that did not start
            self.sibling_rows.append(r)

    def run(self):
        a = self.a
        P.log("out: %s; tools: %s" % (self.out, ", ".join(
            "%s=%s" % (k, v or "MISSING") for k, v in sorted(self.tools.items()))))
        clocks_before = P.gpu_clocks()
        stopped = ""
        try:
            # Every calibration on a quiet GPU, before any sibling runs (the
            # siblings' 5 ms and 1 ms kernels included).
            for size in a.sizes + [5.0, 1.0] + ([a.spacer_ms] if a.spacer_ms > 0 else []):
                self.calibrate(size)
            # --rounds: alone and the groups in turn, each round a share
            # of the samples, pooled: the GPU's own state wanders (a
            # kernel's time moved in steps of 0.3 % for seconds on the
            # H200, alone too: notebook/h200-session-22), and a reference
            # taken only before and after can sit on another step.
            try:
                for k in range(a.rounds):
                    self.round = k if a.rounds > 1 else None
                    if "alone" in a.modes:
                        self.run_group("alone", "none")
                    for mix in a.mixes:
                        for mode in a.modes:
                            if mode in ("alone", "alone-gapped") or (
                                    mode in ABLATIONS and mix not in a.ablation_mixes):
                                continue
                            self.run_group(mode, mix)
            finally:
                self.round = None
                if a.rounds > 1:
                    self.pool_rounds()
            if "alone-gapped" in a.modes:
                self.run_gapped()
            if "alone" in a.modes:
                # The reference again: how far alone drifts over the run is
                # the noise floor the small inflations must be read against.
                for size in a.sizes:
                    self.measure(size, "alone-end", "none", "none", [])
        except P.Interrupted as e:
            stopped = "INTERRUPTED (%s): the table holds what ran before" % e
            self.failed += 1
        P.cgroups_remove()
        clocks_after = P.gpu_clocks()
        self.gapped_refs()
        self.bracket_refs()
        md = P.write_tables(self.rows, COLS, os.path.join(self.out, "fidelity.csv"),
                            os.path.join(self.out, "fidelity.md"),
                            "Timing fidelity (ms; inflation in % of alone, brk_* in % of "
                            "alone before and after pooled, gap_* in % of alone-gapped)", DIGITS)
        if self.round_rows:
            P.write_tables(self.round_rows, ["round"] + COLS[:COLS.index("infl_ev_p95_pct")] +
                           ["entry_p50", "entry_p95", "clean", "note"],
                           os.path.join(self.out, "fidelity-rounds.csv"),
                           os.path.join(self.out, "fidelity-rounds.md"),
                           "Each round's runs (pooled above)", DIGITS)
        if self.entry_rows:
            md += "\n" + P.write_tables(
                self.entry_rows, ECOLS + ["note"],
                os.path.join(self.out, "fidelity-entry.csv"),
                os.path.join(self.out, "fidelity-entry.md"),
                "Where region entry went (ms, p50/p95 per phase over the row's regions; "
                "isolate runs after the freeze; other = entry - wait - drain - freeze - "
                "isolate - settle; warm = the --region-warmup kernels)", {})
        if self.sibling_rows:
            md += "\n" + P.write_tables(
                self.sibling_rows, SCOLS, os.path.join(self.out, "fidelity-siblings.csv"),
                os.path.join(self.out, "fidelity-siblings.md"), krexlog.TITLE, krexlog.DIGITS)
        with open(os.path.join(self.out, "clocks.csv"), "w") as f:
            f.write("when,nvidia-smi\nbefore,\"%s\"\nafter,\"%s\"\n" % (clocks_before,
                                                                        clocks_after))
        print(md)
        if stopped:
            print(stopped)
        print("GPU clocks before: %s" % (clocks_before or "no nvidia-smi"))
        print("GPU clocks after:  %s" % (clocks_after or "no nvidia-smi"))
        print("in regions: %d untimed warm-up kernel(s) after each region begins; krexd "
              "queue_cap %d, queue_time %s" % (a.region_warmup, a.queue_cap, a.queue_time))
        if a.spacer_ms > 0:
            print("each sample after an untimed %g ms spacer kernel, not waited for: event "
                  "times hold GPU time only" % a.spacer_ms)
        print("calibrated iters: %s" % ", ".join(
            "%g ms=%d" % kv for kv in sorted(self.iters.items())))
        print("results: %s (%.0f s)" % (self.out, P.elapsed()))
        return 1 if self.failed else 0


def main():
    a = parse_args()
    P.on_term()
    b = Bench(a)
    if not b.tools["victim"]:
        print("krex-victim not built under %s (give --builddir or --victim)" % a.builddir)
        return 77
    try:
        return b.run()
    except RuntimeError as e:
        print("fidelity: %s" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
