#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""harmless.py - the proof that KREX does no harm to its siblings (doc/harmless.md).

Frameworks run as siblings, each a separate process checking its own results
against the same computation done without KREX and printing one JSON line at
the end (sib_common.py).  Each run has two passes of --seconds each, with the
same seeds:

  base  the siblings alone: no krexd, no gate (their own warnings, their own
        results: the baseline)
  krex  the siblings under `krex run`, while a measuring job (measure.py,
        also under `krex run`) takes regions at random moments: right after
        the siblings start, after random gaps of 0-50 ms, and at once when a
        sibling begins a capture, a compilation or an autotuning

and a report per run: framework | iterations | crashes | new warnings/errors
(lines the krex pass printed that the base pass did not, normalised) | wrong
results | regions (in capture/compile/autotune) | certificates
clean/degraded/other | undo failures (krexd's log) | left frozen/pinned
(every task of every sibling, /proc and the cgroup, after the last region,
against before), as markdown and JSON in --out.

  harmless.py --builddir BUILD [--seconds 45] [--runs 1] [--out DIR]
  harmless.py --mock --builddir BUILD ...    (the mock driver: harness logic only)

Exit status: 0 when every run meets the goal (0 crashes, 0 new errors, 0
wrong results, 0 undo failures, nothing left frozen or pinned, every
certificate clean or honestly degraded), 1 when one fails, 3 when a run is
incomplete (a framework missing, too few regions, the base pass itself not
clean), 2 for a usage or set-up error.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "test", "perf"))
import perflib as P  # noqa: E402
import procstate as PS  # noqa: E402

REAL = ["torch-eager", "torch-graphs", "torch-compile", "jax", "cupy", "triton", "cuda-capture",
        "cuda-reset", "cuda-green"]
# cuda-reset: sib_capture --reset, mock-reset's twin on a real driver (its
# device reset every third iteration, in a "compile" phase); cuda-green:
# sib_capture --green, a green context made, used and destroyed instead.
# mock-hostrelease: XLA's timer shape (a host function that blocks the
# stream until its launching thread releases it after more launches).
MOCK = ["mock-async", "mock-sync", "mock-threads", "mock-procaddr", "mock-hostrelease",
        "mock-reset"]
MOCK_EXTRA = []
# Planted faults (self-test, --mock only).  The first seven are siblings of
# their own (sib_mock.py --plant); undo: an undo error line in krexd's log;
# cert: the measuring job marks one certificate clean that has a late
# sibling; bystander: the harness pins the bystander to one CPU.
PLANTS = ["crash", "wrong", "exc", "warn", "pin", "stop", "hang", "undo", "cert", "bystander"]
HARNESS_PLANTS = ("undo", "cert", "bystander")
PHASES = ("capture", "compile", "autotune")


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--builddir", default=os.environ.get("KREX_BUILDDIR", SRC))
    ap.add_argument("--out", default=os.environ.get("OUT") or "harmless-out")
    ap.add_argument("--seconds", type=float, default=45, help="length of each pass (default 45)")
    ap.add_argument("--runs", type=int, default=1, help="runs, each with both passes")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--mock", action="store_true",
                    help="the mock driver (test/mock) and mock siblings instead of frameworks")
    ap.add_argument("--only", default=None, help="comma separated siblings (default all)")
    ap.add_argument("--plant", default="",
                    help="self-test: add planted faulty siblings (%s), comma separated; "
                    "--mock only" % ",".join(PLANTS))
    ap.add_argument("--socket", default=None,
                    help="use this krexd (with --krexd-log) instead of starting one")
    ap.add_argument("--krexd-log", default=None, help="log of the krexd of --socket")
    ap.add_argument("--embedded", action="store_true",
                    help="no krexd of ours: `krex run`'s embedded mode starts one (the "
                    "siblings race for it), in a fresh XDG_RUNTIME_DIR")
    ap.add_argument("--krexd-opt", action="append", default=[], metavar="K=V",
                    help="extra krexd -o option")
    ap.add_argument("--gpus", default=None, help="KREX_GPUS for every participant")
    ap.add_argument("--min-regions", type=int, default=200,
                    help="regions each sibling must see, else the run is incomplete")
    ap.add_argument("--gap-ms", type=float, default=50)
    ap.add_argument("--hold-ms", type=float, default=20)
    ap.add_argument("--check-every", type=int, default=10,
                    help="every Nth region the measuring job waits 100 ms and looks for "
                    "siblings still frozen")
    ap.add_argument("--grace", type=float, default=None,
                    help="seconds a sibling may run past its pass before it counts as hung "
                    "(default 90, mock 10)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no new run after this many seconds")
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    if a.plant and not a.mock:
        ap.error("--plant needs --mock")
    a.plant = [p for p in a.plant.split(",") if p]
    for p in a.plant:
        if p not in PLANTS:
            ap.error("unknown plant %s" % p)
    if a.socket and not a.krexd_log:
        ap.error("--socket needs --krexd-log (the undo failures are read there)")
    if a.grace is None:
        a.grace = 10.0 if a.mock else 90.0
    return a


