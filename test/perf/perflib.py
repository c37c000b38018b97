# SPDX-License-Identifier: BSD-3-Clause
"""perflib - what the KREX benchmarks (fidelity.py, agents.py) share.

Stdlib only: it runs on Debian's python3 (3.11) and on the GPU machine's 3.12.
Benchmarks print figures; nothing here ever judges a timing.

Contents: finding the built binaries, starting and stopping process groups and
krexd, percentiles, victim output parsing, the GPU clocks (nvidia-smi, read
only), CSV and markdown tables, and a tiny CPU burner used as a sibling.
"""

import argparse
import atexit
import csv
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.normpath(os.path.join(HERE, "..", ".."))

# Where each tool lives in a build tree (first match wins); flags and
# KREX_PERF_<NAME> environment variables override these.
TOOL_PATHS = {
    "victim": ["test/workloads/krex-victim"],
    "hog": ["test/workloads/krex-hog"],
    "krexd": ["krexd/krexd", "krexd"],
    "krex": ["krex/krex", "krexd/krex", "krex"],
}
TORCH_LOOP = "test/workloads/torch_loop.py"
GATE_LIB = "gate/.libs/libkrexgate.so"
# Mock libcuda.so.1 directories in a build tree (libtool puts the real file in .libs).
MOCK_DIRS = ["test/mock/.libs", "test/mock"]

_t0 = time.monotonic()


class Interrupted(Exception):
    """SIGTERM or SIGINT arrived: stop measuring, clean up, write what we have."""


