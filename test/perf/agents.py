#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""agents.py - throughput of agent sessions sharing one GPU: KREX against locks.

N simulated agent sessions (default 4, 8, 16) run at once.  Each is a loop of
iterations, and an iteration is

  think      sleep (waiting for the model's answer)
  compile    CPU work (a fixed CPU time: the host's speed in a window does
             not stretch it; waiting for a CPU does)
  correct    a correctness run: host work, then GPU kernels outside any region
  bench      a timed benchmark: host work, warm-up kernels, then timed kernels
             (inside one region in the KREX mode)

Modes:
  job           job-granular exclusivity: a session holds a GPU lock (flock)
                for its whole life, from its first think to its last benchmark
                (one session at a time whatever N is: measured at the first N
                only unless --job-every-n)
  cmd           command-granular exclusivity: the lock is held for each
                GPU-using command (correct, bench), host part included, as a
                wrapper would
  share         no lock and no KREX: every kernel, the timed ones too, shares
                the GPU as the driver time-slices it (what sharing costs on
                this GPU without regions; its timings are not clean).  Not in
                the default modes: --modes share,krex
  krex          no lock; each GPU command is a KREX participant of its own
                (`krex run CMD`, what a harness or `srun --krex-shared` per
                command does) and only the timed kernels run inside a region
  krex-session  no lock; the whole session is one participant (`krex run
                SESSION`): its thinking and compiling are frozen too while
                another session's region runs (--session-n says at which N)

Each (mode, N) runs for a window; benchmarks completed after a warm-up
(--warm-s, default one think time: the sessions' staggered start) are counted
and scaled to an hour, with the count's standard error where sessions run
side by side (benches_se: the count is the sum of N sessions' counts,
sqrt(N x their sample variance); with a lock the count is sequential, its
error about one benchmark).  Sessions per hour are iterations per hour /
iterations per session (a window holds few whole sessions).  Every phase is
timed, so the table also shows how long an iteration took against its
nominal length, how long the lock was held per iteration (cmd: the lock's
ceiling is one iteration per hold), and the ideal of N sessions that never
wait for each other.  The host part of a GPU command includes starting its
process (CUDA context, module load): the measured start-up, alone, is taken
off the host burn so that a scaled iteration keeps its proportions.  The
timed kernels' p50/p95 (wall and events) per mode show that throughput is not
bought with fidelity.

Where the time goes: a second table breaks a session's iteration down (think,
compile, the correctness command and what it lost against its nominal length:
GPU work outside regions waits at the gate or frozen, the benchmark command, the
lock wait) and a benchmark's region entry, from the certificates (queued in
the region queue, drain, freeze, isolation (after the freeze), settle, held,
how many were chained), the first-kernel warm-up (the first timed kernel
less the benchmark's median), and with --drain-log (krexd's log) the unwind
and the time per iteration that the session's GPU work outside its regions
was held back (gated or frozen) by other sessions' regions.  And the bound
for each N: the smallest of the ideal (N sessions never waiting), the CPU
bound (cores / CPU seconds per iteration), the GPU bound (3600 / the GPU
seconds of an iteration: the kernels of different processes never run at
once on a GPU without MPS, nor on the mock, so every kernel of an iteration
counts; in the KREX modes the region slot replaces the timed kernels, less
its drain, which is other sessions' kernels) and the region bound (3600 /
exclusive GPU seconds per benchmark: the lock's hold in cmd mode; in the
KREX modes the regions' entry less the queue wait (drain, freeze,
isolation, settle, round trips), held and unwind); of_bound_pct is the rate
against it.  And sharer_per_h, the same model run on a perfect sharer
(sharer.py: a simulation of time-slicing and regions that cost nothing, the
same think-time seeds): what sessions lose waiting for each other on any
shared GPU; of_sharer_pct, the rate against it, is what the mode's own
mechanism costs on top of sharing.  And the CPU: cpu_iter_s, the CPU
seconds an iteration took (getrusage: the session's burns and Python, and
its GPU commands', cmd_cpu_s, also per command in the third table: a
command that spin-waits for its kernels burns a core while it waits), and
cpu_util_pct, the machine's CPU busy share over the counted window
(/proc/stat).  The CPU bound counts the nominal CPU of an iteration (its
burns and start-ups); where cpu_iter_s is well above that, the bound is
optimistic, and where cpu_util_pct nears 100 the CPU holds the rate.
The burns (compile, a command's host part) are CPU time, not a loop count:
on the H200 machine the same loop count took twice the CPU seconds in the
command lock's windows as in KREX's of the same call (session 31), which
doubled the lock's hold.  cpu_pace, the last column of the first table, is
the host's pace in the window: the burns' million loops per CPU second;
modes compared at different paces still differ in the rest of a command's
host part (its start, its Python), and test/gpu/proof_table.py says so.
Durations are real-world seconds (doc/performance-gpu.md says why)
multiplied by --scale.

The drain per sibling (--drain-log, on with --full and with --quick on the
mock), a third table: krexd at log_level=debug and each GPU command's gate at
KREX_LOG=debug, each command labelled SLOT.correct or SLOT.bench (each
session SLOT.session in krex-session); agents-siblings.csv/.md, per mode and
N, one row per role (krexlog.py says what each column means).

  agents.py --quick --mock auto          (CI, mock driver, ~1 minute)
  agents.py --full --builddir BUILD      (the H200, ~6 minutes)
"""

import argparse
import fcntl
import json
import os
import random
import resource
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import krexlog  # noqa: E402
import perflib as P  # noqa: E402
import sharer  # noqa: E402

MODES = ["job", "cmd", "share", "krex", "krex-session"]
DEFAULT_MODES = ["job", "cmd", "krex", "krex-session"]
# Real-world seconds of one iteration of a kernel-optimising agent (see the doc).
DURATIONS = dict(think=30.0, compile=20.0, correct_host=5.0, correct_gpu=1.0, bench_host=4.0,
                 bench_warmup=1.0, bench_timed=1.0)
PRESETS = {
    "quick": dict(n="2,4", scale=0.03, window=6.0, budget_s=75.0, session_n="4"),
    # 40 s windows of 12.4 s iterations: job once, cmd and krex at 4, 8, 16,
    # krex-session at 16: 8 windows, about 6 minutes.
    "full": dict(n="4,8,16", scale=0.2, window=40.0, budget_s=400.0, session_n="16"),
}
COLS = ["n", "mode", "window_s", "benches", "benches_se", "sessions", "bench_per_h",
        "sessions_per_h", "krex_over_mode", "iter_s", "iter_nominal_s", "hold_s",
        "ceiling_per_h", "ideal_per_h", "wall_p50", "wall_p95", "ev_p50", "ev_p95",
        "infl_wall_p95_pct", "entry_p95", "clean", "note", "cpu_bound_per_h",
        "region_bound_per_h", "gpu_bound_per_h", "bound_per_h", "of_bound_pct",
        "sharer_per_h", "of_sharer_pct", "cpu_pace", "mps"]
# Where the time goes (the second table): seconds per iteration, then per benchmark
# (the regions of one benchmark summed, ms).
BCOLS = ["n", "mode", "iter_s", "think_s", "compile_s", "correct_s", "correct_lost_s", "bench_s",
         "bench_lost_s", "lock_wait_s", "gated_ms", "entry_ms", "queued_ms", "drain_ms",
         "freeze_ms", "isolate_ms", "settle_ms", "entry_other_ms", "first_kernel_ms", "held_ms",
         "exit_ms", "excl_s", "regions", "chained_pct", "made_p50_ms", "made_loop_pct",
         "moved_p50_ms", "gpu_util_pct", "gpu_busy_s", "cpu_iter_s", "cmd_cpu_s", "cpu_util_pct"]
BDIGITS = {k: 3 for k in BCOLS if k.endswith("_s")}
BDIGITS.update({k: 1 for k in BCOLS if k.endswith("_ms") or k.endswith("_pct")})
BDIGITS["regions"] = 1
# A GPU command's wall time, split (the third table).
CCOLS = ["n", "mode", "role", "commands", "burn_s", "start_s", "start_alone_s", "to_main_s",
         "init_s", "ctx_s", "ctx_held_s", "module_s", "gpu_s", "gpu_nominal_s", "exit_s", "cpu_s",
         "gpu_util_pct"]
CDIGITS = {k: 3 for k in CCOLS if k.endswith("_s")}
CDIGITS["gpu_util_pct"] = 1
BDIGITS["first_kernel_ms"] = 3
BDIGITS["made_p50_ms"] = 2
BDIGITS["moved_p50_ms"] = 2
DIGITS = {"benches_se": 1, "bench_per_h": 0, "sessions_per_h": 1, "krex_over_mode": 2,
          "infl_wall_p95_pct": 2, "window_s": 1, "entry_p95": 3, "iter_s": 2,
          "iter_nominal_s": 2, "hold_s": 3, "ceiling_per_h": 0, "ideal_per_h": 0,
          "cpu_bound_per_h": 0, "region_bound_per_h": 0, "gpu_bound_per_h": 0,
          "bound_per_h": 0, "of_bound_pct": 1, "sharer_per_h": 0, "of_sharer_pct": 1,
          "cpu_pace": 1}


def parse_args():
    ap = P.preset_parser(__doc__)
    ap.add_argument("--n", help="session counts, comma separated")
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES),
                    help="modes: %s (default %s)" % (",".join(MODES), ",".join(DEFAULT_MODES)))
    ap.add_argument("--window", type=float, help="seconds each (mode, N) runs")
    ap.add_argument("--warm-s", type=float,
                    help="seconds at the start of a window not counted (default: one think)")
    ap.add_argument("--session-n", help="N at which krex-session runs (comma separated)")
    ap.add_argument("--job-every-n", action="store_true",
                    help="run the job mode at every N (its throughput does not depend on N)")
    ap.add_argument("--scale", type=float, help="multiplier applied to every duration")
    for k, v in DURATIONS.items():
        ap.add_argument("--" + k.replace("_", "-"), type=float, default=v,
                        help="real-world seconds (default %g)" % v)
    ap.add_argument("--iters-per-session", type=int, default=10,
                    help="iterations in one session (default 10)")
    ap.add_argument("--kernel-ms", type=float, default=1.0,
                    help="kernel size of GPU work (default 1 ms)")
    ap.add_argument("--seed", type=int, default=1, help="think-time jitter seed")
    ap.add_argument("--mps", choices=("auto", "on", "off"), default="auto",
                    help="whether the GPU runs under NVIDIA MPS (auto: an MPS control daemon "
                    "or server runs on this machine); over MPS gpu_bound_per_h is no bound")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.set_defaults(preset="quick")
    a = ap.parse_args()
    if a.worker:
        return a
    for k, v in PRESETS[a.preset].items():
        if getattr(a, k, None) is None:
            setattr(a, k, v)
    a.n = [int(x) for x in a.n.split(",") if x]
    a.session_n = [int(x) for x in a.session_n.split(",") if x]
    a.modes = [m for m in a.modes.split(",") if m]
    for m in a.modes:
        if m not in MODES:
            ap.error("unknown mode %s" % m)
    return a


# ---- one session slot (runs in its own process) ----------------------------------

def victim_cmd(p, samples, warmup, region, label):
    # A participant per command (krex mode) is named SLOT.correct or SLOT.bench
    # (krexd logs the label: the drain per sibling, krexlog.py).
    wrap = P.labelled(p["wrap"], "s%d.%s" % (p["slot"], label))
    cmd = wrap + [p["victim"], "run", str(p["iters"]), str(samples), "--warmup",
                       str(warmup), "--label", label, "--region", region]
    if region == "batch":
        cmd += ["--batch", str(samples)]  # one region around every timed sample
    if region != "none":  # its regions' ids, for krexd's region log (read_region_ids)
        cmd += ["--certs", p["results"] + ".certs"]
    return cmd


def read_region_ids(path):
    """krex-victim --certs lines (the 9th field the region's id) -> [ids]; the
    file removed; [] if there is none."""
    ids = []
    try:
        with open(path) as f:
            for ln in f:
                x = ln.split()
                if len(x) >= 9 and x[8].isdigit():
                    ids.append(int(x[8]))
        os.unlink(path)
    except OSError:
        pass
    return ids


def mps_running():
    """Whether an NVIDIA MPS control daemon or server runs here (its process
    name, /proc/PID/comm, cut at 15 characters: "nvidia-cuda-mps")."""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/comm" % pid) as f:
                    if f.read().startswith("nvidia-cuda-mps"):
                        return True
            except OSError:
                pass
    return False


def samples(seconds, kernel_ms):
    """Kernels of kernel_ms that fill seconds of GPU time (at least 5): the
    correctness run's, the warm-up's and the timed samples (sharer.py too)."""
    return max(5, int(round(seconds * 1000.0 / kernel_ms)))


def read_raw(path):
    """krex-victim --raw lines 'i ev wall entry' -> {'ev': [...], 'wall': [...],
    'entry': [...]} (entry only where a region began); None if unreadable."""
    r = {"ev": [], "wall": [], "entry": []}
    try:
        with open(path) as f:
            for ln in f:
                x = ln.split()
                if len(x) < 3:
                    return None
                r["ev"].append(float(x[1]))
                r["wall"].append(float(x[2]))
                if len(x) > 3 and float(x[3]) >= 0:
                    r["entry"].append(float(x[3]))
        os.unlink(path)
    except (OSError, ValueError):
        return None
    return r


def cpu_s(who):
    """CPU seconds (user + system) of this process (RUSAGE_SELF: its burns,
    Python) or of its waited-for children (RUSAGE_CHILDREN: the GPU
    commands, the wrapper and the victim)."""
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def worker(p):
    """Run sessions back to back until the deadline, appending one JSON line per
    finished benchmark and per finished session to p['results']."""
    rnd = random.Random(p["seed"])
    excl = p["mode"] in ("job", "cmd")
    lockf = open(p["lock"], "a+") if excl else None
    out = open(p["results"], "a")
    env = dict(os.environ)

    def lock(on):
        fcntl.flock(lockf, fcntl.LOCK_EX if on else fcntl.LOCK_UN)

    held = [0.0]
    waited = [0.0]
    err = [None]
    gates = {}  # command -> its gate's drain lines (KREX_LOG=debug)
    phases = {}  # command -> its wall-clock marks (the commands table)
    cpu = {}  # command -> its CPU seconds (user + system, its waited-for processes)

    burned = [0, 0.0]  # this iteration's burns: loops, CPU seconds

    def burn(seconds):
        loops, used = P.burn_cpu(seconds)
        burned[0] += loops
        burned[1] += used

    def gpu_command(host_s, cmd, role):
        if p["mode"] == "cmd":
            t = time.time()
            lock(True)
            waited[0] += time.time() - t
        t0 = time.time()
        try:
            burn(max(0.0, host_s - p["startup"]))
            t_spawn = time.time()
            c0 = cpu_s(resource.RUSAGE_CHILDREN)
            # In the session's process group: when the window ends and the
            # session is killed, its running command dies with it instead of
            # running on into the next mode's window.
            rc, so, se = P.run_capture(cmd, env, 600, own_group=False)
            t_exit = time.time()
            cpu[role] = cpu_s(resource.RUSAGE_CHILDREN) - c0
        finally:
            if p["mode"] == "cmd":
                lock(False)
                held[0] += time.time() - t0
        if rc != 0:
            err[0] = (se.strip().splitlines() or ["rc %s" % rc])[-1][:200]
        ctx_held = None
        if p["drain_log"]:
            gates[role] = krexlog.parse_gate(se.splitlines())
            ctx_held = krexlog.context_held_s(se.splitlines())
        v = P.parse_kv(so, "victim")
        phases[role] = dict(burn0=t0, spawn=t_spawn, exit=t_exit, ctx_held=ctx_held,
                            **{x: P.num((v or {}).get("t_" + x))
                               for x in ("main", "init", "ctx", "mod", "ready", "end")})
        return rc, v

    d = p["d"]
    time.sleep(rnd.uniform(0, d["think"]))  # sessions do not start in step
    region = "batch" if p["mode"].startswith("krex") else "none"
    while time.time() < p["deadline"]:
        if p["mode"] == "job":
            lock(True)
        done = 0
        for _ in range(p["k"]):
            if time.time() >= p["deadline"]:
                break
            t0 = time.time()
            cpu0 = cpu_s(resource.RUSAGE_SELF) + cpu_s(resource.RUSAGE_CHILDREN)
            held[0] = waited[0] = 0.0
            burned[:] = [0, 0.0]
            time.sleep(d["think"] * rnd.uniform(0.5, 1.5))
            t1 = time.time()
            burn(d["compile"])
            t2 = time.time()
            gates.clear()
            phases.clear()
            cpu.clear()
            gpu_command(d["correct_host"], victim_cmd(p, p["n_correct"], 0, "none", "correct"),
                        "correct")
            t3 = time.time()
            raw = p["results"] + ".raw"
            rc, v = gpu_command(d["bench_host"], victim_cmd(p, p["n_timed"], p["n_warmup"],
                                                            region, "bench") + ["--raw", raw],
                                "bench")
            t4 = time.time()
            cpu_iter = cpu_s(resource.RUSAGE_SELF) + cpu_s(resource.RUSAGE_CHILDREN) - cpu0
            out.write(json.dumps(dict(t=t4, kind="bench", rc=rc, v=v, iter_s=t4 - t0,
                                      cpu_s=cpu_iter, cmd_cpu=dict(cpu),
                                      burn_loops=burned[0], burn_cpu=burned[1],
                                      hold_s=held[0], err=err[0], think_s=t1 - t0,
                                      compile_s=t2 - t1, correct_s=t3 - t2, bench_s=t4 - t3,
                                      lock_wait_s=waited[0], raw=read_raw(raw),
                                      regions=read_region_ids(p["results"] + ".certs"),
                                      gates=dict(gates), phases=dict(phases))) + "\n")
            out.flush()
            done += 1
        if p["mode"] == "job":
            lock(False)
        if done == p["k"]:
            out.write(json.dumps(dict(t=time.time(), kind="session")) + "\n")
            out.flush()


# ---- the driver -------------------------------------------------------------------

class Sim:
    def __init__(self, a):
        self.a = a
        self.made = ([], 0.0)  # the last KREX run's participants made (ms each), krexd's life (s)
        self.moved = []  # ... their moves on krexd's mover thread (ms each)
        self.tools = P.find_tools(a)
        self.env = P.base_env(a)
        self.out = P.out_dir(a, "agents")
        self.logpath = os.path.join(self.out, "agents.log")
        self.rows = []
        self.brows = []  # where the time goes
        self.srows = []  # the drain per sibling (--drain-log)
        self.crows = []  # a GPU command's wall time, split
        self.failed = 0
        d = {k: getattr(a, k) * a.scale for k in DURATIONS}
        self.d = d
        self.n_correct = samples(d["correct_gpu"], a.kernel_ms)
        self.n_warmup = samples(d["bench_warmup"], a.kernel_ms)
        self.n_timed = samples(d["bench_timed"], a.kernel_ms)
        self.startup = 0.0
        self.warm = a.warm_s if a.warm_s is not None else d["think"]
        self.sharer_rates = {}
        self.mps = a.mps == "on" or (a.mps == "auto" and mps_running())

    def params(self, mode, slot, deadline, iters, wrap=()):
        log = mode.startswith("krex") and P.drain_log(self.a)
        return dict(mode=mode, slot=slot, drain_log=log, seed=self.a.seed * 1000 + slot,
                    deadline=deadline,
                    wrap=list(wrap), startup=self.startup,
                    iters=iters, victim=self.tools["victim"], k=self.a.iters_per_session,
                    d=self.d, n_correct=self.n_correct, n_warmup=self.n_warmup,
                    n_timed=self.n_timed, lock=os.path.join(self.out, "gpu.lock"),
                    results=os.path.join(self.out, "w.%s.%d.jsonl" % (mode, slot)))

    def reference(self, iters, runs=5):
        """The timed benchmark alone on a quiet GPU, run a few times and pooled
        as the modes are (one short run's p95 is too noisy a reference)."""
        p = self.params("alone", 0, 0, iters)
        raw = os.path.join(self.out, "alone.raw")
        ev, wall, starts = [], [], []
        for _ in range(runs):
            cmd = victim_cmd(p, self.n_timed, self.n_warmup, "none", "alone") + ["--raw", raw]
            rc, so, se = P.run_capture(cmd, self.env, 300, self.logpath)
            r = read_raw(raw) if rc == 0 else None
            if r:
                ev += r["ev"]
                wall += r["wall"]
            # The start-up of a GPU command alone: a run of one short kernel.
            t0 = time.time()
            rc, so, se = P.run_capture(victim_cmd(p, 1, 0, "none", "startup"), self.env, 300,
                                       self.logpath)
            if rc == 0:
                starts.append(time.time() - t0)
        self.startup = P.percentile(starts, 50) or 0.0
        if not wall:
            return {}
        return {"wall_p50": P.percentile(wall, 50), "wall_p95": P.percentile(wall, 95),
                "ev_p50": P.percentile(ev, 50), "ev_p95": P.percentile(ev, 95)}

    def window(self, n, mode, iters, ref):
        """Run n sessions in mode for the window; return a row."""
        a, t = self.a, self.tools
        row = dict(n=n, mode=mode, window_s=a.window, mps=1 if self.mps else 0)
        if a.budget_s and P.elapsed() > a.budget_s:
            row["note"] = "skipped: time budget spent"
            return row
        if mode.startswith("krex") and not (t["krexd"] and t["krex"]):
            row["note"] = "skipped: krexd/krex not built"
            return row
        env, wrap, cmd_wrap, krexd, groups = dict(self.env), [], [], None, []
        self.made = ([], 0.0)  # krexd's participants made (ms each), krexd's life (s)
        self.moved = []  # their moves on krexd's mover thread (ms each)
        mock = P.MockGpu(env, "%s.%d" % (mode, n))
        util = P.GpuUtil()
        cpu = P.CpuUtil()
        try:
            if mode.startswith("krex"):
                opts = P.krexd_opts(a, a.queue_cap, "participants")
                krexd_t0 = time.time()
                krexd = P.Krexd(t["krexd"], opts, self.out, env, "agents.%s.%d" % (mode, n))
                if not krexd.wait_ready():
                    row["note"] = "skipped: krexd did not start"
                    return row
                env["KREX_SOCKET"] = krexd.sock
                wrap = [t["krex"], "run", "--"]
                if P.drain_log(a):
                    env["KREX_LOG"] = "debug"  # each gate logs its drains (krexlog.py)
            if mode == "krex":
                # Each GPU command a participant of its own; the session is not.
                wrap, cmd_wrap = [], wrap
            start = time.time()
            deadline = start + a.window
            util.start()
            cpu.start()
            for slot in range(n):
                p = self.params(mode, slot, deadline, iters, cmd_wrap)
                if os.path.exists(p["results"]):
                    os.unlink(p["results"])
                cmd = P.labelled(wrap, "s%d.session" % slot) + [
                    sys.executable, os.path.abspath(__file__), "--worker", json.dumps(p)]
                groups.append(P.Group(cmd, env, os.path.join(self.out, "w.%s.log" % mode),
                                      "session %d" % slot))
            time.sleep(max(0.0, deadline - time.time()))
        finally:
            util.stop()
            cpu.stop()
            stop_all(groups)
            if krexd:
                krexd.stop()
                self.made = (P.made_in(krexd.g.logpath), time.time() - krexd_t0)
                self.moved = P.moved_in(krexd.g.logpath)
            mock.close()
        log = krexd.g.logpath if krexd and P.drain_log(a) else None
        u = util.mean(start + self.warm, deadline)
        self.commands(n, mode, self.collect(row, n, mode, start, deadline, ref, log, u,
                                            cpu.busy_pct(start + self.warm, deadline)), u)
        return row

    def nominal_iter(self):
        """Seconds of one iteration with nothing shared: think (its mean),
        compile, each GPU command's host part (at least its start-up) and its
        kernels."""
        d, k = self.d, self.a.kernel_ms / 1000.0
        return (d["think"] + d["compile"] + max(d["correct_host"], self.startup) +
                max(d["bench_host"], self.startup) +
                k * (self.n_correct + self.n_warmup + self.n_timed))

    def collect(self, row, n, mode, start, deadline, ref, krexd_log=None, util=None,
                cpu_util=None):
        """The window's figures into row (util: NVML's mean GPU utilisation,
        None without NVML; cpu_util: the machine's CPU busy share, /proc/stat);
        returns the counted benchmarks."""
        benches, sessions, bad = [], 0, 0
        per_slot = []  # benchmarks counted per session slot
        gates = {}  # role -> the gate drain lines of every command (whole window)
        for slot in range(n):
            per_slot.append(len(benches))
            path = self.params(mode, slot, 0, 0)["results"]
            try:
                lines = open(path).read().splitlines()
            except OSError:
                continue
            for ln in lines:
                try:
                    r = json.loads(ln)
                except ValueError:
                    continue
                for role, g in (r.get("gates") or {}).items():
                    gates.setdefault(role, []).extend(g)
                if r["t"] > deadline or r["t"] < start + self.warm:
                    continue
                if r["kind"] == "session":
                    sessions += 1
                elif r.get("rc") == 0 and r.get("v"):
                    benches.append(r)
                else:
                    bad += 1
        k = self.a.iters_per_session
        counted = self.a.window - self.warm
        row["window_s"] = counted
        row["benches"] = len(benches)
        row["benches_se"] = self.count_se(mode, per_slot + [len(benches)])
        row["sessions"] = sessions
        row["bench_per_h"] = len(benches) * 3600.0 / counted
        row["sessions_per_h"] = row["bench_per_h"] / k
        # the host's CPU pace in the window: the burns' million loops per
        # CPU second (burns are CPU time: a slow host does not stretch them,
        # but the rest of a command's host part it does)
        loops = sum(r.get("burn_loops") or 0 for r in benches)
        bcpu = sum(r.get("burn_cpu") or 0.0 for r in benches)
        row["cpu_pace"] = loops / bcpu / 1e6 if bcpu > 0 else None
        row["iter_s"] = P.mean([r.get("iter_s") for r in benches])
        nominal = self.nominal_iter()
        row["iter_nominal_s"] = nominal
        row["ideal_per_h"] = (1 if mode == "job" else n) * 3600.0 / nominal
        if mode == "cmd":
            row["hold_s"] = P.mean([r.get("hold_s") for r in benches])
            if row["hold_s"]:
                row["ceiling_per_h"] = 3600.0 / row["hold_s"]
        # Every timed sample of every benchmark, pooled (the victim's raw file);
        # without it, the benchmarks' own p50 and p95.
        pooled = all(r.get("raw") for r in benches)
        for key, q in (("wall_p50", 50), ("wall_p95", 95), ("ev_p50", 50), ("ev_p95", 95)):
            kind = key.split("_")[0]
            if pooled:
                row[key] = P.percentile([x for r in benches for x in r["raw"][kind]], q)
            else:
                row[key] = P.percentile([P.num(r["v"].get(key)) for r in benches], q)
        if pooled:
            row["entry_p95"] = P.percentile([x for r in benches for x in r["raw"]["entry"]], 95)
        else:
            row["entry_p95"] = P.percentile([P.num(r["v"].get("entry_p95")) for r in benches],
                                            95)
        row["infl_wall_p95_pct"] = P.inflation(row["wall_p95"], ref.get("wall_p95"))
        cl = [r["v"]["outcome_clean"] for r in benches if r["v"].get("outcome_clean", "-") != "-"]
        row["clean"] = "%d/%d" % (sum(int(c) for c in cl), len(cl)) if cl else "-"
        self.breakdown(row, benches, n, mode, pooled, self.siblings(n, mode, krexd_log, gates),
                       util, cpu_util)
        if benches and not pooled:
            row["note"] = "per-benchmark percentiles (no raw samples)"
        if bad:
            self.failed += 1
            row["note"] = "%d benchmark runs failed (see w.*.log)" % bad
        return benches

    @staticmethod
    def count_se(mode, marks):
        """The standard error of a window's benchmark count where N sessions
        run side by side (marks: the running count before each slot, then
        the total): the count is their sum, so sqrt(N x the sample variance
        of the per-session counts).  None with the lock (cmd, job: one
        benchmark at a time, the count is sequential, its error about one
        benchmark) and with fewer than 2 sessions."""
        c = [b - a for a, b in zip(marks, marks[1:])]
        if mode in ("cmd", "job") or len(c) < 2:
            return None
        m = sum(c) / float(len(c))
        return (len(c) * sum((x - m) ** 2 for x in c) / (len(c) - 1)) ** 0.5

    def commands(self, n, mode, benches, util):
        """A GPU command's wall time split (the third table): the host burn
        (after the lock in cmd mode), start-up (spawn to the victim's first
        launch: the wrapper, exec, the gate's join, CUDA's initialisation, the
        context, the module), its GPU work (the first launch to the last
        sample's end; its kernels alone take gpu_nominal_s) and exit (the
        context's teardown, the wrapper's leave); util: NVML's mean GPU
        utilisation over the counted window (None without NVML)."""
        k = self.a.kernel_ms / 1000.0
        kernels = {"correct": self.n_correct, "bench": self.n_warmup + self.n_timed}
        for role in ("correct", "bench"):
            ph = [r["phases"][role] for r in benches
                  if role in (r.get("phases") or {}) and
                  all(r["phases"][role].get(x) is not None for x in ("ready", "end"))]
            span = lambda a, b: P.mean([x[b] - x[a] for x in ph  # noqa: E731
                                        if x.get(a) is not None and x.get(b) is not None])
            held = [x["ctx_held"] for x in ph if x.get("ctx_held") is not None]
            self.crows.append(dict(
                n=n, mode=mode, role=role, commands=len(ph), burn_s=span("burn0", "spawn"),
                start_s=span("spawn", "ready"), start_alone_s=self.startup,
                to_main_s=span("spawn", "main"), init_s=span("main", "init"),
                ctx_s=span("init", "ctx"), ctx_held_s=P.mean(held) if held else None,
                module_s=span("ctx", "mod"), gpu_s=span("ready", "end"),
                gpu_nominal_s=k * kernels[role], exit_s=span("end", "exit"),
                cpu_s=P.mean([(r.get("cmd_cpu") or {}).get(role) for r in benches]),
                gpu_util_pct=util))

    def siblings(self, n, mode, krexd_log, gates):
        """The drain per sibling of a KREX window (krexlog.py) from krexd's log
        and the commands' gate lines, by role: each GPU command's participant
        (krex: SLOT.correct, SLOT.bench) or each session's (krex-session:
        SLOT.session); None without --drain-log.  Returns (rows, krexd's
        regions)."""
        if not krexd_log:
            return None
        parsed = krexlog.parse_krexd(krexlog.read_lines(krexd_log))
        roles = ["session"] if mode == "krex-session" else ["correct", "bench"]
        if mode == "krex-session":  # the commands are members of the session
            gates = {"session": [x for g in gates.values() for x in g]}

        def role(label, pid):
            m = re.match(r"s\d+\.(\w+)$", label)
            return m.group(1) if m else label
        rows = krexlog.table(parsed, role, gates, roles)
        for r in rows:
            r.update(n=n, mode=mode)
            if not parsed["parts"]:
                r["note"] = "no participant in %s" % os.path.basename(krexd_log)
        self.srows += rows
        return rows, parsed["regions"]

    def breakdown(self, row, benches, n, mode, pooled, sib=None, util=None, cpu_util=None):
        """Where an iteration's time went (a row of the second table), and the
        bound for this N into row: the smallest of the ideal, the CPU bound and
        the region bound (the module's docstring).  sib: siblings()."""
        d, k = self.d, self.a.kernel_ms / 1000.0
        b = dict(n=n, mode=mode, iter_s=row.get("iter_s"))
        for key in ("think_s", "compile_s", "correct_s", "bench_s", "lock_wait_s"):
            b[key] = P.mean([r.get(key) for r in benches])
        nominal = {"correct_s": max(d["correct_host"], self.startup) + k * self.n_correct,
                   "bench_s": max(d["bench_host"], self.startup) +
                   k * (self.n_warmup + self.n_timed)}
        for key, nom in nominal.items():
            if b[key] is not None:
                b[key.replace("_s", "_lost_s")] = b[key] - nom
        if pooled and mode.startswith("krex"):
            b["entry_ms"] = P.mean([sum(r["raw"]["entry"]) for r in benches])
        made, life = self.made
        if made:
            b["made_p50_ms"] = P.percentile(made, 50)
            b["made_loop_pct"] = 100.0 * sum(made) / 1000.0 / life if life > 0 else None
        if self.moved:
            b["moved_p50_ms"] = P.percentile(self.moved, 50)
        cert = lambda f: P.mean([P.num(r["v"].get(f)) for r in benches])  # noqa: E731
        for key, f in (("queued_ms", "cert_wait_us"), ("drain_ms", "cert_drain_us"),
                       ("freeze_ms", "cert_freeze_us"), ("isolate_ms", "cert_isolate_us"),
                       ("settle_ms", "cert_settle_us"), ("held_ms", "cert_held_us")):
            us = cert(f)
            b[key] = us / 1000.0 if us is not None else None
        if b.get("entry_ms") is not None and b.get("drain_ms") is not None:
            # what krexd's phases do not explain: the round trips, krexd's loop
            b["entry_other_ms"] = b["entry_ms"] - sum(b.get(x) or 0.0 for x in (
                "queued_ms", "drain_ms", "freeze_ms", "isolate_ms", "settle_ms"))
        b["regions"] = cert("regions")
        nreg = sum(P.num(r["v"].get("regions")) or 0 for r in benches)
        if nreg:
            b["chained_pct"] = 100.0 * sum(P.num(r["v"].get("chained")) or 0
                                           for r in benches) / nreg
        if pooled:
            # the first timed kernel (the first after the grant in the KREX
            # modes) against the benchmark's median
            b["first_kernel_ms"] = P.mean([r["raw"]["wall"][0] - P.percentile(
                r["raw"]["wall"], 50) for r in benches if r["raw"]["wall"]])
        if sib:
            self.gated(b, row, mode, *sib)
        # The CPU an iteration took (the session's burns and its GPU
        # commands', the commands' spin-waits included) against the
        # nominal CPU the CPU bound counts, and the machine's CPU use.
        b["cpu_iter_s"] = P.mean([r.get("cpu_s") for r in benches])
        b["cmd_cpu_s"] = P.mean([sum((r.get("cmd_cpu") or {}).values()) for r in benches
                                 if r.get("cmd_cpu")])
        b["cpu_util_pct"] = cpu_util
        if util is not None and benches:
            # the GPU's busy seconds per benchmark (NVML: any kernel running):
            # its kernels and whatever else keeps it busy (contexts made and
            # torn down, switches between them)
            b["gpu_util_pct"] = util
            b["gpu_busy_s"] = util / 100.0 * row["window_s"] / len(benches)
        if mode == "cmd":
            b["excl_s"] = row.get("hold_s")
        elif b.get("held_ms") is not None:
            # the region slot a benchmark takes: gates closed (its queue wait
            # excluded) to the end of the unwind, the isolation and the round
            # trips of the entry included
            entry = (b["entry_ms"] - (b.get("queued_ms") or 0.0) if b.get("entry_ms") is not None
                     else sum(b.get(x) or 0.0 for x in ("drain_ms", "freeze_ms", "isolate_ms",
                                                         "settle_ms")))
            b["excl_s"] = (entry + b["held_ms"] + (b.get("exit_ms") or 0.0)) / 1000.0
        self.brows.append(b)
        cores = len(os.sched_getaffinity(0))
        cpu_iter = self.cpu_iter()
        row["cpu_bound_per_h"] = cores * 3600.0 / cpu_iter if cpu_iter > 0 else None
        if b.get("excl_s"):
            row["region_bound_per_h"] = 3600.0 / b["excl_s"]
        # The GPU's own bound: the kernels of different processes do not run
        # at once on a GPU without MPS (nor on the mock: its device lock), so
        # an iteration needs all its kernels' GPU time: outside regions the
        # correctness and warm-up kernels, and its region slot (excl_s; the
        # drain's time is other sessions' kernels, counted as theirs).
        shared = k * self.n_correct
        if mode.startswith("krex") and b.get("excl_s"):
            shared += k * self.n_warmup
            gpu_iter = shared + b["excl_s"] - (b.get("drain_ms") or 0.0) / 1000.0
        else:
            gpu_iter = shared + k * (self.n_warmup + self.n_timed)
        row["gpu_bound_per_h"] = 3600.0 / gpu_iter if gpu_iter > 0 else None
        # Over MPS the kernels of different processes run at once: an
        # iteration's kernels serialized bound nothing (session 25: plain
        # sharing over MPS made 6055 an hour against a "GPU bound" of 5484)
        bounds = [x for x in (row.get("ideal_per_h"), row.get("cpu_bound_per_h"),
                              row.get("region_bound_per_h"),
                              None if self.mps else row.get("gpu_bound_per_h")) if x]
        if bounds:
            row["bound_per_h"] = min(bounds)
            row["of_bound_pct"] = 100.0 * row["bench_per_h"] / row["bound_per_h"]
        row["sharer_per_h"] = self.sharer(n)
        if row["sharer_per_h"] and row.get("bench_per_h") is not None:
            row["of_sharer_pct"] = 100.0 * row["bench_per_h"] / row["sharer_per_h"]

    def cpu_iter(self):
        """The nominal CPU seconds of an iteration (the CPU bound's): compile
        and each GPU command's host part (at least its start-up)."""
        d = self.d
        return (d["compile"] + max(d["correct_host"], self.startup) +
                max(d["bench_host"], self.startup))

    def sharer(self, n):
        """sharer.py's rate for n sessions of this run's model (cached)."""
        if n not in self.sharer_rates:
            self.sharer_rates[n] = sharer.simulate(
                n, self.d, self.startup, self.a.kernel_ms / 1000.0, self.n_correct,
                self.n_warmup, self.n_timed, len(os.sched_getaffinity(0)), self.a.seed)[0]
        return self.sharer_rates[n]

    def gated(self, b, row, mode, rows, regions):
        """From krexd's log (siblings()): exit_ms, the unwind of a benchmark's
        regions (mean per region x regions per benchmark), and gated_ms, the
        time per iteration a session's GPU work outside its regions was held
        back by other sessions' regions (krex: the mean per correctness
        command plus the mean per benchmark command; krex-session: the
        session's held-back share of the window x iter_s)."""
        exits = [r["exit_us"] / 1000.0 for r in regions.values() if "exit_us" in r]
        if exits and b.get("regions"):
            b["exit_ms"] = P.mean(exits) * b["regions"]
        per = {r["sibling"]: r["gated_ms"] / r["participants"] for r in rows
               if r.get("participants") and r.get("gated_ms") is not None}
        if mode == "krex" and ("correct" in per or "bench" in per):
            b["gated_ms"] = per.get("correct", 0.0) + per.get("bench", 0.0)
        elif mode == "krex-session" and "session" in per and row.get("iter_s"):
            b["gated_ms"] = per["session"] / self.a.window * row["iter_s"]

    def run(self):
        a = self.a
        P.log("out: %s; per iteration (s): %s; samples correct/warmup/timed %d/%d/%d" % (
            self.out, ", ".join("%s=%.3g" % kv for kv in self.d.items()), self.n_correct,
            self.n_warmup, self.n_timed))
        rc, so, se = P.run_capture([self.tools["victim"], "calib", "%g" % a.kernel_ms], self.env,
                                   120, self.logpath)
        if rc != 0 or not so.split() or not so.split()[-1].isdigit():
            print("agents: krex-victim calib failed (rc %s)" % rc)
            return 1
        iters = int(so.split()[-1])
        rate = P.burn_rate()
        ref = self.reference(iters)
        P.log("calib %g ms -> %d iters; burn %.3g loops/CPU s (the pace before the windows); "
              "alone wall_p95 %s" % (a.kernel_ms, iters, rate, P.fmt(ref.get("wall_p95"))))
        stopped = ""
        try:
            job = None
            for n in a.n:
                rows = {}
                for mode in a.modes:
                    if mode == "krex-session" and n not in a.session_n:
                        continue
                    if mode == "job" and job is not None and not a.job_every_n:
                        # One session at a time whatever N is: the first N's figure.
                        rows[mode] = dict(job, n=n, note="measured at N=%d" % job["n"])
                        continue
                    rows[mode] = self.window(n, mode, iters, ref)
                    if mode == "job":
                        job = rows[mode]
                    P.log("N=%d %s: %s benches %s" % (n, mode, rows[mode].get("benches"),
                                                       rows[mode].get("note", "")))
                krex = rows.get("krex", {})
                bad = any(w in krex.get("note", "") for w in ("failed", "skipped"))
                k = None if bad or not krex.get("benches") else krex.get("bench_per_h")
                for mode, r in rows.items():
                    r = dict(r)
                    if k is not None and r.get("bench_per_h"):
                        r["krex_over_mode"] = k / r["bench_per_h"]
                    self.rows.append(r)
        except P.Interrupted as e:
            stopped = "INTERRUPTED (%s): the table holds what ran before" % e
            self.failed += 1
        P.cgroups_remove()
        title = "Agent sessions per hour (alone: timed wall_p50 %s, wall_p95 %s ms)%s" % (
            P.fmt(ref.get("wall_p50")), P.fmt(ref.get("wall_p95")),
            ", over MPS" if self.mps else "")
        md = P.write_tables(self.rows, COLS, os.path.join(self.out, "agents.csv"),
                            os.path.join(self.out, "agents.md"), title, DIGITS)
        print(md)
        print(P.write_tables(self.brows, BCOLS, os.path.join(self.out, "agents-breakdown.csv"),
                             os.path.join(self.out, "agents-breakdown.md"),
                             "Where the time goes (s per iteration; ms per benchmark, its "
                             "regions summed)", BDIGITS))
        print(P.write_tables(self.crows, CCOLS, os.path.join(self.out, "agents-commands.csv"),
                             os.path.join(self.out, "agents-commands.md"),
                             "A GPU command's wall time, split (s, means)", CDIGITS))
        if self.srows:
            print(P.write_tables(self.srows, ["n", "mode"] + krexlog.COLS + ["note"],
                                 os.path.join(self.out, "agents-siblings.csv"),
                                 os.path.join(self.out, "agents-siblings.md"),
                                 krexlog.TITLE + "; by role: SLOT.correct, SLOT.bench and "
                                 "SLOT.session participants", krexlog.DIGITS))
        if stopped:
            print(stopped)
        print("per iteration (scaled s): %s; iterations per session %d" % (
            ", ".join("%s=%.3g" % kv for kv in self.d.items()), a.iters_per_session))
        print("GPU command start-up alone %.3f s (taken off the host burn); nominal iteration "
              "%.2f s; first %.1f s of each window not counted" % (
                  self.startup, self.nominal_iter(), self.warm))
        print("krex_over_mode: KREX (a participant per GPU command) / that mode; ideal_per_h: N "
              "sessions never waiting; ceiling_per_h (cmd): one iteration per lock hold; "
              "benches_se: the count's standard error, sqrt(N x the variance of the "
              "sessions' counts), '-' with the lock (one benchmark at a time)")
        print("bound_per_h: the smallest of ideal_per_h, cpu_bound_per_h (%d cores / CPU s per "
              "iteration), gpu_bound_per_h (3600 / the GPU s of an iteration's kernels, its "
              "region slot less the drain in the KREX modes) and region_bound_per_h (3600 / "
              "excl_s, the exclusive GPU s per "
              "benchmark); of_bound_pct: bench_per_h against it" % len(os.sched_getaffinity(0)))
        if self.mps:
            print("over MPS (--mps %s): the kernels of different processes run at once, so "
                  "gpu_bound_per_h (every kernel serialized) and sharer_per_h (a time-sliced "
                  "GPU) are no bounds; bound_per_h leaves gpu_bound_per_h out" % self.a.mps)
        print("sharer_per_h: the model on a perfect sharer (sharer.py: the GPU time-sliced "
              "and regions entered at no cost, the CPU's work spread over the cores); "
              "of_sharer_pct: bench_per_h against it, what the mode costs on top of sharing")
        print("breakdown: *_lost_s is a command's time past its nominal length (waiting at the "
              "gate, frozen, or for the lock); entry_ms: begin to grant, summed over a "
              "benchmark's regions; queued/drain/freeze/isolate/settle/held_ms from the "
              "certificates (isolation runs after the freeze); entry_other_ms: entry_ms less "
              "queued, drain, freeze, isolate and settle (round trips, krexd's loop); "
              "first_kernel_ms: the first timed kernel (in KREX the first after the grant) "
              "less the benchmark's median; exit_ms: the regions' unwind (krexd's log); "
              "made_p50_ms: a participant's making on krexd's loop (its cgroup made; the pid "
              "moved in only with KREXD_MOVE_INLINE=1), made_loop_pct: the share of krexd's "
              "life its loop spent on that; moved_p50_ms: the pid's move into its cgroup on "
              "krexd's mover thread (without the kernel's favordynmods an RCU grace period, "
              "doc/admin.md); "
              "gated_ms: GPU work outside the session's regions held back by other "
              "sessions' regions, per iteration (krexd's log); excl_s: a benchmark's "
              "region slot, entry less queued + held + exit (cmd: the lock's hold); "
              "gpu_util_pct: NVML's utilization.gpu over the counted window; gpu_busy_s: "
              "the GPU's busy seconds per benchmark (util x window / benchmarks; its kernels "
              "alone take 0.6 s at --scale 0.2); cpu_iter_s: the CPU s an iteration took "
              "(getrusage: the session's and its GPU commands', cmd_cpu_s of it the "
              "commands'), against %.2f s nominal (the CPU bound's); cpu_util_pct: the "
              "machine's CPU busy share over the counted window (/proc/stat)" % self.cpu_iter())
        print("commands: burn_s the host part before the command (after the lock in cmd); "
              "start_s spawn to the first launch (to_main_s of it before main(): the "
              "wrapper, exec, the gate's join; init_s main() to cuInit's return; ctx_s "
              "from there to the primary context's, ctx_held_s of it waiting at a closed "
              "gate (the gate's debug line, KREX modes with --drain-log); module_s the "
              "module's load), against start_alone_s; gpu_s the first "
              "launch to the last sample's end, against its kernels' gpu_nominal_s; exit_s "
              "the last sample to the command's exit (the context's teardown); cpu_s: the "
              "command's CPU s (user + system, getrusage); gpu_util_pct: NVML's "
              "utilization.gpu over the counted window, '-' without NVML (the mock)")
        print("results: %s (%.0f s)" % (self.out, P.elapsed()))
        return 1 if self.failed else 0


def stop_all(groups):
    """SIGTERM every session at once, then reap each (SIGKILL after a grace)."""
    for g in groups:
        P.killpg(g.p.pid, signal.SIGTERM)
    for g in groups:
        g.stop(grace=3.0)


def main():
    a = parse_args()
    if a.worker:
        worker(json.loads(a.worker))
        return 0
    P.on_term()
    s = Sim(a)
    if not s.tools["victim"]:
        print("krex-victim not built under %s (give --builddir or --victim)" % a.builddir)
        return 77
    return s.run()


if __name__ == "__main__":
    sys.exit(main())
