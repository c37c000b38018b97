#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sib_mock.py - harmless.py --mock's siblings: the CUDA driver API of the
mock driver (test/mock, a TEST DOUBLE, not a GPU) through ctypes, the way
the framework siblings reach the real one (dlopen + dlsym, so the gate's
dlsym answers), checking every result the simulated GPU computes.

    sib_mock.py KIND [--seconds S] [--seed N] [--phases F] [--plant FAULT]

KIND: async   batches of fma_loop kernels queued on a stream, then checked;
              the module loaded again every --new-shape-s ("compile" phase)
      sync    one kernel, a context synchronize, a check, again
      threads two threads, a stream each, async batches
      procaddr  test/workloads' krex-procaddr (driver API only through
              cuGetProcAddress; checks its own results) started again and
              again: a new CUDA context, under the gate, every iteration
      hostrelease  XLA's timer on the mock: a host function that blocks the
              stream until the host releases it (at most 2 s), kernels queued
              behind it, then the release; a launch that waited for the
              blocked stream makes the release late and the sibling prints
              "delay kernel timed out", as XLA's cuda_timer does
      reset   async batches on the default and a new stream, and every third
              iteration cudaDeviceReset's cuDevicePrimaryCtxReset, then the
              context, module, buffers and stream again (the mock aborts on
              an event or stream of the ended context: one the gate kept)
The mock's fma_loop(out, iters) runs iters microseconds and writes iters
into *out (uint32): each kernel's result is known exactly.

--plant FAULT (the harness's self-test; only in the pass where
HARMLESS_PASS=krex, so the run without KREX stays clean, as if KREX caused
it; each fires in the third iteration): crash (abort), wrong (a buffer overwritten after its kernel,
once), exc (an exception in one iteration), warn (a new warning line), pin
(the main thread pinned to one CPU), stop (a child process stopped with
SIGSTOP until the end), hang (never exits).  Every kind also prints one
warning line with a pid, an address and a time in both passes, which the
harness must not report as new (its normalisation).
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sib_common import Sibling  # noqa: E402

KINDS = ("async", "sync", "threads", "procaddr", "hostrelease", "reset")
PLANTS = ("crash", "wrong", "exc", "warn", "pin", "stop", "hang")


def args(ap):
    ap.add_argument("kind", choices=KINDS)
    ap.add_argument("--plant", default="", choices=("",) + PLANTS)
    ap.add_argument("--procaddr", default=None, help="path of krex-procaddr")
    ap.add_argument("--batch", type=int, default=6, help="kernels per batch")


HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Cuda:
    """The few driver calls the siblings make, resolved from libcuda.so.1."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
        u, p, vp = ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p
        self.sig("cuInit", [u])
        self.sig("cuDeviceGet", [ctypes.POINTER(ctypes.c_int), ctypes.c_int])
        self.sig("cuDevicePrimaryCtxRetain", [ctypes.POINTER(p), ctypes.c_int])
        self.sig("cuCtxSetCurrent", [p])
        self.sig("cuCtxSynchronize", [])
        self.sig("cuModuleLoadData", [ctypes.POINTER(p), ctypes.c_char_p])
        self.sig("cuModuleGetFunction", [ctypes.POINTER(p), p, ctypes.c_char_p])
        self.sig("cuMemAlloc_v2", [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t])
        self.sig("cuMemsetD32_v2", [ctypes.c_uint64, u, ctypes.c_size_t])
        self.sig("cuMemcpyDtoH_v2", [vp, ctypes.c_uint64, ctypes.c_size_t])
        self.sig("cuMemcpyHtoDAsync_v2", [ctypes.c_uint64, vp, ctypes.c_size_t, p])
        self.sig("cuMemcpyDtoDAsync_v2", [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, p])
        self.sig("cuStreamCreate", [ctypes.POINTER(p), u])
        self.sig("cuStreamSynchronize", [p])
        self.sig("cuLaunchKernel", [p, u, u, u, u, u, u, u, p, ctypes.POINTER(vp), vp])
        self.sig("cuLaunchHostFunc", [p, HOSTFN, vp])
        self.sig("cuDevicePrimaryCtxReset_v2", [ctypes.c_int])
        self.ck("cuInit", 0)
        self.dev = ctypes.c_int()
        self.ck("cuDeviceGet", ctypes.byref(self.dev), 0)
        self.open()

    def open(self):
        """The primary context, current, and the module: at start and after a reset."""
        self.ctx = ctypes.c_void_p()
        self.ck("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), self.dev)
        self.ck("cuCtxSetCurrent", self.ctx)
        self.fma = self.load()

    def reset(self):
        """cudaDeviceReset: every stream, event and buffer of the context goes."""
        self.ck("cuCtxSynchronize")
        self.ck("cuDevicePrimaryCtxReset_v2", self.dev)
        self.open()

    def load(self):
        """Load the module (again) and return its fma_loop: what a JIT does."""
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self.ck("cuModuleLoadData", ctypes.byref(mod), b"mock module image")
        self.ck("cuModuleGetFunction", ctypes.byref(fn), mod, b"fma_loop")
        return fn

    def sig(self, name, argtypes):
        f = getattr(self.lib, name)
        f.argtypes = argtypes
        f.restype = ctypes.c_int

    def ck(self, name, *a):
        r = getattr(self.lib, name)(*a)
        if r != 0:
            raise RuntimeError("%s failed: CUresult %d" % (name, r))

    def alloc(self, n):
        d = ctypes.c_uint64()
        self.ck("cuMemAlloc_v2", ctypes.byref(d), n)
        return d.value

    def stream(self):
        s = ctypes.c_void_p()
        self.ck("cuStreamCreate", ctypes.byref(s), 1)  # CU_STREAM_NON_BLOCKING
        return s

    def launch(self, out, iters, stream):
        o = ctypes.c_uint64(out)
        it = ctypes.c_longlong(iters)
        params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(o), ctypes.c_void_p),
                                       ctypes.cast(ctypes.byref(it), ctypes.c_void_p))
        self.ck("cuLaunchKernel", self.fma, 1, 1, 1, 1, 1, 1, 0, stream, params, None)

    def read_u32(self, d, n=1):
        buf = (ctypes.c_uint32 * n)()
        self.ck("cuMemcpyDtoH_v2", buf, d, 4 * n)
        return list(buf)


class Batches:
    """A batch of kernels of known results, plus a copy chain, on one stream."""

    def __init__(self, sib, cu, stream, nbatch):
        self.sib, self.cu, self.s = sib, cu, stream
        self.outs = [cu.alloc(4) for _ in range(nbatch)]
        self.a = cu.alloc(256)
        self.b = cu.alloc(256)

    def run(self, i, sync_each=False, corrupt=False):
        sib, cu = self.sib, self.cu
        want = [sib.rng.randint(100, 1500) for _ in self.outs]
        for d in self.outs:
            cu.ck("cuMemsetD32_v2", d, 0xFFFFFFFF, 1)
        for d, n in zip(self.outs, want):
            cu.launch(d, n, self.s)
            if sync_each:
                cu.ck("cuCtxSynchronize")
        host = (ctypes.c_uint32 * 64)(*[(i * 131 + k * 7) & 0xFFFFFFFF for k in range(64)])
        cu.ck("cuMemcpyHtoDAsync_v2", self.a, host, 256, self.s)
        cu.ck("cuMemcpyDtoDAsync_v2", self.b, self.a, 256, self.s)
        cu.ck("cuStreamSynchronize", self.s)
        if corrupt:  # the planted fault: the device result is overwritten
            cu.ck("cuMemsetD32_v2", self.outs[0], 7, 1)
        got = [cu.read_u32(d)[0] for d in self.outs]
        sib.check("fma_loop outputs", got, want, "int")
        sib.check("copy chain", cu.read_u32(self.b, 64), list(host), "int")


def main():
    sib = Sibling("mock-" + (sys.argv[1] if len(sys.argv) > 1 else "?"), extra_args=args)
    a = sib.args
    plant = a.plant if os.environ.get("HARMLESS_PASS") == "krex" else ""
    # Noise both passes print: the harness must normalise it away.
    sys.stderr.write("%s: warning: noise from pid %d at 0x%x, %s\n" % (
        sib.name, os.getpid(), id(sib), time.strftime("%H:%M:%S")))
    t = time.time()
    sys.stderr.write("W%s.%06d %7d noise.cc:42] glog-style warning, took %.3f ms\n" % (
        time.strftime("%m%d %H:%M:%S", time.localtime(t)), int(t % 1 * 1e6),
        threading.get_native_id(), (t % 1) * 100))
    if plant == "warn":
        sys.stderr.write("%s: warning: planted warning, printed only under KREX\n" % sib.name)
    child = None
    if plant == "pin":
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[-1]})
    if plant == "stop":
        child = subprocess.Popen([sys.executable, "-c", "import os, signal, time; "
                                  "os.kill(os.getpid(), signal.SIGSTOP); time.sleep(3600)"])
    if a.kind == "procaddr":
        procaddr(sib, a, plant)
    else:
        cu = Cuda()
        if a.kind == "threads":
            threads(sib, cu, a, plant)
        elif a.kind == "hostrelease":
            hostrelease(sib, cu, a)
        elif a.kind == "reset":
            reset(sib, cu, a, plant)
        else:
            b = Batches(sib, cu, cu.stream(), a.batch)
            nxt = [time.monotonic()]

            def it(i):
                # async: a module loaded again every --new-shape-s ("compile").
                if a.kind == "async" and time.monotonic() >= nxt[0] and sib.may_start_new():
                    with sib.phase("compile"):
                        cu.fma = cu.load()
                        time.sleep(sib.rng.uniform(0.1, 0.2))  # a JIT's time
                    nxt[0] = time.monotonic() + sib.args.new_shape_s
                one(sib, b, i, a.kind == "sync", plant)
            sib.loop(it)
    if plant == "hang":
        sib.linger()
        sys.stderr.write("%s: hanging (planted)\n" % sib.name)
        sys.stderr.flush()
        time.sleep(3600)
    sib.linger()
    if child:
        child.send_signal(signal.SIGCONT)
        child.kill()
        child.wait()
    return sib.finish()


def one(sib, b, i, sync_each, plant):
    fire = i >= 2  # the fault fires in the third iteration: always, however slow the pass
    if plant == "crash" and fire:
        sys.stderr.write("%s: aborting (planted)\n" % sib.name)
        sys.stderr.flush()
        os.abort()
    if plant == "exc" and fire and not sib.exceptions:
        raise RuntimeError("planted exception")
    b.run(i, sync_each, corrupt=(plant == "wrong" and fire and not sib.wrong))


def threads(sib, cu, a, plant):
    """Two submitting threads (a stream each) check their own batches; the
    main thread counts their iterations."""
    stop = threading.Event()
    counts = [0, 0]
    lock = threading.Lock()

    def worker(k):
        cu.ck("cuCtxSetCurrent", cu.ctx)
        b = Batches(sib, cu, cu.stream(), a.batch)
        i = 0
        while not stop.is_set():
            try:
                b.run(i)
                i += 1
                counts[k] = i
            except Exception as e:
                with lock:
                    sib.exceptions += 1
                sys.stderr.write("%s: thread %d: exception: %s\n" % (sib.name, k, e))
                return

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    sib.end("init")
    while sib.running() and any(t.is_alive() for t in ts):
        time.sleep(0.05)
        sib.iterations = sum(counts)
    stop.set()
    for t in ts:
        t.join()
    sib.iterations = sum(counts)


def hostrelease(sib, cu, a):
    """A stream blocked by a host function until the host releases it, the
    work to time queued behind it, then the release (XLA's cuda_timer)."""
    s = cu.stream()
    b = Batches(sib, cu, s, a.batch)
    st = {"timed_out": 0, "slowest_launch": 0.0}

    def it(i):
        release = threading.Event()
        late = []

        def delay(_arg):  # runs on the (simulated) GPU: spins until released
            if not release.wait(2.0):
                late.append(1)

        fn = HOSTFN(delay)
        cu.ck("cuLaunchHostFunc", s, fn, None)
        want = [sib.rng.randint(100, 800) for _ in b.outs]
        t = time.monotonic()
        for d, n in zip(b.outs, want):
            cu.launch(d, n, s)
        st["slowest_launch"] = max(st["slowest_launch"], time.monotonic() - t)
        release.set()
        cu.ck("cuStreamSynchronize", s)
        del fn
        if late:
            st["timed_out"] += 1
            sys.stderr.write("%s: warning: delay kernel timed out: the launches behind it "
                             "took %.3f s\n" % (sib.name, time.monotonic() - t))
        sib.check("kernels behind the host function",
                  [cu.read_u32(d)[0] for d in b.outs], want, "int")

    sib.loop(it)
    sib.note("delay timed out %d times; slowest launch sequence %.3f s" % (
        st["timed_out"], st["slowest_launch"]))


def reset(sib, cu, a, plant):
    """Batches on the default stream and on a stream of its own, the device
    reset every third iteration (then everything made again)."""
    made = [Batches(sib, cu, None, a.batch), Batches(sib, cu, cu.stream(), a.batch)]

    def it(i):
        if i % 3 == 2:
            with sib.phase("compile"):  # the context made again, a module loaded
                cu.reset()
            made[:] = [Batches(sib, cu, None, a.batch), Batches(sib, cu, cu.stream(), a.batch)]
        for b in made:
            one(sib, b, i, False, plant)
    sib.loop(it)


def procaddr(sib, a, plant):
    """krex-procaddr again and again: each run is a new process with a new
    context; it exits 0 only when its results are right."""
    exe = a.procaddr
    if not exe or not os.access(exe, os.X_OK):
        sib.skip("krex-procaddr not found (--procaddr)")
        sys.exit(0)

    def run(i):
        r = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        sib.checks += 1
        if r.returncode != 0 or b"ok" not in r.stdout:
            err = r.stderr.decode(errors="replace").strip()
            if "wrong" in err:
                sib.wrong += 1
            else:
                sib.error("krex-procaddr exited %d: %s" % (r.returncode, err[-200:]))
    sib.loop(run)


if __name__ == "__main__":
    sys.exit(main())
