# SPDX-License-Identifier: BSD-3-Clause
"""krextest.py - for the Python tests: TAP lines (ok, skip, done) and a
kernel on the mock libcuda (test/mock)."""

import ctypes

_n = 0
_fail = 0


def ok(cond, desc, diag=None):
    """One TAP line; diag (when the check fails) as # lines.  Returns cond."""
    global _n, _fail
    _n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", _n, desc))
    if not cond:
        _fail += 1
        if diag is not None:
            for ln in str(diag).splitlines():
                print("# " + ln)
    return cond


def skip(desc, why):
    global _n
    _n += 1
    print("ok %d - %s # SKIP %s" % (_n, desc, why))


def done():
    """The plan line; the exit status (1 when a check failed)."""
    print("1..%d" % _n)
    return 1 if _fail else 0


def mock_kernel(us):
    """A function launching the mock's fma_loop kernel, which runs `us`
    microseconds on the simulated GPU (test/mock/mock_cuda.c); None without the
    mock (a real libcuda has no such module)."""
    try:
        cu = ctypes.CDLL("libcuda.so.1")
        cu.mock_cu_cuLaunchKernel  # only the mock has it
    except (OSError, AttributeError):
        return None
    ctx, dev, mod, f = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
    out, iters = ctypes.c_uint64(), ctypes.c_longlong(us)
    for rc in (cu.cuInit(0), cu.cuDeviceGet(ctypes.byref(dev), 0),
               cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), cu.cuCtxSetCurrent(ctx),
               cu.cuModuleLoadData(ctypes.byref(mod), b"mock"),
               cu.cuModuleGetFunction(ctypes.byref(f), mod, b"fma_loop"),
               cu.cuMemAlloc_v2(ctypes.byref(out), ctypes.c_size_t(8))):
        if rc != 0:
            return None
    params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(out), ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(iters), ctypes.c_void_p))
    cu.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    calls = []

    def launch():
        calls.append(1)
        rc = cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, params, None)
        if rc != 0:
            raise RuntimeError("mock cuLaunchKernel: %d" % rc)
    launch.calls = calls
    launch.keep = (out, iters, mod)  # params points into them
    return launch
