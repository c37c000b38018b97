# SPDX-License-Identifier: BSD-3-Clause
"""sib_common - what every harmless.py sibling shares (stdlib only at import).

A sibling is one framework's workload, run for --seconds, checking every
result it computes against the same computation done without KREX (a CPU
reference computed in the same process from the same seeded inputs), and
printing one JSON line on stdout at the end:

  {"harmless": 1, "name": ..., "iterations": N, "errors": E, "wrong": W,
   "exceptions": X, "checks": C, "skipped": null|"why", "notes": [...]}

errors: API calls that returned an error the program survived; wrong: results
outside the dtype's tolerance (any NaN or Inf is wrong); exceptions: Python
exceptions caught in the loop (each one's traceback goes to stderr, the
harness diffs stderr against the run without KREX).

Phases: --phases FILE gets one line per phase boundary, "T begin NAME" and
"T end NAME" (T = CLOCK_MONOTONIC seconds), written before and after start-up
("init"), CUDA graph capture ("capture"), compilation ("compile") and
autotuning ("autotune"), "T begin linger" when the loop is done and it
waits for --linger, and "T end run" last.  The measuring job reads it to
take regions inside those phases on purpose; the harness uses it to say how
many regions did land in each.
"""

import argparse
import json
import math
import os
import random
import sys
import threading
import time
import traceback

MAX_EXCEPTIONS = 5  # after this many, the sibling stops (a broken context stays broken)

# Tolerances by dtype: max |got - ref| / max(|ref|, tiny) over the tensor.  A
# result KREX corrupted (a stale buffer, a skipped kernel, a kernel run twice,
# zeros) is off by O(1); rounding of the dtype stays well under these.
TOL = {"float64": 1e-9, "float32": 2e-3, "tf32": 2e-2, "float16": 2e-2, "bfloat16": 5e-2,
       "int": 0.0}