def on_term():
    """Turn SIGTERM/SIGINT into Interrupted, so that `timeout` still gets the
    tables of what ran (and every sibling and krexd is stopped by finally)."""
    def handler(sig, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise Interrupted("signal %d" % sig)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def log(msg):
    """One progress line on stderr, stamped with seconds since start."""
    sys.stderr.write("[%7.1fs] %s\n" % (time.monotonic() - _t0, msg))
    sys.stderr.flush()


def elapsed():
    return time.monotonic() - _t0


def preset_parser(doc):
    """An argument parser with --quick/--full (dest preset) and the common
    flags of every driver."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_const", dest="preset", const="quick")
    g.add_argument("--full", action="store_const", dest="preset", const="full")
    add_common_args(ap)
    return ap


def add_common_args(ap):
    """Flags both drivers take: where the binaries are, where results go."""
    ap.add_argument("--builddir", default=os.environ.get("KREX_BUILDDIR", SRCDIR),
                    help="top build directory (env KREX_BUILDDIR; default: the source tree)")
    ap.add_argument("--srcdir", default=SRCDIR, help="top source directory")
    for name in TOOL_PATHS:
        ap.add_argument("--" + name, default=os.environ.get("KREX_PERF_" + name.upper()),
                        help="path of %s (env KREX_PERF_%s)" % (name, name.upper()))
    ap.add_argument("--libtool-wrappers", action="store_true",
                    help="run the build tree's libtool wrapper scripts as they are (by "
                    "default each is replaced by its program in .libs/ and the wrapper's "
                    "library directories go to LD_LIBRARY_PATH: an installed program pays "
                    "no shell at each start)")
    ap.add_argument("--torch-loop", default=os.environ.get("KREX_PERF_TORCH_LOOP"),
                    help="path of torch_loop.py")
    ap.add_argument("--python", default=sys.executable, help="python for torch_loop.py")
    ap.add_argument("--mock", default=os.environ.get("KREX_PERF_MOCK"),
                    help="directory holding the mock libcuda.so.1 (prepended to "
                    "LD_LIBRARY_PATH); 'auto' looks in the build tree")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="extra environment for every process started")
    ap.add_argument("--out", default=None, help="directory for CSV, markdown and logs")
    ap.add_argument("--queue-cap", type=int, default=2,
                    help="krexd queue_cap in the KREX modes that keep it (default 2)")
    ap.add_argument("--queue-time", default="1ms",
                    help="krexd queue_time in the KREX modes that keep the bounded queue "
                    "(default 1ms; 0 = by launch count only)")
    ap.add_argument("--gpus", default=os.environ.get("KREX_PERF_GPUS"),
                    help="node-wide GPU names for krexd (-o gpus=) and every participant "
                    "(KREX_GPUS); default: g0 with the mock, else krexd's own discovery "
                    "(env KREX_PERF_GPUS)")
    ap.add_argument("--max-region-ms", type=int, default=10000,
                    help="krexd max_region (lease cap) in the KREX modes (default 10000)")
    ap.add_argument("--krexd-opt", action="append", default=[], metavar="K=V",
                    help="extra krexd -o option for every KREX mode")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="stop starting new measurements after this many seconds")
    ap.add_argument("--drain-log", action=argparse.BooleanOptionalAction, default=None,
                    help="run krexd at log_level=debug and the siblings' gates at "
                    "KREX_LOG=debug, and write the drain per sibling from their logs "
                    "(krexlog.py; default: on with --full, and with --quick on --mock)")


def krexd_opts(args, queue_cap, isolate):
    """krexd -o options of a KREX mode."""
    # A lease far above any region here (a batch is ~100 ms) but short, so a
    # region that hangs is revoked in seconds, not after krexd's default minute.
    # A cgroup subtree of our own: krexd names participants' cgroups p1, p2..
    # under it, and another krexd on the machine (a test) with the same subtree
    # would freeze, thaw and remove ours.
    opts = ["queue_cap=%d" % queue_cap, "queue_time=%s" % args.queue_time, "isolate=%s" % isolate,
            "max_region=%d" % args.max_region_ms, "cgroup_subtree=" + CGROUP_SUBTREE]
    if args.gpus:
        opts.append("gpus=%s" % args.gpus)
    if drain_log(args):
        opts.append("log_level=debug")  # each drain ack, per sibling (krexlog.py)
    return opts + args.krexd_opt


def drain_log(args):
    """Whether the drain per sibling is logged and tabled (--drain-log)."""
    if args.drain_log is None:
        return args.preset == "full" or bool(args.mock)
    return args.drain_log


def labelled(wrap, name):
    """`krex run --label NAME --` from a `krex run --` wrapper (krexd logs the
    label as the participant registers: krexlog.py names siblings by it)."""
    return wrap[:2] + ["--label", name] + wrap[2:] if wrap else wrap


CGROUP_SUBTREE = "krex-perf-%d" % os.getpid()


def cgroups_remove():
    """Remove our krexds' cgroup subtree (empty by now; krexd leaves the
    directories), bottom up, under every mounted hierarchy.  Best effort."""
    import glob
    for top in glob.glob("/sys/fs/cgroup/*/" + CGROUP_SUBTREE) + glob.glob(
            "/sys/fs/cgroup/" + CGROUP_SUBTREE):
        for d, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
            try:
                os.rmdir(d)
            except OSError:
                pass


def libtool_program(path):
    """For libtool's wrapper script of an uninstalled program (a shell script
    that sets LD_LIBRARY_PATH, runs sed, then execs .libs/NAME): the program
    itself and the library directories the wrapper would add; None for
    anything else.  The wrapper costs every start a shell and a sed (12 ms
    at p50 on the 2-vCPU VM, more on a busy node, and under `krex run` each
    of them loads the gate), which an installed program never pays."""
    try:
        with open(path, "rb") as f:
            head = f.read(65536).decode("utf-8", "replace")
    except OSError:
        return None
    if not head.startswith("#!") or "temporary wrapper script for .libs/" not in head:
        return None
    prog = os.path.join(os.path.dirname(path), ".libs", os.path.basename(path))
    if not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
        return None
    m = re.search(r'^\s*LD_LIBRARY_PATH="([^"$]*):\$LD_LIBRARY_PATH"', head, re.M)
    return prog, [d for d in (m.group(1).split(":") if m else []) if d]


def find_tools(args):
    """Map tool name -> path (or None when not built).  A libtool wrapper is
    replaced by its program (--libtool-wrappers keeps it) and the library
    directories it would set go to args.lt_libdirs (base_env() adds them)."""
    tools = {}
    args.lt_libdirs = []
    for name, rels in TOOL_PATHS.items():
        given = getattr(args, name)
        if given:
            tools[name] = given if os.access(given, os.X_OK) else None
        else:
            tools[name] = None
            for rel in rels:
                p = os.path.join(args.builddir, rel)
                if os.path.isfile(p) and os.access(p, os.X_OK):
                    tools[name] = p
                    break
        lt = (tools[name] and not getattr(args, "libtool_wrappers", False) and
              libtool_program(tools[name]))
        if lt:
            log("%s: %s, not libtool's wrapper (--libtool-wrappers keeps it)" % (name, lt[0]))
            tools[name] = lt[0]
            args.lt_libdirs += [d for d in lt[1] if d not in args.lt_libdirs]
    tl = args.torch_loop or os.path.join(args.srcdir, TORCH_LOOP)
    tools["torch_loop"] = tl if os.path.isfile(tl) else None
    return tools


def _unlink_quiet(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def base_env(args):
    """Environment every benchmark process starts from."""
    env = dict(os.environ)
    mock = args.mock
    if mock == "auto":
        mock = None
        for rel in MOCK_DIRS:
            d = os.path.join(args.builddir, rel)
            if os.path.exists(os.path.join(d, "libcuda.so.1")):
                mock = d
                break
        if mock is None:
            log("warning: --mock auto found no libcuda.so.1 under %s" % args.builddir)
    if mock and not args.gpus:
        args.gpus = "g0"  # the mock's one simulated GPU has no name krexd could find
    if args.gpus:
        env["KREX_GPUS"] = args.gpus
    if mock:
        env["KREX_PERF_MOCK_ON"] = "1"
        if "KREX_MOCK_GPU" not in env:
            # the calibrations' and startup's mock GPU: this run's own, not the
            # mock's default name for the uid, which a run would leave behind
            name = "/krex-perf-%d" % os.getpid()
            env["KREX_MOCK_GPU"] = name
            atexit.register(_unlink_quiet, "/dev/shm" + name)
        old = env.get("LD_LIBRARY_PATH")
        env["LD_LIBRARY_PATH"] = mock + (":" + old if old else "")
    if getattr(args, "lt_libdirs", None):  # find_tools() unwrapped libtool's wrappers
        old = env.get("LD_LIBRARY_PATH")
        env["LD_LIBRARY_PATH"] = ":".join(args.lt_libdirs + ([old] if old else []))
    # `krex run` preloads the gate from KREX_GATE_LIB, else from the installed
    # libdir: point it at the build tree's gate when there is one.
    gate = os.path.join(args.builddir, GATE_LIB)
    if "KREX_GATE_LIB" not in env and os.path.exists(gate):
        env["KREX_GATE_LIB"] = gate
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    env.pop("KREX_SOCKET", None)  # each mode says which krexd it wants
    return env


class MockGpu:
    """A fresh simulated GPU (test/mock's KREX_MOCK_GPU shared-memory object)
    for one group of processes, removed afterwards.  Why: a process killed
    while it waits for the mock's device lock stays counted as a waiter, and
    the mock's politeness then delays every later kernel by up to 2 ms; a
    fresh object per group keeps one group's kills out of the next group's
    figures.  Harmless with a real driver (nothing reads the variable)."""

    def __init__(self, env, tag):
        self.name = None
        if env.get("KREX_PERF_MOCK_ON"):
            self.name = "/krex-perf-%d-%s" % (os.getpid(), tag.replace("/", "_"))
            env["KREX_MOCK_GPU"] = self.name

    def close(self):
        if self.name:
            try:
                os.unlink("/dev/shm" + self.name)
            except OSError:
                pass


# ---- processes ---------------------------------------------------------------

class Group:
    """A command in its own session (process group), so that it and every
    child it starts can be stopped together by its pgid."""

    def __init__(self, cmd, env, logpath, name):
        self.name = name
        self.logpath = logpath
        self.logf = open(logpath, "ab")
        self.logf.write(("$ %s\n" % " ".join(cmd)).encode())
        self.logf.flush()
        self.p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                                  stdout=self.logf, stderr=subprocess.STDOUT,
                                  start_new_session=True)

    def alive(self):
        return self.p.poll() is None

    def stop(self, grace=3.0):
        """SIGTERM the group, SIGKILL what is left after grace seconds."""
        if self.p.poll() is None:
            killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        # Children may outlive the leader; the group id stays theirs.
        killpg(self.p.pid, signal.SIGKILL)
        try:
            self.p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            log("warning: %s (pid %d) did not exit" % (self.name, self.p.pid))
        self.logf.close()
        return self.p.returncode


def killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_capture(cmd, env, timeout, logpath=None, own_group=True):
    """Run cmd (in its own process group unless own_group is False: then it
    dies with the caller's group); return (rc, stdout, stderr).  rc is None on
    timeout (the command, with its group, is killed)."""
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=own_group)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        kill(p, own_group)
        out, err = p.communicate()
        rc = None
    except BaseException:
        kill(p, own_group)  # interrupted: leave nothing behind
        p.wait()
        raise
    if logpath:
        with open(logpath, "ab") as f:
            f.write(("$ %s\n" % " ".join(cmd)).encode())
            f.write(out)
            f.write(err)
            f.write(("# rc=%s\n" % rc).encode())
    return rc, out.decode(errors="replace"), err.decode(errors="replace")


def kill(p, group):
    """SIGKILL a Popen, with its process group when it has one of its own."""
    if group:
        killpg(p.pid, signal.SIGKILL)
    else:
        try:
            p.kill()
        except OSError:
            pass


def wait_file(path, timeout, procs=()):
    """Wait until path exists and is not empty; False on timeout or when one of
    procs (Group) died first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if os.path.getsize(path) > 0:
                return True
        except OSError:
            pass
        if any(not g.alive() for g in procs):
            return False
        time.sleep(0.05)
    return False


def rundir_base(workdir):
    """Where a private krexd's run directory goes: $KREX_PERF_RUNDIR, else
    /dev/shm (a tmpfs, as /run/krex is in production: krexd's state file is
    rewritten several times a region, and on a disk or an overlay file system
    each rename costs the region's entry milliseconds), else workdir."""
    base = os.environ.get("KREX_PERF_RUNDIR")
    if base:
        return base
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
        return "/dev/shm"
    return workdir


class Krexd:
    """One krexd in the foreground in a private run directory."""

    def __init__(self, krexd, opts, workdir, env, name):
        self.rundir = tempfile.mkdtemp(prefix="krexd-", dir=rundir_base(workdir))
        self.sock = os.path.join(self.rundir, "krexd.sock")
        cmd = [krexd, "-F", "-r", self.rundir]
        for kv in opts:
            cmd += ["-o", kv]
        self.g = Group(cmd, env, os.path.join(workdir, name + ".krexd.log"), "krexd")

    def wait_ready(self, timeout=15.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if os.path.exists(self.sock):
                return True
            if not self.g.alive():
                return False
            time.sleep(0.05)
        return False

    def log_tail(self, n=8):
        try:
            with open(self.g.logpath, errors="replace") as f:
                return f.readlines()[-n:]
        except OSError:
            return []

    def stop(self):
        # SIGTERM makes krexd thaw, restore and reopen everything first.
        self.g.stop(grace=10.0)
        shutil.rmtree(self.rundir, ignore_errors=True)


# ---- figures -------------------------------------------------------------------

def mean(values):
    """Mean of the values that are not None; None for no data."""
    v = [x for x in values if x is not None]
    return sum(v) / len(v) if v else None


def percentile(values, q):
    """q-th percentile (0..100) with linear interpolation; None for no data."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    if len(v) == 1:
        return v[0]
    k = (len(v) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def parse_kv(line, prefix):
    """'victim a=1 b=x' -> {'a': '1', 'b': 'x'} for the last line that starts
    with prefix; None when there is none."""
    found = None
    for ln in line.splitlines():
        if ln.startswith(prefix + " "):
            found = ln
    if found is None:
        return None
    d = {}
    for tok in found.split()[1:]:
        k, sep, v = tok.partition("=")
        if sep:
            d[k] = v
    return d


def num(v):
    """Float of a victim field; None for '-', missing or garbage."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def made_in(logpath):
    """Each participant's making on krexd's loop (ms): krexd's log lines
    "participant N: pid ... (made in US us)"; [] without the log.  The move
    of its pid into its cgroup is in it only with KREXD_MOVE_INLINE=1
    (moved_in() has the mover thread's)."""
    try:
        with open(logpath, errors="replace") as f:
            text = f.read()
    except (OSError, TypeError):
        return []
    return [int(x) / 1000.0 for x in re.findall(r"participant \d+: pid .*\(made in (\d+) us\)",
                                                  text)]


def moved_in(logpath):
    """Each move of a participant's pid into its cgroup on krexd's mover
    thread (ms): "... moved in by the mover thread in US us ..."; [] without
    the log or with the moves on the loop (KREXD_MOVE_INLINE=1)."""
    try:
        with open(logpath, errors="replace") as f:
            text = f.read()
    except (OSError, TypeError):
        return []
    return [int(x) / 1000.0 for x in re.findall(r"moved in by the mover thread in (\d+) us", text)]


def raw_walls(path):
    """Wall times (ms) of krex-victim --raw's file: lines "i ev_ms wall_ms entry_ms"."""
    return [r[1] for r in raw_rows(path)]


def raw_rows(path):
    """(ev_ms, wall_ms, entry_ms or -1) of each line of krex-victim --raw's file."""
    out = []
    try:
        with open(path) as f:
            for ln in f:
                t = ln.split()
                if len(t) >= 4 and None not in (num(t[1]), num(t[2]), num(t[3])):
                    out.append((float(t[1]), float(t[2]), float(t[3])))
    except OSError:
        pass
    return out


def bracketed_wall_p95(raw_dir, size, label):
    """A KREX row's wall p95 against alone before and after it, in percent:
    its raw samples (raw_dir/LABEL.txt, LABEL as fidelity.py names its raw
    files: krex_all_1_sample) against those of alone and alone-end of the same
    size pooled.  None without all three."""
    z = "%g" % size
    ref = raw_walls(os.path.join(raw_dir, "alone_none_%s_none.txt" % z))
    end = raw_walls(os.path.join(raw_dir, "alone-end_none_%s_none.txt" % z))
    k = raw_walls(os.path.join(raw_dir, label + ".txt"))
    if not (ref and end and k):
        return None
    return inflation(percentile(k, 95), percentile(ref + end, 95))


def inflation(x, ref):
    """Percent by which x exceeds ref."""
    if x is None or not ref:
        return None
    return (x / ref - 1.0) * 100.0


def fmt(v, digits=4):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.*f" % (digits, v)
    return str(v)


def write_tables(rows, cols, csv_path, md_path, title, digits=None):
    """Write rows (dicts) as CSV (raw values) and as a markdown table; return
    the markdown text."""
    digits = digits or {}
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
    lines = ["## " + title, "", "| " + " | ".join(cols) + " |",
             "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(c), digits.get(c, 4)) for c in cols) + " |")
    text = "\n".join(lines) + "\n"
    with open(md_path, "w") as f:
        f.write(text)
    return text


def gpu_clocks():
    """The GPU clocks and clock-event reasons, read only; None without nvidia-smi.
    Never changes a clock, a power limit or a mode."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        r = subprocess.run([smi, "--query-gpu=clocks.sm,clocks.mem,clocks_event_reasons.active",
                            "--format=csv"], capture_output=True, text=True, timeout=20)
        return (r.stdout.strip() or r.stderr.strip()).replace("\n", " / ")
    except (OSError, subprocess.SubprocessError) as e:
        return "nvidia-smi failed: %s" % e


def nvml_open(index=0):
    """NVML through ctypes (libnvidia-ml.so.1; the callers only read) and GPU
    index's handle: (nvml, handle), or (None, why) where it does not load,
    does not initialise or has no such GPU."""
    try:
        nv = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as e:
        return None, "libnvidia-ml.so.1 not loaded: %s" % e
    try:
        if nv.nvmlInit_v2() != 0:
            return None, "nvmlInit failed"
        dev = ctypes.c_void_p()
        if nv.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(dev)) != 0:
            return None, "no GPU %d" % index
    except AttributeError as e:
        return None, "not NVML: %s" % e
    return nv, dev


class Sampler:
    """A reading (read(): a tuple, or None when there is none) taken every
    period_s from a thread between start() and stop(), kept with its
    time.time() in samples; start() does nothing when read() gives None."""

    def __init__(self, period_s):
        self.period, self.samples, self.t = period_s, [], None
        self.stop_ev = threading.Event()

    def read(self):
        return None

    def _loop(self):
        while not self.stop_ev.wait(self.period):
            v = self.read()
            if v is not None:
                self.samples.append((time.time(),) + v)

    def start(self):
        v = None if self.t else self.read()
        if v is not None:
            self.samples.append((time.time(),) + v)
            self.t = threading.Thread(target=self._loop, daemon=True)
            self.t.start()
        return self

    def stop(self):
        if self.t:
            self.stop_ev.set()
            self.t.join()
        return self


class GpuUtil(Sampler):
    """NVML's utilization.gpu of GPU 0 (the share of each of the driver's
    sample periods in which a kernel of any process ran), sampled every
    period_s; read only, never changes a setting.  mean() is None where NVML
    does not load (no GPU, the mock driver's runs)."""

    def __init__(self, period_s=0.1):
        Sampler.__init__(self, period_s)
        self.nvml, self.dev = nvml_open(0)
        self.u = (ctypes.c_uint * 2)()  # nvmlUtilization_t: gpu, memory

    def read(self):
        if self.nvml and self.nvml.nvmlDeviceGetUtilizationRates(
                self.dev, ctypes.byref(self.u)) == 0:
            return (self.u[0],)
        return None

    def mean(self, t0=0.0, t1=float("inf")):
        """The mean of the samples taken between t0 and t1 (time.time())."""
        v = [x for t, x in self.samples if t0 <= t <= t1]
        return mean(v) if v else None


class CpuUtil(Sampler):
    """The machine's CPU busy share (/proc/stat's cpu line: user, nice,
    system, irq, softirq, steal against those plus idle and iowait),
    sampled every period_s.  busy_pct() is None without /proc/stat or with
    fewer than two samples in the interval."""

    def __init__(self, period_s=0.5):
        Sampler.__init__(self, period_s)

    def read(self):
        """(busy, total) jiffies of all CPUs, or None."""
        try:
            with open("/proc/stat") as f:
                x = [int(v) for v in f.readline().split()[1:9]]
        except (OSError, ValueError):
            return None
        if len(x) < 8:
            return None
        idle = x[3] + x[4]
        return sum(x) - idle, sum(x)

    def busy_pct(self, t0=0.0, t1=float("inf")):
        """The busy share, percent, from the first sample at or after t0 to
        the last at or before t1 (time.time())."""
        v = [x for x in self.samples if t0 <= x[0] <= t1]
        if len(v) < 2 or v[-1][2] <= v[0][2]:
            return None
        return 100.0 * (v[-1][1] - v[0][1]) / (v[-1][2] - v[0][2])


def out_dir(args, name):
    d = args.out or os.environ.get("OUT") or tempfile.mkdtemp(prefix="krex-%s-" % name)
    os.makedirs(d, exist_ok=True)
    return os.path.abspath(d)


def burn_rate():
    """Loop iterations per CPU second of burn() (calibrated once; CPU time,
    so that a busy machine at the calibration does not make it low)."""
    n = 200000
    while True:
        t = time.thread_time()
        burn(n)
        dt = time.thread_time() - t
        if dt > 0.1:
            return n / dt
        n *= 4


def burn(n):
    """Fixed CPU work: n loop iterations (a stand-in for compiling)."""
    x = 0
    for i in range(int(n)):
        x += i
    return x


def burn_cpu(seconds):
    """Fixed CPU time: burn() until this thread has used `seconds` of CPU
    (user + system), whatever the CPU's speed at the moment; returns the
    loops done and the CPU seconds used (a little over `seconds`), so that
    the caller can tell the pace (loops per CPU second).  A host whose CPU
    runs at half speed in one window does not double that window's host
    parts."""
    t0 = time.thread_time()
    end = t0 + seconds
    loops = 0
    now = t0
    while now < end:
        burn(20000)
        loops += 20000
        now = time.thread_time()
    return loops, now - t0


def cpu_busy(ncores, seconds):
    """Busy loops on ncores processes for at most seconds (a sibling that is
    pure CPU noise); the children end on their own at the deadline."""
    end = time.monotonic() + seconds
    pids = []
    for _ in range(ncores):
        pid = os.fork()
        if pid == 0:
            while time.monotonic() < end:
                burn(20000)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)


def ncpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def torch_wrap(counter, script, argv):
    """Run torch_loop.py (which has no --counter) in this process and write
    counter once PyTorch has initialized CUDA and had a second to build its
    model and graph, i.e. once its training loop runs."""
    import runpy
    import threading

    def watch():
        while True:
            t = sys.modules.get("torch")
            # While torch is still importing, the module is there without
            # its attributes: look again later.
            cuda = getattr(t, "cuda", None) if t is not None else None
            init = getattr(cuda, "is_initialized", None)
            if init is not None and init():
                time.sleep(1.0)
                with open(counter, "w") as f:
                    f.write("1\n")
                return
            time.sleep(0.05)

    threading.Thread(target=watch, daemon=True).start()
    sys.argv = [script] + argv
    runpy.run_path(script, run_name="__main__")


USAGE = """usage: perflib.py cpubusy NCORES SECONDS    busy loops (the cpu sibling)
       perflib.py torch COUNTER SCRIPT ARGS...  torch_loop.py, COUNTER once it runs"""

if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "cpubusy":
        with open(os.environ.get("KREX_PERF_COUNTER", os.devnull), "w") as f:
            f.write("1\n")
        cpu_busy(int(sys.argv[2]), float(sys.argv[3]))
        sys.exit(0)
    if len(sys.argv) >= 4 and sys.argv[1] == "torch":
        torch_wrap(sys.argv[2], sys.argv[3], sys.argv[4:])
        sys.exit(0)
    sys.exit(USAGE)
