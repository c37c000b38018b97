#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""entry_split.py LOG... - where region entry goes, from krexd's debug log.
   entry_split.py --cost-table DIR LABEL... - freeze-scale.sh's table.
   entry_split.py --owner CERTS KREXD_LOG - the owner's side of each entry.

krexd at log_level=debug writes one line per grant:
  region N: granted to participant P (wait W drain D freeze F us; settle S us;
  isolate I us, after the freeze)
This prints, per phase, how many grants, p50 and p95 in milliseconds (doc/performance.md
"One region per sample with every sibling"; fidelity.py --krexd-opt log_level=debug
keeps such a log).  It also writes one line per region when it ends:
  region N: cost siblings=S entry_us=.. isolate_us=.. iso_cpuset=.. ... state_us=..
from which this prints p50/p95/p99 of krexd's own work per region, the
parts of the process list at a region's start (its thread's lines), and from
its 'freeze poll' lines the last poll round of each freeze: what started it
(the timer or a cgroup.events change) and the gap since the round before;
and from its 'freeze laggard' lines (a freeze still going at 5 ms) where the
siblings not yet frozen were: their tasks' states, wait channels, syscalls;
and, for the tasks not frozen then, followed to the freeze's end, how much of
that time they ran and how much they waited for a CPU.
With --owner, krex-victim's --certs file (each krex_region_begin's call and
return, CLOCK_MONOTONIC) is set against the same regions' cost lines
(conn_ns: the accept of the region's connection, or, on the connection
libregion keeps between regions, the BEGIN's first byte; enq_ns, close_ns,
grant_ns): how long before krexd queued the request (to krexd's first sight
of it, and from there), inside krexd, and after the grant until the call
returned.
With --cost-table, the logs test/perf/freeze-scale.sh left in DIR
(LABEL-FREEZER-SIBLINGS.log and .bench) become one table, the krexds side by side.
"""
import os
import re
import sys

PHASES = ["wait", "drain", "freeze", "settle", "isolate"]


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))] if v else float("nan")


COST = ["entry_us", "freeze_us", "fz_prepare_us", "fz_start_us", "fz_poll_us", "fz_polls",
        "fz_woken", "isolate_us", "iso_cpuset", "iso_affinity", "undo_us", "thaw_us", "exit_us",
        "state_writes", "state_us", "entry_rq_us", "exit_rq_us", "thaw_rq_us"]


def cost_lines(path):
    """{key: [values]} from the 'cost' lines of one krexd log."""
    return cost_lines_from([ln for ln in open(path, errors="replace") if ": cost siblings=" in ln])


def cost_print(lines):
    vals = cost_lines_from(lines)
    if not vals:
        return
    print("\nkrexd's own work per region (%d regions), p50 / p95 / p99:" % len(vals.get("entry_us", [])))
    for k in COST:
        v = vals.get(k, [])
        if v:
            print("%-14s %9.0f %9.0f %9.0f" % (k, pct(v, 0.5), pct(v, 0.95), pct(v, 0.99)))


def cost_lines_from(lines):
    out = {}
    for ln in lines:
        for k, v in re.findall(r"(\w+)=(\d+)", ln.split(": cost ", 1)[1]):
            out.setdefault(k, []).append(int(v))
    return out


def cost_table(d, labels):
    """freeze-scale.sh's table: rows freezer/siblings/phase, a p50/p95/p99 column group per krexd."""
    runs = {}
    for name in sorted(os.listdir(d)):
        m = re.match(r"(.+)-(cgroup1|cgroup2|signal)-(\d+)\.log$", name)
        if m and m.group(1) in labels:
            runs[(m.group(2), int(m.group(3)), m.group(1))] = os.path.join(d, name)
    if not runs:
        print("entry_split: no freeze-scale logs in %s" % d)
        return 1
    head = "%-8s %4s %-14s" % ("freezer", "sibs", "phase (us)")
    for lb in labels:
        head += " | %-27s" % (lb + " p50/p95/p99")
    print(head)
    for f, n in sorted({(f, n) for f, n, _ in runs}, key=lambda x: (x[0], x[1])):
        per = {}
        for lb in labels:
            path = runs.get((f, n, lb))
            per[lb] = cost_lines(path) if path else {}
            bench = path[:-4] + ".bench" if path else None
            if bench and os.path.exists(bench):
                for k, v in re.findall(r"(p50|p95|p99)_us=([\d.]+)", open(bench).read()):
                    per[lb].setdefault("rtt_" + k, []).append(float(v))
        for k in ["round_trip"] + COST:
            row = "%-8s %4d %-14s" % (f, n, k)
            any_v = False
            for lb in labels:
                v = per[lb]
                if k == "round_trip" and "rtt_p50" in v:
                    cell = "%8.0f %8.0f %8.0f" % (v["rtt_p50"][0], v["rtt_p95"][0], v["rtt_p99"][0])
                    any_v = True
                elif v.get(k):
                    cell = "%8.0f %8.0f %8.0f" % (pct(v[k], 0.5), pct(v[k], 0.95), pct(v[k], 0.99))
                    any_v = True
                else:
                    cell = "%8s %8s %8s" % ("-", "-", "-")
                row += " | " + cell + "  "
            if any_v:
                print(row)
    print("round_trip: the owner's begin -> grant -> end -> cert (krex-testclient bench); the rest from krexd's 'cost' log lines.")
    return 0


