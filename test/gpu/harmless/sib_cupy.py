#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sib_cupy.py - harmless.py's CuPy sibling (GPU machine only).

cuBLAS (cupy.matmul, float32; CuPy keeps TF32 off unless CUPY_TF32=1), an
ElementwiseKernel, a reduction, and RawKernels compiled by NVRTC: a new one
every --new-shape-s seconds ("compile" phase, a module loaded mid-run),
work split over two non-blocking streams.  Every result is
checked against numpy (float64; the RawKernels' integers exactly).
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sib_common import Sibling, fast_check  # noqa: E402

RAW = r'''
extern "C" __global__ void affine_%(k)d(const int *x, int *y, int n)
{
	int i = blockDim.x * blockIdx.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] * %(a)d + %(k)d;
}
'''



def main():
    sib = Sibling("cupy")
    try:
        import numpy as np
        import cupy as cp
    except ImportError as e:
        return sib.skip("no cupy/numpy: %s" % e)
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            return sib.skip("cupy sees no GPU")
    except cp.cuda.runtime.CUDARuntimeError as e:
        return sib.skip("cupy sees no GPU: %s" % e)
    rng = np.random.default_rng(sib.args.seed)
    fma_sin = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + sinf(x)",
                                   "harmless_fma_sin")
    sets = []
    for _ in range(4):
        a = rng.standard_normal((384, 512)).astype(np.float32)
        b = rng.standard_normal((512, 640)).astype(np.float32)
        x = rng.standard_normal(1 << 18).astype(np.float32)
        y = rng.standard_normal(1 << 18).astype(np.float32)
        ref = (a.astype(np.float64) @ b.astype(np.float64),
               x.astype(np.float64) * y + np.sin(x.astype(np.float64)))
        sets.append(((cp.asarray(a), cp.asarray(b), cp.asarray(x), cp.asarray(y)), ref))
    xi = rng.integers(0, 1 << 12, size=1 << 16, dtype=np.int32)
    xig = cp.asarray(xi)
    cp.cuda.Device().synchronize()  # the inputs are there before the side stream reads them
    raws = []  # (kernel, a, k)
    st = {"next": time.monotonic()}
    main_s = cp.cuda.Stream(non_blocking=True)
    side = cp.cuda.Stream(non_blocking=True)

    def new_raw():
        k = len(raws)
        a = 3 + k % 7
        with sib.phase("compile"):
            kern = cp.RawKernel(RAW % {"k": k, "a": a}, "affine_%d" % k)
            if hasattr(kern, "compile"):
                kern.compile()  # NVRTC and the module load, now (else at its first call)
            sib.hold()
        raws.append((kern, a, k))

    def it(i):
        if time.monotonic() >= st["next"] and sib.may_start_new() and len(raws) < 64:
            new_raw()
            st["next"] = time.monotonic() + sib.args.new_shape_s
        outs = []
        for q in range(4):
            (a, b, x, y), ref = sets[(i + q) % len(sets)]
            s = side if q % 2 else main_s
            with s:
                outs.append((cp.matmul(a, b), fma_sin(x, y), cp.sum(x * y), ref, x, y))
        yi = []
        with main_s:
            for kern, a, k in raws[-3:]:
                out = cp.empty_like(xig)
                kern(((xig.size + 255) // 256,), (256,), (xig, out, np.int32(xig.size)))
                yi.append((out, a, k))
        side.synchronize()
        main_s.synchronize()
        for c, z, s, (rc, rz), x, y in outs:
            fast_check(sib, "cublas matmul", cp.asnumpy(c), rc)
            fast_check(sib, "ElementwiseKernel", cp.asnumpy(z), rz)
            xs, ys = cp.asnumpy(x).astype(np.float64), cp.asnumpy(y).astype(np.float64)
            fast_check(sib, "reduction", float(s), float(np.sum(xs * ys)))
        for out, a, k in yi:
            fast_check(sib, "RawKernel affine_%d" % k, cp.asnumpy(out), xi * a + k, "int")

    sib.loop(it)
    sib.note("%d RawKernels compiled" % len(raws))
    return sib.finish()


if __name__ == "__main__":
    sys.exit(main())
