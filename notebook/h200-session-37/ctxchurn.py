#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ctxchurn.py - GPU contexts made and ended all along, no kernel launched
(session 37, call 3: does a sibling's context, made while another process
times kernels, slow those kernels?).  Driver API through ctypes, no KREX.

    ctxchurn.py proc SECONDS LOG     a process after another, each: cuInit,
                                     the primary context, 64 MiB, then exit
                                     without freeing (the kernel's teardown:
                                     what an agent's GPU command does)
    ctxchurn.py inproc SECONDS LOG   one process: cuCtxCreate, 64 MiB,
                                     cuMemFree, cuCtxDestroy, again
    ctxchurn.py one LOG              (proc's child)

LOG gets one line per context made: "made EPOCH_S" (time.time(), the
clock of krex-victim's t_main .. t_end), and "err CALL RC" on a failure.
Either loop ends after SECONDS or once LOG.stop exists, after the context
in hand (proc: its child's exit).
"""
import ctypes
import os
import subprocess
import sys
import time

MIB64 = 64 << 20


def cuda():
    cu = ctypes.CDLL("libcuda.so.1")
    return cu


def call(log, cu, name, *args):
    rc = getattr(cu, name)(*args)
    if rc:
        log.write("err %s %d\n" % (name, rc))
        log.flush()
        raise SystemExit(1)


def one(path):
    with open(path, "a") as log:
        cu = cuda()
        dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
        call(log, cu, "cuInit", 0)
        call(log, cu, "cuDeviceGet", ctypes.byref(dev), 0)
        call(log, cu, "cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
        call(log, cu, "cuCtxSetCurrent", ctx)
        call(log, cu, "cuMemAlloc_v2", ctypes.byref(ptr), ctypes.c_size_t(MIB64))
        log.write("made %.6f\n" % time.time())
        log.flush()
    os._exit(0)  # no cleanup: the process's exit ends the context


def inproc(secs, path):
    end = time.monotonic() + secs
    with open(path, "a") as log:
        cu = cuda()
        dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
        call(log, cu, "cuInit", 0)
        call(log, cu, "cuDeviceGet", ctypes.byref(dev), 0)
        while time.monotonic() < end and not os.path.exists(path + ".stop"):
            call(log, cu, "cuCtxCreate_v2", ctypes.byref(ctx), 0, dev)
            call(log, cu, "cuMemAlloc_v2", ctypes.byref(ptr), ctypes.c_size_t(MIB64))
            log.write("made %.6f\n" % time.time())
            log.flush()
            call(log, cu, "cuMemFree_v2", ptr)
            call(log, cu, "cuCtxDestroy_v2", ctx)


def proc(secs, path):
    end = time.monotonic() + secs
    while time.monotonic() < end and not os.path.exists(path + ".stop"):
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "one", path])
        if r.returncode:
            return 1
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "one":
        return one(sys.argv[2])
    if len(sys.argv) != 4 or sys.argv[1] not in ("proc", "inproc"):
        sys.stderr.write(__doc__)
        return 2
    secs = float(sys.argv[2])
    return proc(secs, sys.argv[3]) if sys.argv[1] == "proc" else inproc(secs, sys.argv[3])


if __name__ == "__main__":
    sys.exit(main() or 0)