# The process list at a region's start (krexd/gpuprocs.c), from its debug lines.
PROCS = [
    ("telemetry at start, on the loop", r"telemetry at start (\d+) us"),
    ("process list (NVML)", r"processes on the GPU: \d+ listed in (\d+) us"),
    ("  queued for its thread", r"listed in \d+ us \(queued (\d+) us"),
    ("nominal clocks (thread)", r"nominal clocks read on the process-list thread in (\d+) us"),
    ("  cgroups read", r"cgroups read in (\d+) us"),
    ("  mapped, on the loop", r"mapped in (\d+) us on the loop"),
    ("  in after the close", r"on the loop, (\d+) us after the close"),
    ("certificate waited for it", r"its certificate waited (\d+) us for the process list"),
]


def procs_print(lines):
    """p50/p95/max of the process list's parts, in microseconds."""
    rows = []
    for name, rx in PROCS:
        v = [int(m.group(1)) for ln in lines for m in [re.search(rx, ln)] if m]
        if v:
            rows.append("%-34s %6d %9d %9d %9d" % (name, len(v), pct(v, 0.5), pct(v, 0.95), max(v)))
    if rows:
        print("\nthe process list at a region's start (us)   n       p50       p95       max")
        print("\n".join(rows))


POLL = re.compile(r"region (\d+): freeze poll (\d+) at \+(\d+) us \((\S+)\): "
                  r"(\d+) of (\d+) frozen")


def polls_print(lines):
    """The freeze's last poll round of each region (its debug lines: 'freeze
    poll K at +T us (timer|cgroup.events): F of S frozen; next in N us'):
    what started it, when it came, and the gap since the round before it, in
    which the last sibling froze (krexd saw it at most that late)."""
    last = {}
    for ln in lines:
        m = POLL.search(ln)
        if m:
            rid, k, t = int(m.group(1)), int(m.group(2)), int(m.group(3))
            prev = last.get(rid, (0, 0, 0, ""))[2] if k > 1 else 0
            last[rid] = (k, prev, t, m.group(4))
    multi = [v for v in last.values() if v[0] > 1]
    if not multi:
        return
    print("\nthe freeze's last poll round, %d regions (%d over at the first look):"
          % (len(last), len(last) - len(multi)))
    for src in sorted({v[3] for v in multi}):
        v = [x for x in multi if x[3] == src]
        at, gap = [x[2] for x in v], [x[2] - x[1] for x in v]
        print("  started by %-14s %5d   at +us p50/p95 %6d %6d   gap since the round before "
              "p50/p95 %6d %6d" % (src, len(v), pct(at, 0.5), pct(at, 0.95), pct(gap, 0.5),
                                   pct(gap, 0.95)))


