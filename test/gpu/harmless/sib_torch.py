#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sib_torch.py - harmless.py's PyTorch siblings (GPU machine only).

    sib_torch.py eager|graphs|compile [sib_common.py options]

Every result is checked against the same computation on the CPU in float64
(TF32 off, so float32 tolerances hold), from inputs made once from --seed:

  eager    an MLP forward and backward (cuBLAS, autograd), softmax, and a
           cuDNN convolution with cudnn.benchmark on: a new input size every
           few seconds makes cuDNN autotune during the run ("autotune")
  graphs   the MLP forward captured with torch.cuda.graph ("capture": the
           capture mode cycles global, thread_local, relaxed), replayed with
           new inputs copied in, re-captured every few replays
  compile  torch.compile(mode="reduce-overhead") of an MLP with LayerNorm and
           GELU (CUDA graph trees), inductor's GEMM autotuning on
           (max_autotune_gemm; HARMLESS_COMPILE_AUTOTUNE=0 turns it off), a
           new batch size every few seconds: a recompilation with autotuning
           ("compile") during the run
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sib_common import Sibling, fast_check  # noqa: E402

KINDS = ("eager", "graphs", "compile")


def args(ap):
    ap.add_argument("kind", choices=KINDS)
    ap.add_argument("--recapture", type=int, default=4, help="graphs: replays per capture")


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else "?"
    sib = Sibling("torch-" + kind, extra_args=args)
    try:
        import numpy  # noqa: F401
        import torch
    except ImportError as e:
        return sib.skip("no torch/numpy: %s" % e)
    if not torch.cuda.is_available():
        return sib.skip("torch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    {"eager": eager, "graphs": graphs, "compile": compiled}[kind](sib, torch)
    return sib.finish()


def cpu_gen(torch, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def mlp_sets(sib, torch, n, batch, d_in=512, d_h=1024, d_out=256):
    """n input sets (x, w1, w2, target) on the CPU, float32."""
    g = cpu_gen(torch, sib.args.seed)
    out = []
    for _ in range(n):
        x = torch.randn(batch, d_in, generator=g)
        w1 = torch.randn(d_in, d_h, generator=g) / d_in ** 0.5
        w2 = torch.randn(d_h, d_out, generator=g) / d_h ** 0.5
        t = torch.randn(batch, d_out, generator=g)
        out.append((x, w1, w2, t))
    return out


def mlp(torch, x, w1, w2):
    return torch.softmax(torch.relu(x @ w1) @ w2, dim=-1)


def mlp_grad(torch, x, w1, w2, t):
    """(y, dw1, dw2) of loss = mean((y - t)^2)."""
    w1 = w1.detach().requires_grad_(True)
    w2 = w2.detach().requires_grad_(True)
    y = mlp(torch, x, w1, w2)
    loss = ((y - t) ** 2).mean()
    dw1, dw2 = torch.autograd.grad(loss, (w1, w2))
    return y.detach(), dw1, dw2


def eager(sib, torch):
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True  # cuDNN autotunes each new shape
    sets = mlp_sets(sib, torch, 4, 256)
    refs = [tuple(r.numpy() for r in mlp_grad(torch, *[v.double() for v in s])) for s in sets]
    gpu = [tuple(v.to(dev) for v in s) for s in sets]
    g = cpu_gen(torch, sib.args.seed + 1)
    conv_w = torch.randn(32, 16, 3, 3, generator=g) / 12.0
    conv_wd = conv_w.to(dev)
    conv = {}  # size -> (x on GPU, reference)
    sizes = [24 + 8 * k for k in range(64)]
    state = {"next": time.monotonic()}

    def conv_for(size):
        if size not in conv:
            x = torch.randn(8, 16, size, size, generator=g)
            ref = torch.nn.functional.conv2d(x.double(), conv_w.double(), padding=1).numpy()
            conv[size] = (x.to(dev), ref)
        return conv[size]

    def it(i):
        # A new conv size now and then: cuDNN's benchmark runs on its first call.
        now = time.monotonic()
        fresh = None
        if now >= state["next"] and sib.may_start_new() and len(conv) < len(sizes):
            fresh = sizes[len(conv)]
            state["next"] = now + sib.args.new_shape_s
        outs = []
        for q in range(4):  # queued without a sync, then checked
            k = (i * 4 + q) % len(gpu)
            outs.append((k, mlp_grad(torch, *gpu[k])))
        if fresh is not None:
            x, ref = conv_for(fresh)
            with sib.phase("autotune"):
                y = torch.nn.functional.conv2d(x, conv_wd, padding=1)
                torch.cuda.synchronize()
            fast_check(sib, "conv2d %d (first, autotuned)" % fresh, y.cpu(), ref)
        size = sizes[i % max(1, len(conv))] if conv else None
        if size is not None:
            x, ref = conv_for(size)
            fast_check(sib, "conv2d %d" % size,
                       torch.nn.functional.conv2d(x, conv_wd, padding=1).cpu(), ref)
        for k, (y, dw1, dw2) in outs:
            ry, rdw1, rdw2 = refs[k]
            fast_check(sib, "mlp forward", y.cpu(), ry)
            fast_check(sib, "mlp dW1", dw1.cpu(), rdw1)
            fast_check(sib, "mlp dW2", dw2.cpu(), rdw2)

    sib.loop(it)


def graphs(sib, torch):
    dev = torch.device("cuda")
    sets = mlp_sets(sib, torch, 4, 256)
    w1 = sets[0][1].to(dev)
    w2 = sets[0][2].to(dev)
    # The weights are baked into the graph: inputs vary, weights are set 0's.
    refs = [mlp(torch, s[0].double(), sets[0][1].double(), sets[0][2].double()).numpy()
            for s in sets]
    xs = [s[0].to(dev) for s in sets]
    static_x = torch.empty_like(xs[0])
    modes = ["global", "thread_local", "relaxed"]
    st = {"g": None, "out": None, "n": 0, "cap": 0}

    def capture():
        mode = modes[st["cap"] % 3]
        st["cap"] += 1
        if st["g"] is not None:  # the old graph and its output go first
            st["out"] = None
            st["g"].reset()
            st["g"] = None
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up on a side stream, as PyTorch asks
            static_x.copy_(xs[0])
            for _ in range(2):
                mlp(torch, static_x, w1, w2)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with sib.phase("capture"):
            with torch.cuda.graph(g, capture_error_mode=mode):
                out = mlp(torch, static_x, w1, w2)
                sib.hold()  # a bigger model's capture takes this long
        st["g"], st["out"] = g, out

    def it(i):
        if st["g"] is None or st["n"] % sib.args.recapture == 0:
            capture()
        st["n"] += 1
        k = i % len(xs)
        static_x.copy_(xs[k])
        st["g"].replay()
        fast_check(sib, "graph replay (set %d)" % k, st["out"].cpu(), refs[k])

    sib.loop(it)
    sib.note("%d captures" % st["cap"])


def compiled(sib, torch):
    dev = torch.device("cuda")
    import torch._dynamo
    import torch._inductor.config as icfg
    # Every new batch size is a new compilation (and autotuning), not one
    # dynamic graph after the second size.
    torch._dynamo.config.automatic_dynamic_shapes = False
    for k in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
              "accumulated_cache_size_limit"):
        if hasattr(torch._dynamo.config, k):
            setattr(torch._dynamo.config, k, 256)
    if os.environ.get("HARMLESS_COMPILE_AUTOTUNE", "1") != "0":
        icfg.max_autotune_gemm = True
    g = cpu_gen(torch, sib.args.seed)
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(),
                                torch.nn.LayerNorm(1024), torch.nn.Linear(1024, 256))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    ref_model = __import__("copy").deepcopy(model).double()
    model = model.to(dev).eval()
    cmodel = torch.compile(model, mode="reduce-overhead", dynamic=False)
    batches = [64 + 32 * k for k in range(48)]
    data = {}  # batch -> [(x on GPU, reference)]
    st = {"next": time.monotonic(), "n": 0}

    def inputs(b):
        if b not in data:
            out = []
            for _ in range(2):
                x = torch.randn(b, 512, generator=g)
                with torch.no_grad():
                    ref = ref_model(x.double()).numpy()
                out.append((x.to(dev), ref))
            data[b] = out
        return data[b]

    def run(x):
        torch.compiler.cudagraph_mark_step_begin()
        with torch.no_grad():
            return cmodel(x).clone()  # the graph's output buffer is reused by the next replay

    def it(i):
        now = time.monotonic()
        if now >= st["next"] and sib.may_start_new() and st["n"] < len(batches):
            b = batches[st["n"]]
            st["n"] += 1
            st["next"] = now + sib.args.new_shape_s
            x, ref = inputs(b)[0]
            with sib.phase("compile"):
                y = run(x)  # compile (autotune) and record
                y = run(x)
                torch.cuda.synchronize()
            st["next"] = time.monotonic() + sib.args.new_shape_s
            # Inductor's GEMM templates: tf32's tolerance (a corrupted result
            # is off by O(1) anyway).
            fast_check(sib, "compiled batch %d (first)" % b, y.cpu(), ref, "tf32")
        for b in list(data)[-3:]:
            for x, ref in data[b]:
                fast_check(sib, "compiled batch %d" % b, run(x).cpu(), ref, "tf32")

    sib.loop(it)
    sib.note("%d batch sizes compiled" % st["n"])


if __name__ == "__main__":
    sys.exit(main())
