#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""power_job.py - the owner and the report of test/gpu/power-proof.sh.

  power_job.py measure --label L --out FILE [--block K] [--regions N]
                       [--sizes 4096,6144,8192] [--region-ms 120] [--gap-ms G]
      the owner: N regions (python/krex), the sizes in turn, each after G ms
      in which the sibling runs; in each, 2 untimed fp16 matmuls of that size,
      then timed ones (CUDA events) for about region-ms: power-hungry kernels
      that reach the GPU's power cap by themselves.  One JSON line per region:
      size, times, the certificate's outcome, note and GPU fields.  Without
      krexd (KREX_UNPROTECTED=1) it is the "alone" reference.  The lines are
      appended to FILE with the block number K, so that a mode measured in
      several blocks (interleaved with the others) is one file.
  power_job.py report DIR
      the table of the proof (issue 19): per mode, regions, clean / degraded,
      how many were degraded for the owner's own cap (settled at the grant,
      degraded for a power cap or a low clock: goal 0 with settle = wait),
      how many reached their own cap (the kernels are power-bound), p50 per
      size versus alone (goal within 2 % with wait), and with settle = off how
      many of the regions that started capped were degraded (goal: all).
      The blocks of a mode are pooled; a second table gives each block's
      p50 per size against the pooled alone, which shows the GPU's drift.

The sibling is settle_job.py's hog (8192x8192 fp16 matmuls back to back).

With KREX_POWER_MOCK=1 (no GPU, no torch: a dry run of the script on the mock
NVML; the timings are a CPU busy loop and MEAN NOTHING): before each region
the owner rewrites the mock NVML script ($KREX_MOCK_NVML) as a sibling that
just stopped leaves the GPU (capped at 1500 MHz, back 300 ms later), and
inside the region, once krexd has read the grant's sample (the mock's read log
$KREX_MOCK_NVML_LOG), it starts its "work", an event line of the script that
puts the GPU at its power cap (1650 MHz, sw_power_cap): the owner's own cap.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
from settle_job import load, matmul_timer, pct  # noqa: E402

MOCK = os.environ.get("KREX_POWER_MOCK") == "1"
CAP = 0x4  # sw_power_cap
BENIGN = 0x1 | 0x2  # gpu_idle, app_clocks_setting


def mock_log():
    try:
        with open(os.environ["KREX_MOCK_NVML_LOG"]) as f:
            return [line.split()[0] for line in f if line.strip()]
    except OSError:
        return []


def mock_log_lines(kind):
    return sum(1 for k in mock_log() if k == kind)


def grant_sampled(temps):
    """krexd read the grant's sample: a clock read after temperature read temps+1."""
    seen = 0
    for k in mock_log():
        if k == "temp":
            seen += 1
        elif k == "clock" and seen > temps:
            return True
    return False


def wait_until(cond, limit_s=10.0):
    end = time.time() + limit_s
    while not cond() and time.time() < end:
        time.sleep(0.005)


def mock_story(i):
    """The GPU as a power-hungry sibling that just stopped leaves it, and the
    owner's own cap as an event line (its work file, touched in the region)."""
    path = os.environ["KREX_MOCK_NVML"]
    work = "%s.work%d" % (path, i)
    with open(path + ".tmp", "w") as f:
        f.write("# TEST DOUBLE story: a power-hungry sibling just stopped; the owner's work caps\n"
                "max=1980 app=1980\n0 sm=1500 reasons=0x4 temp=72\n"
                "300 sm=1980 reasons=0 temp=66\n"
                "on=%s sm=1650 reasons=0x4 temp=70\n" % work)
    os.rename(path + ".tmp", path)
    return work


def mock_work(work, temps, samples):
    """Inside a region: start the owner's work once krexd read the grant's
    sample (a temperature read, then a clock read), and end it once krexd
    sampled it `samples` times (0: settle = off samples the edges only)."""
    wait_until(lambda: grant_sampled(temps))
    with open(work, "w"):
        pass
    n = mock_log_lines("clock")
    if samples:
        wait_until(lambda: mock_log_lines("clock") >= n + samples)


def timer(size, region_ms):
    """(timed(), samples per region) for one size."""
    if MOCK:
        def timed():
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 0.0002 * size / 4096:
                pass
            return (time.perf_counter() - t0) * 1e3
        return timed, 10
    timed = matmul_timer(size)
    for _ in range(10):
        timed()
    est = sorted(timed() for _ in range(5))[2]
    return timed, max(10, int(region_ms / max(est, 1e-3)))


def measure(a):
    import krex
    sizes = [int(s) for s in a.sizes.split(",")]
    timers = {s: timer(s, a.region_ms) for s in sizes}
    with open(a.out, "a") as out:
        for i in range(a.regions):
            size = sizes[i % len(sizes)]
            timed, n = timers[size]
            time.sleep(a.gap_ms / 1e3)  # the sibling runs meanwhile
            work = mock_story(i) if MOCK else None
            temps = mock_log_lines("temp") if MOCK else 0
            t0 = time.perf_counter()
            with krex.region(unprotected_ok=True) as cert:
                t_in = time.perf_counter()
                if MOCK and cert is not None and not a.label.startswith("alone"):
                    mock_work(work, temps, 0 if a.label == "off" else 2)
                timed(), timed()  # untimed warm-up, as benchmark tools do
                times = [timed() for _ in range(n)]
            keys = ("outcome_name", "note", "settle_us", "held_us", "throttle_start",
                    "sm_clock_start_mhz", "sm_clock_min_mhz", "sm_clock_max_mhz",
                    "sm_clock_nominal_mhz", "clock_samples", "violation_power_us",
                    "own_power_cap_us", "own_power_cap_first_us", "own_power_cap_samples")
            rec = {"label": a.label, "block": a.block, "i": i, "size": size, "times_ms": times,
                   "entry_ms": (t_in - t0) * 1e3}
            rec.update({k: cert.get(k) for k in keys})
            out.write(json.dumps(rec) + "\n")
            out.flush()
    return 0