LAG = re.compile(r"freeze laggard at \+(\d+) us: participant (\d+) \(pid -?\d+\): (\d+) tasks, "
                 r"(\d+) frozen, (\d+) R, (\d+) D, (\d+) S(?:, (\d+) exiting)?; "
                 r"not frozen: ?(.*)$")


def laggards_print(lines):
    """The freezes still going at 5 ms (krexd's 'freeze laggard' lines, one
    per sibling not yet frozen, at most 8 a region): where those siblings'
    tasks were, and the not-frozen examples' wait channels and syscalls
    (STATE:WCHAN:SYSCALL; syscall -1: in user mode, 'running': on a CPU)."""
    regions, sibs, tot, where, exiting = set(), 0, [0, 0, 0, 0, 0], {}, None
    for ln in lines:
        m = LAG.search(ln)
        if not m:
            continue
        rid = re.search(r"region (\d+):", ln)
        regions.add(rid.group(1) if rid else ln)
        sibs += 1
        n, fz, r, d, sl = (int(m.group(i)) for i in range(3, 8))
        for i, v in enumerate((fz, r, d, sl, n - fz - r - d - sl)):
            tot[i] += v
        if m.group(8) is not None:  # krexd from session 33 on counts them
            exiting = (exiting or 0) + int(m.group(8))
        for ex in m.group(9).split():
            parts = ex.split(":")
            if len(parts) == 4:
                key = ":".join(parts[1:])
                where[key] = where.get(key, 0) + 1
    if not sibs:
        return
    cost = [int(m.group(1)) for ln in lines for m in [re.search(r"laggards read in (\d+) us", ln)]
            if m]
    print("\nfreezes past 5 ms: %d regions, %d siblings not yet frozen; their tasks: "
          "%d frozen, %d R (runnable), %d D, %d S, %d other%s" % (
              len(regions), sibs, *tot,
              "" if exiting is None else "; of those not frozen %d exiting" % exiting))
    if cost:
        print("  krexd's reads of them: p50 / max %d / %d us a region" % (pct(cost, 0.5), max(cost)))
    for key, c in sorted(where.items(), key=lambda kv: -kv[1])[:12]:
        print("  %5d  %s" % (c, key))
    follow_print(lines)


FOLLOW = re.compile(r"freeze laggards followed (\d+) us to the freeze's end: .*?;(.*)$")


def follow_print(lines):
    """The tasks not frozen at the look, followed to the freeze's end
    (krexd's 'freeze laggards followed' lines: TID:STATE:RAN_US:WAITED_US,
    or TID:STATE:gone for a task gone since; STATE at the look, X exiting):
    per state, how many left before the freeze's end, and of the rest their
    CPU time and their wait for a CPU as shares of the time followed (the
    rest: asleep, or frozen).  A task's wait is its schedstat run_delay's
    growth, which the kernel adds when the task next runs, for the whole
    wait: a task runnable since before the look gets its earlier wait too.
    Each task's ran and waited count at most the time followed, so that
    neither share passes 100 %."""
    agg = {}
    for ln in lines:
        m = FOLLOW.search(ln)
        if not m:
            continue
        span = int(m.group(1))
        for tok in m.group(2).split():
            if not re.match(r"^\d+:[A-Z]:(gone|\d+:\d+)$", tok):
                continue
            f = tok.split(":")
            a = agg.setdefault(f[1], [0, 0, 0, 0, 0])
            if f[2] == "gone":
                a[4] += 1
            else:
                a[0] += 1
                a[1] += span
                a[2] += min(int(f[2]), span)
                a[3] += min(int(f[3]), span)
    if not agg:
        return
    print("  followed from the look to the freeze's end (X: exiting at the look; gone: "
          "left before the end; ms summed over the tasks still there):")
    for st in sorted(agg, key=lambda x: "RDSX".find(x) % 5):
        n, span, ran, wait, gone = agg[st]
        print("    %s %4d gone, %4d there  %9.1f ms followed  ran %8.1f (%3.0f %%)  waited for a "
              "CPU %8.1f (%3.0f %%)" % (st, gone, n, span / 1e3, ran / 1e3,
                                        100.0 * ran / span if span else 0, wait / 1e3,
                                        100.0 * wait / span if span else 0))


