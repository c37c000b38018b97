#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""krexlog - where a region's drain went, per sibling, from the debug logs.

krexd at log_level=debug logs, per region, when the gates closed, each
sibling's drain acknowledgement (krexd's wait for it and the gate's own drain
time, as the ack carries it), the grant, the region's cost (entry_us: gates
closed to grant; exit_us: the unwind) and its end (held).  Each gate at
KREX_LOG=debug logs its own drain: its time, the time spent waiting for calls
already inside the driver, rounds, passes (parked threads let through), the
launches those passes let through, those let onto busy streams, the threads
parked at its start, and (newer gates) its wait for contexts being made
(KREX_GATE_CONTEXTS=finish; parse_gate()'s ctx_us, 0 from older gates).  The
benchmark drivers (fidelity.py, agents.py) name their participants with
`krex run --label`, and krexd logs each label when the participant
registers: that maps a participant to the sibling (workload or role) the
driver started.  This module turns those logs into one row per sibling:

  sibling        the name the driver gave it (its label, or its role)
  participants   krexd participants with that name
  drains         drain acknowledgements krexd received from it
  slowest        regions whose drain it ended (its ack was the last one)
  wait_*_ms      krexd's wait for its ack, gates closed to ack (p50/p95/max)
  own_*_ms       the gate's own drain, as its ack carries it (p50/p95/max)
  failed         acks with a non-zero status (late or incomplete drain)
  gated_ms       time its GPU work outside regions could not run: from the
                 gates closing to the end of the region's unwind (entry_us +
                 held + exit_us of krexd's lines), summed over the regions it
                 was drained for; a chained region counts for the siblings
                 of the region it follows (they stay frozen, never drained
                 again)
  gate_drains    drains its gate logged (0 when its log was not read)
  in_driver_p95_ms  the gate's wait for calls already inside the driver
  passes, let_through  the gate's passes and the launches they let through,
                 summed: work it had to release itself
  onto_busy      launches its gate let through onto streams busy in a
                 drain's first round, summed (older gates: 0)
  parked_max     most threads parked at its gate when a drain began

No figure of krexd's ack line is invented: what the wire carries (the drain
time and status) is all krexd can log.  Stdlib only.

  krexlog.py KREXD_LOG [GATE_LOG=NAME ...]     the table, markdown, on stdout
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perflib as P  # noqa: E402

RE_REG = re.compile(r"participant (\d+): pid (\d+) uid \d+ job \S+ '(.*)' cgroup ")
RE_ACK = re.compile(r"region (\d+): participant (\d+) \(pid (\d+)\) acknowledged the drain "
                    r"after (\d+) us, its own drain (\d+) us, status (\d+)")
RE_CLOSED = re.compile(r"region (\d+): gates closed \(generation \d+\), \d+ siblings, "
                       r"\d+ acks due( \(chained\))?")
RE_GRANT = re.compile(r"region (\d+): granted to participant (\d+) ")
RE_COST = re.compile(r"region (\d+): cost .*\bentry_us=(\d+) .*\bexit_us=(\d+)")
RE_END = re.compile(r"region (\d+) ends \(\d+\): outcome \d+, held (\d+) us")
RE_GATE = re.compile(r"krex-gate: debug: drain: (\d+) us \(calls inside the driver: (\d+) us\), "
                     r"(\d+) round\(s\), (\d+) pass\(es\), (\d+) launch\(es\) let through, "
                     r"(?:(\d+) onto busy streams, )?"
                     r"(\d+) thread\(s\) parked at the start, status (-?\d+)"
                     r"(?:, contexts being made (\d+) us)?")

COLS = ["sibling", "participants", "drains", "slowest", "wait_p50_ms", "wait_p95_ms",
        "wait_max_ms", "own_p50_ms", "own_p95_ms", "own_max_ms", "failed", "gated_ms",
        "gate_drains", "in_driver_p95_ms", "passes", "let_through", "onto_busy", "parked_max"]
DIGITS = {c: 3 for c in COLS if c.endswith("_ms")}
DIGITS["gated_ms"] = 1
TITLE = ("Drain per sibling (ms; wait: krexd's, gates closed to the ack; own: the gate's "
         "drain; slowest: regions whose drain it ended; gated: its non-region GPU work held "
         "back, gates closed to unwind end; passes/let_through/onto_busy/parked: the gate's own line)")


def parse_krexd(lines):
    """krexd's debug log -> dict(parts={id: (pid, label)}, acks=[(region, part,
    pid, wait_us, own_us, status)], regions={id: dict(entry_us, exit_us,
    held_us, chained_after)})."""
    parts, acks, regions = {}, [], {}
    last_granted = None
    for ln in lines:
        m = RE_ACK.search(ln)
        if m:
            acks.append(tuple(int(x) for x in m.groups()))
            continue
        m = RE_REG.search(ln)
        if m:
            parts[int(m.group(1))] = (int(m.group(2)), m.group(3))
            continue
        m = RE_CLOSED.search(ln)
        if m:
            r = regions.setdefault(int(m.group(1)), {})
            r["chained_after"] = last_granted if m.group(2) else None
            continue
        m = RE_GRANT.search(ln)
        if m:
            last_granted = int(m.group(1))
            continue
        m = RE_COST.search(ln)
        if m:
            r = regions.setdefault(int(m.group(1)), {})
            r["entry_us"], r["exit_us"] = int(m.group(2)), int(m.group(3))
            continue
        m = RE_END.search(ln)
        if m:
            regions.setdefault(int(m.group(1)), {})["held_us"] = int(m.group(2))
    return dict(parts=parts, acks=acks, regions=regions)