def started_capped(r):
    return bool((r.get("throttle_start") or 0) & ~BENIGN)


def own_degraded(r):
    """Degraded although the region started settled and the note is about
    the power cap or a low clock only: the owner's own cap called degraded."""
    if r["outcome_name"] != "degraded" or started_capped(r):
        return False
    causes = [c.strip() for c in (r["note"] or "").split(";") if c.strip()]
    return bool(causes) and all(c.startswith(("power cap", "SM clock low")) for c in causes)


def report(d):
    modes = [m for m in ("alone", "wait", "off", "mark", "alone-end")
             if os.path.exists(os.path.join(d, m + ".jsonl"))]
    if "alone" not in modes:
        print("no alone.jsonl in", d)
        return 1
    data = {m: load(os.path.join(d, m + ".jsonl")) for m in modes}
    sizes = sorted({r["size"] for r in data["alone"]})
    ref = {s: pct([t for r in data["alone"] if r["size"] == s for t in r["times_ms"]], 0.5)
           for s in sizes}
    goal = 2.0
    lines = []
    if MOCK:
        lines.append("MOCK RUN (mock NVML, CPU busy loop): the timings MEAN NOTHING; "
                     "the counts check the script and the rule only.")
    lines.append("| mode | regions | clean | degraded | degraded for own cap | own cap reached | "
                 "started capped / of them degraded | settle p50 / max ms | p50 vs alone per size |")
    lines.append("|" + "---|" * 9)
    fails = []
    for m in modes:
        rs = data[m]
        alone = m.startswith("alone")
        clean = sum(1 for r in rs if r["outcome_name"] == "clean")
        degr = [r for r in rs if r["outcome_name"] == "degraded"]
        own_deg = sum(1 for r in rs if own_degraded(r))
        own_cap = sum(1 for r in rs if (r.get("own_power_cap_us") or 0) > 0)
        capped = [r for r in rs if started_capped(r)]
        capped_deg = sum(1 for r in capped if r["outcome_name"] == "degraded")
        st = [r["settle_us"] / 1e3 for r in rs if r.get("settle_us") is not None]
        vs = {}
        for s in sizes:
            t = [x for r in rs if r["size"] == s for x in r["times_ms"]]
            vs[s] = (pct(t, 0.5) / ref[s] - 1) * 100 if t else float("nan")
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            m, len(rs), "-" if alone else clean, "-" if alone else len(degr),
            "-" if alone else own_deg, "-" if alone else own_cap,
            "-" if alone else "%d / %d" % (len(capped), capped_deg),
            "%.1f / %.1f" % (pct(st, 0.5), max(st)) if st else "-",
            ", ".join("%d: %+.1f%%" % (s, vs[s]) for s in sizes)))
        if m == "wait":
            if own_deg:
                fails.append("wait: %d region(s) degraded for the owner's own cap" % own_deg)
            worst = max(abs(v) for v in vs.values())
            if not MOCK and worst > goal:
                fails.append("wait: p50 %.1f%% from alone (goal %g%%)" % (worst, goal))
        if m == "off" and capped_deg < len(capped):
            fails.append("off: %d region(s) started capped and were not degraded"
                         % (len(capped) - capped_deg))
    notes = {}
    for m in modes:
        for r in data[m]:
            if r["outcome_name"] == "degraded":
                for c in (r["note"] or "").split(";"):
                    key = "%s: %s" % (m, c.split(": ")[0].strip())
                    notes[key] = notes.get(key, 0) + 1
    lines.append("")
    lines.append("p50 per block vs the pooled alone (the blocks in the order of the run):")
    lines.append("")
    lines.append("| mode | block | regions | " + " | ".join(str(s) for s in sizes) + " |")
    lines.append("|" + "---|" * (3 + len(sizes)))
    for m in modes:
        for b in sorted({r.get("block", 1) for r in data[m]}):
            rs = [r for r in data[m] if r.get("block", 1) == b]
            cells = []
            for s in sizes:
                t = [x for r in rs if r["size"] == s for x in r["times_ms"]]
                cells.append("%+.1f%%" % ((pct(t, 0.5) / ref[s] - 1) * 100) if t else "-")
            lines.append("| %s | %d | %d | %s |" % (m, b, len(rs), " | ".join(cells)))
    lines.append("")
    lines.append("degraded causes: " + ("; ".join("%s (x%d)" % kv for kv in sorted(notes.items()))
                                        or "none"))
    lines.append("verdict%s: %s" % (" (counts only, mock run)" if MOCK else "",
                                    "PASS" if not fails else "FAIL: " + "; ".join(fails)))
    text = "\n".join(lines)
    with open(os.path.join(d, "table.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0 if not fails else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--label", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--block", type=int, default=1)
    m.add_argument("--regions", type=int, default=24)
    m.add_argument("--sizes", default="4096,6144,8192")
    m.add_argument("--region-ms", type=float, default=120)
    m.add_argument("--gap-ms", type=float, default=300)
    r = sub.add_parser("report")
    r.add_argument("dir")
    a = ap.parse_args()
    return {"measure": measure, "report": lambda a: report(a.dir)}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