def owner_split(certs, log):
    """The owner's krex_region_begin (krex-victim --certs: region id, call
    and return in CLOCK_MONOTONIC ns) against krexd's cost line of the same
    region (conn_ns, enq_ns, close_ns, grant_ns): before krexd queued the
    request (split at krexd's accept of the region's connection, or the
    BEGIN's first byte on a kept one), inside
    krexd, and after its grant until the call returned."""
    k = {}
    for ln in open(log, errors="replace"):
        m = re.search(r"region (\d+): cost .*\bconn_ns=(\d+) enq_ns=(\d+) close_ns=(\d+) "
                      r"grant_ns=(\d+)", ln)
        if m:
            k[int(m.group(1))] = tuple(int(x) for x in m.groups()[1:])
    parts = {"before krexd (call to queued)": [], "  call to krexd's first sight": [],
             "  first sight to queued": [], "krexd (queued to grant)": [],
             "after the grant (to return)": [], "the whole call": []}
    for ln in open(certs):
        t = ln.split()
        if len(t) < 11 or int(t[8]) not in k:
            continue
        t0, t1 = int(t[9]), int(t[10])
        acc, enq, _, grant = k[int(t[8])]
        if not (t0 <= acc <= enq <= grant <= t1):
            continue  # not the same clock, or not this region's connection
        parts["before krexd (call to queued)"].append((enq - t0) / 1000.0)
        parts["  call to krexd's first sight"].append((acc - t0) / 1000.0)
        parts["  first sight to queued"].append((enq - acc) / 1000.0)
        parts["krexd (queued to grant)"].append((grant - enq) / 1000.0)
        parts["after the grant (to return)"].append((t1 - grant) / 1000.0)
        parts["the whole call"].append((t1 - t0) / 1000.0)
    n = len(parts["the whole call"])
    if not n:
        print("entry_split: no region of %s found in %s (krexd at log_level=debug, a krex-victim "
              "with --certs of this version)" % (certs, log))
        return 1
    print("the owner's krex_region_begin against krexd's log, %d regions (us)" % n)
    print("%-32s %9s %9s %9s %9s" % ("part", "p50", "p95", "p99", "max"))
    for name, v in parts.items():
        print("%-32s %9.0f %9.0f %9.0f %9.0f" % (name, pct(v, 0.5), pct(v, 0.95), pct(v, 0.99), max(v)))
    return 0


def main(paths):
    lines = [ln for p in paths for ln in open(p, errors="replace") if ": granted to participant" in ln]
    if not lines:
        print("entry_split: no 'granted' lines (krexd needs log_level=debug)")
        return 1
    print("phase    grants   p50_ms   p95_ms")
    for ph in PHASES:
        v = [int(m.group(1)) / 1000 for ln in lines for m in [re.search(r"\b%s (\d+)" % ph, ln)] if m]
        print("%-8s %6d %8.3f %8.3f" % (ph, len(v), pct(v, 0.5), pct(v, 0.95)))
    cost_print([ln for p in paths for ln in open(p, errors="replace") if ": cost siblings=" in ln])
    procs_print([ln for p in paths for ln in open(p, errors="replace")])
    polls_print([ln for p in paths for ln in open(p, errors="replace") if ": freeze poll " in ln])
    laggards_print([ln for p in paths for ln in open(p, errors="replace")
                    if ": freeze laggard" in ln])
    return 0


def usage():
    sys.stderr.write(__doc__.split("\n\n")[0] + "\n")
    return 2


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--owner":
        sys.exit(owner_split(sys.argv[2], sys.argv[3]))
    if len(sys.argv) > 2 and sys.argv[1] == "--cost-table":
        sys.exit(cost_table(sys.argv[2], sys.argv[3:] or ["now"]))
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(usage())
    try:
        sys.exit(main(sys.argv[1:]))
    except OSError as e:
        sys.stderr.write("entry_split: %s\n" % e)
        sys.exit(1)