def parse_gate(lines):
    """A process's stderr (KREX_LOG=debug) -> one dict per gate drain line."""
    out = []
    for ln in lines:
        m = RE_GATE.search(ln)
        if m:
            v = [int(x) if x is not None else 0 for x in m.groups()]
            out.append(dict(us=v[0], in_driver_us=v[1], rounds=v[2], passes=v[3],
                            let_through=v[4], onto_busy=v[5], parked=v[6], status=v[7],
                            ctx_us=v[8]))
    return out


RE_CTX_HELD = re.compile(r"krex-gate: debug: context: held (\d+) us at a closed gate")


def context_held_s(lines):
    """A process's stderr (KREX_LOG=debug) -> seconds its new GPU contexts
    waited at a closed gate, summed (0.0 when none waited)."""
    return sum(int(m.group(1)) for m in map(RE_CTX_HELD.search, lines) if m) / 1e6


def read_lines(path):
    """The lines of a log; [] when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def gated_us(parsed):
    """participant id -> us its non-region GPU work was held back (COLS)."""
    stopped, out = {}, {}
    for rid, part, _pid, _w, _o, _s in parsed["acks"]:
        stopped.setdefault(rid, set()).add(part)
    for rid in sorted(parsed["regions"]):
        r = parsed["regions"][rid]
        prev = r.get("chained_after")
        if prev is not None:
            stopped[rid] = stopped.get(rid, set()) | stopped.get(prev, set())
        if not all(k in r for k in ("entry_us", "exit_us", "held_us")):
            continue  # the region did not end in this log
        for p in stopped.get(rid, ()):
            out[p] = out.get(p, 0) + r["entry_us"] + r["held_us"] + r["exit_us"]
    return out


def table(parsed, name_of, gates=None, expected=()):
    """One row (COLS) per sibling.  name_of(label, pid) names a participant's
    sibling (None: leave it out); gates maps a sibling to its gate drain lines
    (parse_gate); expected siblings get a row even without a drain."""
    gates = gates or {}
    names = {pid: name_of(label, pid) for pid, (_, label) in parsed["parts"].items()}
    rows = {}

    def row(name):
        return rows.setdefault(name, dict(sibling=name, ids=set(), wait=[], own=[], failed=0,
                                          slowest=0, gated=0))
    for name in expected:
        row(name)
    for pid, name in names.items():
        if name is not None:
            row(name)["ids"].add(pid)
    last = {}
    for rid, part, _pid, wait, own, status in parsed["acks"]:
        name = names.get(part)
        if name is None:
            if part in parsed["parts"]:
                continue  # named, but left out by name_of
            name = "participant %d" % part  # registered before the log began
            row(name)["ids"].add(part)
        r = row(name)
        r["wait"].append(wait / 1000.0)
        r["own"].append(own / 1000.0)
        r["failed"] += status != 0
        if rid not in last or wait >= last[rid][0]:
            last[rid] = (wait, name)
    for wait, name in last.values():
        rows[name]["slowest"] += 1
    for part, us in gated_us(parsed).items():
        name = names.get(part, "participant %d" % part)
        if name in rows:
            rows[name]["gated"] += us
    out = []
    for name in sorted(rows, key=lambda n: (n not in expected, str(n))):
        r = rows[name]
        d = dict(sibling=name, participants=len(r["ids"]), drains=len(r["wait"]),
                 slowest=r["slowest"], failed=r["failed"], gated_ms=r["gated"] / 1000.0)
        for key, v in (("wait", r["wait"]), ("own", r["own"])):
            d[key + "_p50_ms"] = P.percentile(v, 50)
            d[key + "_p95_ms"] = P.percentile(v, 95)
            d[key + "_max_ms"] = max(v) if v else None
        g = gates.get(name)
        if g is not None:
            d["gate_drains"] = len(g)
            d["in_driver_p95_ms"] = P.percentile([x["in_driver_us"] / 1000.0 for x in g], 95)
            d["passes"] = sum(x["passes"] for x in g)
            d["let_through"] = sum(x["let_through"] for x in g)
            d["onto_busy"] = sum(x["onto_busy"] for x in g)
            d["parked_max"] = max((x["parked"] for x in g), default=None)
        out.append(d)
    return out


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if len(argv) > 1 else 2
    parsed = parse_krexd(read_lines(argv[1]))
    if not parsed["parts"] and not parsed["acks"]:
        sys.stderr.write("krexlog.py: %s: no participant or drain line (krexd at "
                         "log_level=debug?)\n" % argv[1])
        return 1
    gates = {}
    for a in argv[2:]:
        path, sep, name = a.rpartition("=")
        if not sep:
            sys.stderr.write("krexlog.py: %s: give a gate log as PATH=SIBLING\n" % a)
            return 2
        gates.setdefault(name, []).extend(parse_gate(read_lines(path)))
    rows = table(parsed, lambda label, pid: label, gates, sorted(gates))
    sys.stdout.write(markdown(rows, ["sibling"] + COLS[1:]))
    return 0


def markdown(rows, cols, title=TITLE):
    lines = ["## " + title, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(P.fmt(r.get(c), DIGITS.get(c, 4)) for c in cols) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