class Sibling:
    def __init__(self, name, argv=None, extra_args=None):
        ap = argparse.ArgumentParser(description=name)
        ap.add_argument("--seconds", type=float, default=30.0,
                        help="run the loop this long from process start")
        ap.add_argument("--seed", type=int, default=1234)
        ap.add_argument("--phases", default=None, help="phase file (see sib_common.py)")
        ap.add_argument("--min-iters", type=int, default=1,
                        help="iterations to finish even past --seconds")
        ap.add_argument("--hold-ms", type=float, default=30.0,
                        help="longest host pause inside a capture/compile phase (ms), so that "
                        "a region lands in it")
        ap.add_argument("--new-shape-s", type=float, default=6.0,
                        help="seconds between new shapes or kernels (compilation, "
                        "autotuning during the run)")
        ap.add_argument("--linger", default=None,
                        help="after the loop, wait (at most 300 s) until this file exists "
                        "before the result line and exit: the harness looks at every "
                        "task while all siblings are still there")
        if extra_args:
            extra_args(ap)
        self.args = ap.parse_args(argv)
        self.name = name
        self.t0 = time.monotonic()
        self.deadline = self.t0 + self.args.seconds
        self.rng = random.Random(self.args.seed)
        self.iterations = 0
        self.errors = 0
        self.wrong = 0
        self.exceptions = 0
        self.checks = 0
        self.notes = []
        self.skipped = None
        self.lock = threading.Lock()  # the counters, for threaded siblings
        self._ph = None
        if self.args.phases:
            self._ph = open(self.args.phases, "a", buffering=1)
        self.begin("init")

    # ---- phases ----------------------------------------------------------------
    def _phase(self, what, name):
        if self._ph:
            self._ph.write("%.6f %s %s\n" % (time.monotonic(), what, name))

    def begin(self, name):
        self._phase("begin", name)

    def end(self, name):
        self._phase("end", name)

    def hold(self):
        """A short host pause inside a phase (capture, compile), random up to
        --hold-ms: what a bigger model's capture costs anyway."""
        time.sleep(self.rng.uniform(0.2, 1.0) * self.args.hold_ms / 1000.0)

    class _Ph:
        def __init__(self, sib, name):
            self.sib, self.name = sib, name

        def __enter__(self):
            self.sib.begin(self.name)

        def __exit__(self, *exc):
            self.sib.end(self.name)
            return False

    def phase(self, name):
        """with sib.phase("capture"): ..."""
        return Sibling._Ph(self, name)

    # ---- the loop --------------------------------------------------------------
    def running(self):
        return time.monotonic() < self.deadline or self.iterations < self.args.min_iters

    def may_start_new(self):
        """Whether a new shape/compilation/autotuning may begin now: not in
        the last fifth of --seconds (at least 5 s), so that none straddles the
        end of the pass."""
        return time.monotonic() < self.deadline - max(5.0, 0.2 * self.args.seconds)

    def step(self, fn, *a):
        """Run one iteration fn(*a); an exception is counted, printed, and
        after MAX_EXCEPTIONS ends the loop (returns False)."""
        try:
            fn(*a)
            self.iterations += 1
            return True
        except Exception:  # every failure is counted and shown, none hidden
            self.exceptions += 1
            sys.stderr.write("%s: exception in iteration %d:\n" % (self.name, self.iterations))
            traceback.print_exc()
            sys.stderr.flush()
            return self.exceptions < MAX_EXCEPTIONS

    def loop(self, fn):
        """Call fn(i) until --seconds have passed (at least --min-iters times)."""
        self.end("init")
        while self.running():
            if not self.step(fn, self.iterations):
                break

    # ---- checks ----------------------------------------------------------------
    def check(self, what, got, ref, dtype="float32"):
        """Compare got with ref (sequences, numpy arrays or anything with
        .tolist()/float()); counts one check, and one wrong result when any
        value is NaN/Inf or the relative max error exceeds TOL[dtype]."""
        g, r = flat(got), flat(ref)
        bad = None
        if len(g) != len(r):
            bad = "length %d, reference %d" % (len(g), len(r))
        else:
            scale = max((abs(x) for x in r), default=0.0) or 1.0
            err = 0.0
            for x, y in zip(g, r):
                if not math.isfinite(x):
                    bad = "non-finite value %r" % x
                    break
                err = max(err, abs(x - y))
            if bad is None and err / scale > TOL[dtype]:
                bad = "max error %.3g of scale %.3g over the %s tolerance %g" % (
                    err, scale, dtype, TOL[dtype])
        self.count(what, bad)
        return bad is None

    def count(self, what, bad):
        """One check done; bad: why its result is wrong, or None."""
        with self.lock:
            self.checks += 1
            if bad:
                self.wrong += 1
                n = self.wrong
        if bad and n <= 5:
            sys.stderr.write("%s: WRONG result %s in iteration %d: %s\n" % (
                self.name, what, self.iterations, bad))

    def error(self, what):
        """An API error the program survived."""
        with self.lock:
            self.errors += 1
            n = self.errors
        if n <= 5:
            sys.stderr.write("%s: error: %s\n" % (self.name, what))

    def note(self, text):
        self.notes.append(text)

    def skip(self, why):
        """Nothing to run here (framework missing): the JSON line says so."""
        self.skipped = why
        return self.finish()

    def linger(self):
        """Wait for --linger's file, at most 300 s (never forever)."""
        if not self.args.linger or getattr(self, "_lingered", False):
            return
        self._lingered = True
        self.begin("linger")
        end = time.monotonic() + 300
        while not os.path.exists(self.args.linger) and time.monotonic() < end:
            time.sleep(0.02)

    def finish(self):
        """Print the JSON line; exit status 0 unless a result was wrong or an
        exception or error happened (the harness reads the JSON either way)."""
        self.linger()
        self.end("run")
        d = {"harmless": 1, "name": self.name, "iterations": self.iterations,
             "errors": self.errors, "wrong": self.wrong, "exceptions": self.exceptions,
             "checks": self.checks, "seconds": round(time.monotonic() - self.t0, 3),
             "skipped": self.skipped, "notes": self.notes, "pid": os.getpid()}
        sys.stdout.write(json.dumps(d) + "\n")
        sys.stdout.flush()
        return 1 if (self.wrong or self.exceptions or self.errors) else 0


def flat(x):
    """A flat list of floats from a number, a nested sequence, or an array
    with .tolist() (numpy, torch, cupy, jax after np.asarray)."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (int, float)):
        return [float(x)]
    out = []
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        else:
            out.append(float(v))
    return out


def fast_check(sib, what, got, ref, dtype="float32"):
    """check() for big arrays with numpy: same rule, vectorised."""
    import numpy as np
    g = np.asarray(got, dtype=np.float64).ravel()
    r = np.asarray(ref, dtype=np.float64).ravel()
    bad = None
    if g.shape != r.shape:
        bad = "shape %s, reference %s" % (g.shape, r.shape)
    elif not np.all(np.isfinite(g)):
        bad = "%d non-finite values" % int(np.sum(~np.isfinite(g)))
    else:
        scale = float(np.max(np.abs(r))) if r.size else 1.0
        scale = scale or 1.0
        err = float(np.max(np.abs(g - r))) if r.size else 0.0
        if err / scale > TOL[dtype]:
            bad = "max error %.3g of scale %.3g over the %s tolerance %g" % (err, scale, dtype,
                                                                             TOL[dtype])
    sib.count(what, bad)
    return bad is None