# ---- the siblings -----------------------------------------------------------------

class Spec:
    def __init__(self, name, cmd, env=None, plant=""):
        self.name, self.cmd, self.env, self.plant = name, cmd, env or {}, plant


def specs(a, tools, work):
    py = a.python
    if a.mock:
        m = os.path.join(HERE, "sib_mock.py")
        out = [Spec("mock-async", [py, m, "async", "--new-shape-s", "2"]),
               Spec("mock-sync", [py, m, "sync"]),
               Spec("mock-threads", [py, m, "threads"]),
               Spec("mock-procaddr", [py, m, "procaddr", "--procaddr", tools["procaddr"] or ""]),
               Spec("mock-hostrelease", [py, m, "hostrelease"]),
               Spec("mock-reset", [py, m, "reset"])]
        for p in a.plant:
            if p not in HARNESS_PLANTS:
                out.append(Spec("plant-" + p, [py, m, "async", "--plant", p], plant=p))
    else:
        t = os.path.join(HERE, "sib_torch.py")
        xla = {"XLA_FLAGS": (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_autotune_level=4").strip(),
               "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
        out = [Spec("torch-eager", [py, t, "eager"]), Spec("torch-graphs", [py, t, "graphs"]),
               Spec("torch-compile", [py, t, "compile"]),
               Spec("jax", [py, os.path.join(HERE, "sib_jax.py")], xla),
               Spec("cupy", [py, os.path.join(HERE, "sib_cupy.py")]),
               Spec("triton", [py, os.path.join(HERE, "sib_triton.py")]),
               Spec("cuda-capture", [tools["capture"] or "/nonexistent/sib_capture"]),
               Spec("cuda-reset", [tools["capture"] or "/nonexistent/sib_capture", "--reset"]),
               Spec("cuda-green", [tools["capture"] or "/nonexistent/sib_capture", "--green"])]
    keep = a.only.split(",") if a.only else [n for n in REAL + MOCK]
    return [s for s in out if s.name in keep or s.plant]


def build_capture(a, work):
    """nvcc sib_capture.cu into work/; None (and why) when it cannot."""
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                    if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
    if not nvcc:
        return None, "no nvcc"
    exe = os.path.join(work, "sib_capture")
    # Hopper code and its PTX (newer GPUs JIT it), as test/workloads' fma.fatbin.
    cmd = [nvcc, "-O2", "-std=c++17", "-gencode", "arch=compute_90,code=sm_90", "-gencode",
           "arch=compute_90,code=compute_90", "-o", exe, os.path.join(HERE, "sib_capture.cu"),
           "-lpthread", "-lcuda"]
    rc, out, err = P.run_capture(cmd, dict(os.environ), 300, os.path.join(work, "nvcc.log"))
    if rc != 0:
        return None, "nvcc failed (rc %s): %s" % (rc, (err or out).strip()[-300:])
    return exe, None


# ---- one pass ---------------------------------------------------------------------

class Proc:
    """A process in its own session, stdout and stderr to files."""

    def __init__(self, name, cmd, env, d):
        self.name = name
        self.out = os.path.join(d, name + ".out")
        self.err = os.path.join(d, name + ".err")
        self.fo, self.fe = open(self.out, "wb"), open(self.err, "wb")
        self.t_start = time.monotonic()
        self.p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=self.fo,
                                  stderr=self.fe, start_new_session=True)
        self.pid = self.p.pid
        self.t_exit = None
        self.rc = None
        self.hung = False

    def poll(self):
        if self.t_exit is None and self.p.poll() is not None:
            self.t_exit = time.monotonic()
            self.rc = self.p.returncode
        return self.t_exit is None

    def wait(self, until):
        while self.poll() and time.monotonic() < until:
            time.sleep(0.05)
        return not self.poll()

    def kill(self, hung=False):
        """SIGCONT and SIGKILL the whole session (a stopped process too)."""
        if self.poll():
            self.hung = self.hung or hung
        P.killpg(self.pid, signal.SIGCONT)
        P.killpg(self.pid, signal.SIGKILL)
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            P.log("warning: %s (pid %d) did not die" % (self.name, self.pid))
        self.poll()
        for f in (self.fo, self.fe):
            if not f.closed:
                f.close()


EMBEDDED_WRAPPER = """#!/bin/sh
# harmless.py --embedded: what `krex run` starts as its private krexd
# (KREX_KREXD): the real krexd, in the foreground so that its log is kept.
# Like a daemonizing krexd it exits 0 once its krexd serves the socket, and
# with krexd's own status when that krexd exits first (e.g. another won the
# race for the run directory).
rundir=$2
setsid "%(krexd)s" -F "$@" %(opts)s >>"%(log)s" 2>&1 </dev/null &
k=$!
echo $k >>"%(pids)s"
i=0
while [ $i -lt 200 ]; do
	if ! kill -0 $k 2>/dev/null; then
		wait $k
		exit $?
	fi
	if [ -S "$rundir/krexd.sock" ]; then
		sleep 0.3
		kill -0 $k 2>/dev/null && exit 0
		wait $k
		exit $?
	fi
	sleep 0.05
	i=$((i + 1))
done
exit 1
"""


class Pass:
    def __init__(self, h, run, kind):
        self.h, self.a, self.kind = h, h.a, kind
        self.dir = os.path.join(h.out, "run%d" % run, kind)
        shutil.rmtree(self.dir, ignore_errors=True)  # nothing of an earlier run may count
        os.makedirs(self.dir)
        self.sibs = []
        self.measure = None
        self.krexd = None
        self.bystander = None
        self.before, self.after = {}, {}
        self.krexd_log = None
        self.log_off = 0
        self.emb_pids = os.path.join(self.dir, "embedded-krexd.pids")
        self.note = []

    def env(self):
        a = self.a
        e = dict(self.h.env)
        e["HARMLESS_PASS"] = self.kind
        # Outside --out: the caches are large and not results.
        cache = os.path.join(self.h.tmp, os.path.relpath(self.dir, self.h.out))
        # Cold caches in both passes: every compilation and autotuning happens
        # again under KREX (the base pass would otherwise warm them).
        for k, sub in (("TRITON_CACHE_DIR", "triton"), ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
                       ("CUPY_CACHE_DIR", "cupy"), ("XDG_CACHE_HOME", "xdg"),
                       ("CUDA_CACHE_PATH", "nv"), ("JAX_COMPILATION_CACHE_DIR", "jax")):
            e[k] = os.path.join(cache, sub)
        if a.mock:
            e["KREX_MOCK_GPU"] = "/krex-harmless-%d-%s-%s" % (os.getpid(), os.path.basename(
                os.path.dirname(self.dir)), self.kind)
        return e

    def wrap(self, label):
        if self.kind != "krex":
            return []
        return [self.h.tools["krex"], "run", "--label", label, "--"]

    def start_krexd(self, env):
        a, t = self.a, self.h.tools
        opts = ["cgroup_subtree=" + P.CGROUP_SUBTREE, "max_region=10000"]
        if a.gpus:
            opts.append("gpus=" + a.gpus)
        opts += a.krexd_opt
        if a.socket:
            env["KREX_SOCKET"] = a.socket
            self.krexd_log = a.krexd_log
            try:
                self.log_off = os.path.getsize(a.krexd_log)
            except OSError:
                self.log_off = 0
            return True
        if a.embedded:
            xdg = os.path.join(self.dir, "xdg")
            os.makedirs(xdg, mode=0o700, exist_ok=True)
            self.krexd_log = os.path.join(self.dir, "krexd.log")
            wrapper = os.path.join(self.dir, "krexd-embedded.sh")
            with open(wrapper, "w") as f:
                f.write(EMBEDDED_WRAPPER % {"krexd": t["krexd"], "log": self.krexd_log,
                                            "pids": self.emb_pids,
                                            "opts": " ".join("-o '%s'" % o for o in opts)})
            os.chmod(wrapper, 0o755)
            env.update(XDG_RUNTIME_DIR=xdg, KREX_KREXD=wrapper)
            env.pop("KREX_SOCKET", None)
            return True
        self.krexd = P.Krexd(t["krexd"], opts, self.dir, env, "own")
        self.krexd_log = self.krexd.g.logpath
        if not self.krexd.wait_ready():
            self.note.append("krexd did not start: " + " ".join(
                ln.strip() for ln in self.krexd.log_tail(3)))
            return False
        env["KREX_SOCKET"] = self.krexd.sock
        return True

    def run(self):
        a, h = self.a, self.h
        env = self.env()
        P.log("run %s: %s pass, %g s" % (os.path.basename(os.path.dirname(self.dir)),
                                          self.kind, a.seconds))
        try:
            if self.kind == "krex" and not self.start_krexd(env):
                return
            self.bystander = Proc("bystander", ["sleep", "%d" % (a.seconds + a.grace + 300)],
                                  dict(os.environ), self.dir)
            go, stop = os.path.join(self.dir, "go"), os.path.join(self.dir, "stop")
            release = os.path.join(self.dir, "release")
            pidfile = os.path.join(self.dir, "sibling.pids")
            if self.kind == "krex":
                cmd = self.wrap("measure") + [
                    a.python, os.path.join(HERE, "measure.py"), "--binding", h.binding,
                    "--go", go, "--stop", stop, "--certs", os.path.join(self.dir, "certs.jsonl"),
                    "--phases", self.dir, "--pids", pidfile, "--seed", str(a.seed),
                    "--gap-ms", str(a.gap_ms), "--hold-ms", str(a.hold_ms),
                    "--check-every", str(a.check_every),
                    "--seconds", str(a.seconds + a.grace),
                    "--startup-s", "%g" % min(3.0, a.seconds / 5)]
                if "cert" in a.plant:
                    cmd += ["--plant-dishonest", "1"]
                self.measure = Proc("measure", cmd, env, self.dir)
            for s in h.specs:
                e = dict(env)
                e.update(s.env)
                cmd = self.wrap(s.name) + s.cmd + [
                    "--seconds", "%g" % a.seconds, "--seed", str(a.seed),
                    "--phases", os.path.join(self.dir, s.name + ".phases"), "--linger", release]
                self.sibs.append(Proc(s.name, cmd, e, self.dir))
            with open(pidfile, "w") as f:
                f.write("".join("%d\n" % p.pid for p in self.sibs))
            self.before = {p.name: PS.snapshot([p.pid]) for p in self.sibs}
            self.before["bystander"] = PS.snapshot([self.bystander.pid])
            if "bystander" in a.plant and self.kind == "krex":
                os.sched_setaffinity(self.bystander.pid, {max(h.aff0)})
            open(go, "w").close()
            t_go = time.monotonic()
            # Regions until every sibling is done with its loop (lingering:
            # sib_common.py) or gone, at most --grace past the pass.
            while time.monotonic() < t_go + a.seconds + a.grace:
                if all(not p.poll() or self.lingering(p) for p in self.sibs):
                    break
                time.sleep(0.1)
            open(stop, "w").close()
            if self.measure and not self.measure.wait(time.monotonic() + a.hold_ms / 1000 + 40):
                self.note.append("the measuring job did not stop (killed)")
                self.measure.kill(hung=True)
            # After the last region, while every sibling is still there.
            self.after = {p.name: PS.snapshot([p.pid]) for p in self.sibs if p.poll()}
            self.after["bystander"] = PS.snapshot([self.bystander.pid])
            open(release, "w").close()
            for p in self.sibs:
                if p.poll() and not self.lingering(p):
                    P.log("%s: still in its loop %g s after its pass: killed (hung)" % (
                        p.name, a.grace))
                    p.kill(hung=True)
            until = time.monotonic() + a.grace
            for p in self.sibs:
                if not p.wait(until):
                    P.log("%s: did not exit %g s after it was released: killed (hung)" % (
                        p.name, a.grace))
                    p.kill(hung=True)
        finally:
            self.stop_all()

    def lingering(self, p):
        """p wrote "begin linger": its loop is done, it waits for release."""
        try:
            with open(os.path.join(self.dir, p.name + ".phases")) as f:
                return " begin linger\n" in f.read()
        except OSError:
            return False

    def stop_all(self):
        for p in self.sibs + [self.measure, self.bystander]:
            if p is not None:
                p.kill()
        if self.krexd:
            self.krexd.stop()
        for pid in PS.read_pids(self.emb_pids):
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        end = time.monotonic() + 10
        while any(os.path.exists("/proc/%d" % p) for p in PS.read_pids(self.emb_pids)):
            if time.monotonic() > end:
                for pid in PS.read_pids(self.emb_pids):
                    P.killpg(pid, signal.SIGKILL)
                break
            time.sleep(0.1)
        if self.a.mock:
            try:
                os.unlink("/dev/shm" + self.env()["KREX_MOCK_GPU"])
            except OSError:
                pass

    def krexd_lines(self):
        if not self.krexd_log:
            return []
        try:
            with open(self.krexd_log, errors="replace") as f:
                f.seek(self.log_off)
                return f.read().splitlines()
        except OSError:
            return []


# ---- analysis ---------------------------------------------------------------------

WARN_RE = re.compile(r"(?i)(warn|error|\berr\b|fail|exception|traceback|abort|fatal|invalid|"
                     r"timed? ?out|segmentation|core dumped|illegal|\bnan\b|wrong|deadlock|"
                     r"assert|^krex)|^[WEF]\d{4} ")
NORM = [
    (re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s"), "<LOG> "),
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?"), "<TS>"),
    (re.compile(r"\d\d:\d\d:\d\d(\.\d+)?"), "<T>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<ADDR>"),
    (re.compile(r"/tmp/[^\s'\":]+"), "<TMP>"),
    (re.compile(r"\d+(\.\d+)?(e[+-]?\d+)?"), "<N>"),
]


def normalise(line, dirs):
    for d in dirs:
        line = line.replace(d, "<DIR>")
    for rx, rep in NORM:
        line = rx.sub(rep, line)
    return line.strip()


def warn_lines(paths, dirs):
    """{normalised: first raw line} of every warning/error-looking line."""
    out = {}
    for p in paths:
        try:
            with open(p, errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for ln in lines:
            if ln.startswith('{"harmless"') or not WARN_RE.search(ln):
                continue
            out.setdefault(normalise(ln, dirs), ln.strip()[:300])
    return out


def result_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for ln in reversed(lines):
        if ln.startswith('{"harmless"'):
            try:
                return json.loads(ln)
            except ValueError:
                return None
    return None


def phases(path, t_exit):
    """(life_start, life_end, [(name, t0, t1)], ended) from a phase file;
    ended: the sibling wrote "end run" (else life_end is when the harness saw
    it exit, later than it did)."""
    start = end = None
    open_, spans = {}, []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    for ln in lines:
        p = ln.split()
        if len(p) != 3:
            continue
        t = float(p[0])
        start = t if start is None else start
        if p[1] == "begin":
            open_[p[2]] = t
        elif p[1] == "end":
            if p[2] == "run":
                end = t
            elif p[2] in open_:
                spans.append((p[2], open_.pop(p[2]), t))
    ended = end is not None
    end = end or t_exit
    for name, t0 in open_.items():
        spans.append((name, t0, end or t0))
    return start, end, spans, ended


def classify(rec, alive):
    """A region record -> (class, problem): class clean/degraded/other; problem
    is a text when the certificate is not honest about it."""
    c = rec.get("cert")
    if not c:
        return "other", None
    o = c.get("outcome")
    if o == "clean":
        if c.get("late") or c.get("frozen") != c.get("siblings") or c.get("note"):
            return "clean", "clean with late %s, frozen %s of %s, note '%s'" % (
                c.get("late"), c.get("frozen"), c.get("siblings"), c.get("note"))
        if c.get("siblings", 0) < alive:
            return "clean", "clean with %s siblings while %d were running" % (c.get("siblings"),
                                                                               alive)
        return "clean", None
    if o == "degraded":
        return "degraded", None if c.get("note") else "degraded without a note"
    return "other", None


def overlaps(t0, t1, s0, s1):
    return s0 is not None and s1 is not None and t0 <= s1 and s0 <= t1


# krexd's log: an undo that failed for good is an error line; a warning about
# an undo (retried, then done) is listed but is not a failure.
UNDO_RE = re.compile(r": error: .*\bundo\b")
UNDO_WARN_RE = re.compile(r": warn(ing)?: .*\bundo\b")


class Report:
    def __init__(self, h, run, base, krex):
        self.h, self.a, self.run_no = h, h.a, run
        self.base, self.krex = base, krex

    def sib_info(self, ps, p):
        res = result_line(p.out)
        start, end, spans, ended = phases(os.path.join(ps.dir, p.name + ".phases"), p.t_exit)
        crash = None
        if p.hung:
            crash = "hung"
        elif p.rc is None:
            crash = "did not finish"
        elif p.rc < 0 or p.rc >= 128:
            crash = "killed by signal %d" % (-p.rc if p.rc < 0 else p.rc - 128)
        elif res is None:
            crash = "exit %d without its result line" % p.rc
        return dict(res=res, start=start, end=end, spans=spans, crash=crash, rc=p.rc,
                    ended=ended)

    def pinned(self, ps, name, selfpinned):
        """Tasks left frozen, and tasks that lost CPUs the harness had (not
        counting (comm, cpus) pairs the framework made itself in the base pass).
        A wider set is no harm: krexd's cgroups may sit above the harness's."""
        aff0 = self.h.aff0
        frozen, pinned, seen = [], [], 0
        for tid, t in ps.after.get(name, {}).items():
            seen += 1
            if t["state"] in ("T", "t") or t["frozen"]:
                frozen.append("%s %d %s%s" % (t["comm"], tid, t["state"],
                                              " cgroup-" + t["frozen"] if t["frozen"] else ""))
            try:
                cpus = PS.parse_cpulist(t["cpus"])
            except ValueError:
                continue
            if aff0 - cpus and (t["comm"], t["cpus"]) not in selfpinned:
                pinned.append("%s %d on %s" % (t["comm"], tid, t["cpus"]))
        return frozen, pinned, seen

    def build(self):
        a, h = self.a, self.h
        base, krex = self.base, self.krex
        dirs = [base.dir, krex.dir, h.out]
        certs = []
        try:
            with open(os.path.join(krex.dir, "certs.jsonl")) as f:
                certs = [json.loads(ln) for ln in f if ln.strip()]
        except (OSError, ValueError) as e:
            krex.note.append("certificates unreadable: %s" % e)
        bi = {p.name: self.sib_info(base, p) for p in base.sibs}
        ki = {p.name: self.sib_info(krex, p) for p in krex.sibs}
        # Regions and the siblings each one should have covered.
        lives = {n: (i["start"], i["end"]) for n, i in ki.items() if i["ended"]}
        dishonest = []
        for r in certs:
            t0, t1 = r.get("t_req", 0), r.get("t_end", 0)
            alive = sum(1 for s0, s1 in lives.values()
                        if s0 is not None and s1 is not None and s0 < t0 and t1 < s1)
            r["class"], prob = classify(r, alive)
            if prob:
                r["problem"] = prob
                dishonest.append("region %s: %s" % (r.get("cert", {}).get("region"), prob))
        if "undo" in a.plant and krex.krexd_log:
            with open(krex.krexd_log, "a") as f:  # read back below like krexd's own lines
                f.write("krexd: error: region 0: undo 'affinity 0 0 0': Invalid argument "
                        "(planted by harmless.py --plant undo)\n")
        klines = krex.krexd_lines()
        undo = [ln for ln in klines if UNDO_RE.search(ln)]
        undo_warn = [ln for ln in klines if UNDO_WARN_RE.search(ln)]
        kerrors = [ln for ln in klines if ": error:" in ln]
        rows = []
        for p in krex.sibs:
            k, b = ki[p.name], bi.get(p.name, {})
            kr, br = k["res"] or {}, (b.get("res") or {})
            bp = next((x for x in base.sibs if x.name == p.name), None)
            selfpinned = set()
            if bp is not None:
                for t in base.after.get(p.name, {}).values():
                    selfpinned.add((t["comm"], t["cpus"]))
            bw = warn_lines([bp.out, bp.err], dirs) if bp else {}
            kw = warn_lines([p.out, p.err], dirs)
            new = [kw[n] for n in sorted(kw) if n not in bw]
            regs = [r for r in certs if overlaps(r["t_req"], r.get("t_end", r["t_req"]),
                                                   k["start"], k["end"])]
            inph = {ph: sum(1 for r in regs if any(
                n == ph and overlaps(r["t_req"], r.get("t_end", r["t_req"]), s0, s1)
                for n, s0, s1 in k["spans"])) for ph in PHASES}
            nph = {ph: sum(1 for n, _, _ in k["spans"] if n == ph) for ph in PHASES}
            frozen, pinned, tasks = self.pinned(krex, p.name, selfpinned)
            pids = {str(t["pid"]) for t in list(krex.before.get(p.name, {}).values()) +
                    list(krex.after.get(p.name, {}).values())}
            if isinstance(kr.get("pid"), int):
                pids.add(str(kr["pid"]))
            myundo = [ln for ln in undo if any(re.search(r"\b%s\b" % q, ln) for q in pids)]
            rows.append(dict(
                framework=p.name, skipped=kr.get("skipped"),
                iterations=kr.get("iterations"), iterations_base=br.get("iterations"),
                checks=kr.get("checks"), crash=k["crash"], crashes=1 if k["crash"] else 0,
                crash_base=b.get("crash"), new_warnings=len(new), new_warning_lines=new[:20],
                wrong=kr.get("wrong", 0), wrong_base=br.get("wrong"),
                exceptions=kr.get("exceptions", 0), errors=kr.get("errors", 0),
                exceptions_base=br.get("exceptions"), errors_base=br.get("errors"),
                regions=len(regs), regions_in_phase=inph, phases=nph,
                certs={c: sum(1 for r in regs if r["class"] == c)
                       for c in ("clean", "degraded", "other")},
                undo_failures=len(myundo), left_frozen=len(frozen), left_pinned=len(pinned),
                left_frozen_tasks=frozen[:10], left_pinned_tasks=pinned[:10],
                tasks_checked=tasks, notes=kr.get("notes", [])))
        bys_frozen, bys_pinned, _ = self.pinned(krex, "bystander", set())
        mres = result_line(krex.measure.out) if krex.measure else None
        if mres is None and krex.measure:
            try:
                with open(krex.measure.out) as f:
                    for ln in f:
                        if ln.startswith('{"measure"'):
                            mres = json.loads(ln)
            except (OSError, ValueError):
                pass
        totals = dict(
            regions=len(certs),
            clean=sum(1 for r in certs if r["class"] == "clean"),
            degraded=sum(1 for r in certs if r["class"] == "degraded"),
            other=sum(1 for r in certs if r["class"] == "other"),
            not_granted=sum(1 for r in certs if not r.get("cert")),
            triggered={w: sum(1 for r in certs if r.get("trigger", "").startswith(w))
                       for w in ("startup", "random", "phase")},
            dishonest=dishonest[:20], dishonest_n=len(dishonest),
            undo_failures=len(undo), undo_lines=undo[:20], undo_warnings=len(undo_warn),
            undo_warning_lines=undo_warn[:20], krexd_errors=len(kerrors),
            krexd_error_lines=kerrors[:20],
            stuck_frozen=(mres or {}).get("stuck_frozen"),
            owner_pinned=(mres or {}).get("owner_pinned"),
            measure=mres, bystander_frozen=bys_frozen, bystander_pinned=bys_pinned,
            notes=base.note + krex.note)
        verdict, why = self.goal(rows, totals, bi)
        return dict(run=self.run_no, seconds=a.seconds, mock=a.mock, rows=rows, totals=totals,
                    goal=verdict, why=why)

    def goal(self, rows, t, bi):
        fail, inc = [], []
        for r in rows:
            n = r["framework"]
            if r["skipped"]:
                inc.append("%s skipped: %s" % (n, r["skipped"]))
                continue
            for k, what in (("crashes", "crashed (%s)" % r["crash"]), ("new_warnings",
                            "new warning/error lines"), ("wrong", "wrong results"),
                            ("exceptions", "exceptions"), ("errors", "API errors"),
                            ("left_frozen", "left frozen"), ("left_pinned", "left pinned")):
                if r[k]:
                    fail.append("%s: %s %s" % (n, r[k], what))
            b = bi.get(n, {})
            br = b.get("res") or {}
            if b.get("crash") or br.get("wrong") or br.get("exceptions") or br.get("errors"):
                inc.append("%s: the pass without KREX was not clean" % n)
            if r["regions"] < self.a.min_regions:
                inc.append("%s: %d regions (< %d)" % (n, r["regions"], self.a.min_regions))
        if t["undo_failures"]:
            fail.append("%d undo failures in krexd's log" % t["undo_failures"])
        if t["dishonest_n"]:
            fail.append("%d certificates not honest" % t["dishonest_n"])
        if t["stuck_frozen"]:
            fail.append("siblings still frozen 100 ms after a region ended (%d times)" %
                        t["stuck_frozen"])
        if t["owner_pinned"]:
            fail.append("the measuring job's own CPUs not given back (%d times)" %
                        t["owner_pinned"])
        if t["bystander_frozen"] or t["bystander_pinned"]:
            fail.append("the bystander (no KREX) left frozen/pinned")
        if t["measure"] is None:
            fail.append("the measuring job gave no result")
        if t["regions"] == 0:
            inc.append("no region taken")
        if t["notes"]:
            inc.extend(t["notes"])
        if fail:
            return "FAIL", fail
        if inc:
            return "INCOMPLETE", inc
        return "PASS", []


def markdown(rep):
    t = rep["totals"]
    L = ["## Run %d (%s%g s per pass)" % (rep["run"], "mock driver, " if rep["mock"] else "",
                                          rep["seconds"]), "",
         "| framework | iterations (no KREX / KREX) | crashes | new warnings/errors | "
         "wrong results | exceptions / API errors | regions (in capture, compile, autotune) | "
         "certificates clean/degraded/other | undo failures | left frozen/pinned |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rep["rows"]:
        if r["skipped"]:
            L.append("| %s | SKIP: %s | | | | | | | | |" % (r["framework"], r["skipped"]))
            continue
        ip = r["regions_in_phase"]
        ph = ", ".join("%d/%d" % (ip[k], r["phases"][k]) for k in PHASES)
        L.append("| %s | %s / %s | %d%s | %d | %s | %s / %s | %d (%s) | %d/%d/%d | %d | %d/%d |" % (
            r["framework"], r["iterations_base"], r["iterations"], r["crashes"],
            " (%s)" % r["crash"] if r["crash"] else "", r["new_warnings"], r["wrong"],
            r["exceptions"], r["errors"], r["regions"], ph, r["certs"]["clean"],
            r["certs"]["degraded"], r["certs"]["other"], r["undo_failures"], r["left_frozen"],
            r["left_pinned"]))
    L += ["", "regions (in capture, compile, autotune): regions whose span overlapped one, "
          "over how many the sibling had (a/b).", "",
          "All regions: %d (clean %d, degraded %d, other %d of which not granted %d; taken "
          "at start-up %d, after a random gap %d, on a phase %d); certificates not honest: "
          "%d; undo failures in krexd's log: %d; krexd errors: %d; siblings frozen 100 ms "
          "after a region: %s; owner's CPUs not given back: %s; bystander (no KREX) left "
          "frozen/pinned: %d/%d; undo warnings (retried): %d." % (
              t["regions"], t["clean"], t["degraded"], t["other"], t["not_granted"],
              t["triggered"]["startup"], t["triggered"]["random"], t["triggered"]["phase"],
              t["dishonest_n"], t["undo_failures"], t["krexd_errors"], t["stuck_frozen"],
              t["owner_pinned"], len(t["bystander_frozen"]), len(t["bystander_pinned"]),
              t["undo_warnings"])]
    for r in rep["rows"]:
        for ln in r["new_warning_lines"][:5]:
            L.append("- %s, new under KREX: `%s`" % (r["framework"], ln.replace("`", "'")))
        for x in r["left_frozen_tasks"][:3] + r["left_pinned_tasks"][:3]:
            L.append("- %s, left: %s" % (r["framework"], x))
        for x in [n for n in r.get("notes") or [] if n.startswith("tool probe")][:3]:
            L.append("- %s: %s" % (r["framework"], x.replace("`", "'")))
    for ln in t["undo_lines"][:5] + t["dishonest"][:5]:
        L.append("- `%s`" % ln.replace("`", "'"))
    L += ["", "**Goal (0 crashes, 0 new errors, 0 wrong results, 0 undo failures, nothing "
          "left frozen or pinned, every certificate clean or honestly degraded): %s**%s" % (
              rep["goal"], (": " + "; ".join(rep["why"][:12])) if rep["why"] else ""), ""]
    return "\n".join(L)


# ---- the harness --------------------------------------------------------------------

class Harness:
    def __init__(self, a):
        self.a = a
        self.out = os.path.abspath(a.out)
        os.makedirs(self.out, exist_ok=True)
        self.aff0 = os.sched_getaffinity(0)
        pa = argparse.Namespace(builddir=a.builddir, srcdir=SRC, mock="auto" if a.mock else None,
                                gpus=a.gpus, env=[], victim=None, hog=None, krexd=None,
                                krex=None, torch_loop=None)
        self.tools = P.find_tools(pa)
        self.env = P.base_env(pa)
        a.gpus = pa.gpus
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.env["PYTHONUNBUFFERED"] = "1"
        lib = None
        for rel in ("libregion/.libs/libkrexregion.so", "libregion/libkrexregion.so"):
            if os.path.exists(os.path.join(a.builddir, rel)):
                lib = os.path.join(a.builddir, rel)
                break
        if lib:
            self.env["KREX_LIBREGION"] = lib
        pd = os.path.join(a.builddir, "test", "workloads", "krex-procaddr")
        self.tools["procaddr"] = pd if os.access(pd, os.X_OK) else None
        self.tools["capture"] = None
        self.binding = os.path.join(SRC, "python")
        self.tmp = tempfile.mkdtemp(prefix="krex-harmless-")  # compile caches, removed at the end
        self.specs = []

    def setup(self):
        a, t = self.a, self.tools
        missing = [n for n in ("krexd", "krex") if not t[n]]
        if missing:
            return "not built under %s: %s" % (a.builddir, ", ".join(missing))
        if "KREX_LIBREGION" not in self.env:
            return "libkrexregion not built under %s" % a.builddir
        if not a.mock:
            if "KREX_GATE_LIB" not in self.env:
                return "libkrexgate not built under %s" % a.builddir
            t["capture"], why = build_capture(a, self.out)
            if why:
                P.log("cuda-capture, cuda-reset, cuda-green: %s" % why)
        self.specs = specs(a, t, self.out)
        if not self.specs:
            return "no sibling selected"
        return None

    def run(self):
        a = self.a
        reports = []
        t_start = time.monotonic()
        for run in range(1, a.runs + 1):
            if a.budget_s and run > 1 and time.monotonic() - t_start + \
                    (time.monotonic() - t_start) / (run - 1) > a.budget_s:
                P.log("time budget: stopped before run %d" % run)
                break
            base = Pass(self, run, "base")
            base.run()
            krex = Pass(self, run, "krex")
            krex.run()
            rep = Report(self, run, base, krex).build()
            reports.append(rep)
            P.cgroups_remove()
            P.log("run %d: %s" % (run, rep["goal"]))
        return reports


def leftovers():
    """Our own descendants still alive (none should be)."""
    return [p for p in PS.tree([os.getpid()]) if p != os.getpid()]


def main():
    a = parse()
    P.on_term()
    h = Harness(a)
    why = h.setup()
    if why:
        print("harmless: %s" % why)
        return 2
    reports, stopped = [], None
    try:
        reports = h.run()
    except P.Interrupted as e:
        stopped = "INTERRUPTED (%s)" % e
    finally:
        for p in leftovers():
            P.killpg(p, signal.SIGCONT)
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        P.cgroups_remove()
        shutil.rmtree(h.tmp, ignore_errors=True)
    md = "\n".join(markdown(r) for r in reports)
    head = "# harmless.py: %d run(s), %s\n\n" % (len(reports), time.strftime("%Y-%m-%d %H:%M:%S"))
    verdicts = [r["goal"] for r in reports]
    overall = ("FAIL" if "FAIL" in verdicts or stopped else
               "INCOMPLETE" if "INCOMPLETE" in verdicts or not reports else "PASS")
    tail = "\nOverall: %s%s\n" % (overall, " (%s)" % stopped if stopped else "")
    with open(os.path.join(h.out, "harmless.md"), "w") as f:
        f.write(head + md + tail)
    with open(os.path.join(h.out, "harmless.json"), "w") as f:
        json.dump({"runs": reports, "overall": overall, "stopped": stopped,
                   "siblings": [s.name for s in h.specs], "args": vars(a)}, f, indent=1,
                  default=str)
    print(head + md + tail)
    print("results: %s" % h.out)
    return {"PASS": 0, "FAIL": 1, "INCOMPLETE": 3}[overall]


if __name__ == "__main__":
    sys.exit(main())
