#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sib_triton.py - harmless.py's Triton sibling (GPU machine only).

Two @triton.autotune kernels: a float16 matmul (float32 accumulation) keyed
on (M, N, K) and a float32 elementwise kernel keyed on n_elements.  A new M
and a new n every --new-shape-s seconds are new keys: the autotuner compiles
and benchmarks every config again during the run ("autotune" phase).  Every
result is checked against PyTorch on the CPU in float64.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sib_common import Sibling, fast_check  # noqa: E402



def kernels(triton, tl):
    cfg = triton.Config

    @triton.autotune(configs=[
        cfg({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
        cfg({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=4),
        cfg({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
        cfg({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
    ], key=["M", "N", "K"])
    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            kk = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < kk), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < kk) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
            a_ptrs += BLOCK_K * sak
            b_ptrs += BLOCK_K * sbk
        c_ptrs = c_ptr + rm[:, None] * scm + rn[None, :] * scn
        tl.store(c_ptrs, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.autotune(configs=[cfg({"BLOCK": 256}, num_warps=2), cfg({"BLOCK": 1024}, num_warps=4),
                              cfg({"BLOCK": 4096}, num_warps=8)], key=["n"])
    @triton.jit
    def axpy(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        y = tl.load(y_ptr + offs, mask=m)
        tl.store(o_ptr + offs, x * 2.0 + y, mask=m)

    return matmul, axpy


def watch_tool_probes(sib):
    """Diagnosis only (issue 20): Triton asks `ptxas --version` once a
    process and caches a failure for good ("Cannot find ptxas" ever after).
    Report how any such probe failed (exit status, signal, output, time),
    then fail exactly as it would have: the behaviour is unchanged."""
    import subprocess
    real = subprocess.check_output

    def probe(args, *a, **kw):
        t0 = time.monotonic()
        version = isinstance(args, (list, tuple)) and "--version" in args
        try:
            out = real(args, *a, **kw)
            if version and b"release" not in (out if isinstance(out, bytes) else out.encode()):
                sib.note("tool probe %s printed no release after %.3f s: %r" %
                         (" ".join(map(str, args)), time.monotonic() - t0, out[-400:]))
            return out
        except subprocess.CalledProcessError as e:
            if version:
                out = (e.output or b"")[-400:]
                sib.note("tool probe %s failed after %.3f s: status %s, output %r" %
                         (" ".join(map(str, args)), time.monotonic() - t0, e.returncode, out))
            raise
    subprocess.check_output = probe


def main():
    sib = Sibling("triton")
    watch_tool_probes(sib)
    try:
        import torch
        import triton
        import triton.language as tl
    except ImportError as e:
        return sib.skip("no triton/torch: %s" % e)
    if not torch.cuda.is_available():
        return sib.skip("torch sees no CUDA device")
    matmul, axpy = kernels(triton, tl)
    dev = torch.device("cuda")
    g = torch.Generator()
    g.manual_seed(sib.args.seed)
    N, K = 512, 768
    b_cpu = torch.randn(K, N, generator=g).half()
    b = b_cpu.to(dev)
    shapes = [256 + 64 * k for k in range(64)]
    data = {}  # M -> (a, x, y on GPU, references)
    st = {"next": time.monotonic(), "n": 0}

    def make(m):
        a_cpu = torch.randn(m, K, generator=g).half()
        n = m * 1000 + 17
        x = torch.randn(n, generator=g)
        y = torch.randn(n, generator=g)
        data[m] = ((a_cpu.to(dev), x.to(dev), y.to(dev)),
                   ((a_cpu.double() @ b_cpu.double()).numpy(),
                    (x.double() * 2.0 + y.double()).numpy()))

    def run(m):
        (a, x, y), (rc, ro) = data[m]
        c = torch.empty(m, N, device=dev, dtype=torch.float16)
        matmul[lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))](
            a, b, c, m, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
            c.stride(1))
        o = torch.empty_like(x)
        n = x.numel()
        axpy[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, o, n)
        return (c, rc), (o, ro)

    def check(m, what):
        (c, rc), (o, ro) = run(m)
        fast_check(sib, "matmul M=%d%s" % (m, what), c.float().cpu(), rc, "float16")
        fast_check(sib, "axpy n=%d%s" % (o.numel(), what), o.cpu(), ro)

    def it(i):
        now = time.monotonic()
        if now >= st["next"] and sib.may_start_new() and st["n"] < len(shapes):
            m = shapes[st["n"]]
            st["n"] += 1
            make(m)
            with sib.phase("autotune"):  # new keys: every config compiled and benchmarked
                check(m, " (autotuned)")
            st["next"] = time.monotonic() + sib.args.new_shape_s
        for m in list(data)[-3:]:
            check(m, "")

    sib.loop(it)
    sib.note("%d keys autotuned" % st["n"])
    return sib.finish()


if __name__ == "__main__":
    sys.exit(main())
