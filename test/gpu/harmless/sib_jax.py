#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sib_jax.py - harmless.py's JAX/XLA sibling (GPU machine only).

An MLP's value and gradients (jax.jit of jax.value_and_grad) and a
convolution (lax.conv_general_dilated, cuDNN), float32 at "highest" matmul
precision, checked against numpy in float64 (the MLP) and against the same
jitted function on JAX's CPU backend (the convolution).  XLA's GPU autotuner
runs at every compilation (harmless.py sets XLA_FLAGS=
--xla_gpu_autotune_level=4): a new batch size every --new-shape-s seconds is
a new compilation, so autotuning (XLA's delay-kernel timer among it) happens
during the run ("autotune" phase).
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sib_common import Sibling, fast_check  # noqa: E402



def main():
    sib = Sibling("jax")
    try:
        import numpy as np
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError as e:
        return sib.skip("no jax/numpy: %s" % e)
    jax.config.update("jax_default_matmul_precision", "highest")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError as e:
        return sib.skip("jax sees no GPU: %s" % e)
    cpu = jax.devices("cpu")[0]
    rng = np.random.default_rng(sib.args.seed)

    def loss(w1, w2, x, t):
        y = jax.nn.softmax(jax.nn.relu(x @ w1) @ w2, axis=-1)
        return jnp.mean((y - t) ** 2), y

    vg = jax.jit(jax.value_and_grad(loss, argnums=(0, 1), has_aux=True))

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    jconv = jax.jit(conv)

    def np_ref(w1, w2, x, t):
        w1, w2, x, t = (a.astype(np.float64) for a in (w1, w2, x, t))
        h = np.maximum(x @ w1, 0)
        z = h @ w2
        z = z - z.max(axis=-1, keepdims=True)
        y = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
        n = y.size
        gy = 2 * (y - t) / n
        gz = y * (gy - (gy * y).sum(axis=-1, keepdims=True))  # softmax backward
        dw2 = h.T @ gz
        gh = (gz @ w2.T) * (h > 0)
        dw1 = x.T @ gh
        return float(np.mean((y - t) ** 2)), y, dw1, dw2

    d_in, d_h, d_out = 512, 1024, 256
    w1 = (rng.standard_normal((d_in, d_h)) / d_in ** 0.5).astype(np.float32)
    w2 = (rng.standard_normal((d_h, d_out)) / d_h ** 0.5).astype(np.float32)
    cw = (rng.standard_normal((32, 16, 3, 3)) / 12.0).astype(np.float32)
    w1g, w2g, cwg = (jax.device_put(a, gpu) for a in (w1, w2, cw))
    cwc = jax.device_put(cw, cpu)
    batches = [128 + 32 * k for k in range(64)]
    data = {}  # batch -> (gpu arrays, references)
    st = {"next": time.monotonic(), "n": 0}

    def make(b):
        x = rng.standard_normal((b, d_in)).astype(np.float32)
        t = rng.standard_normal((b, d_out)).astype(np.float32)
        cx = rng.standard_normal((4, 16, 16 + b // 32, 16 + b // 32)).astype(np.float32)
        cref = np.asarray(jconv(jax.device_put(cx, cpu), cwc))  # the CPU backend
        data[b] = ((jax.device_put(x, gpu), jax.device_put(t, gpu), jax.device_put(cx, gpu)),
                   (np_ref(w1, w2, x, t), cref))

    def check(b):
        (x, t, cx), ((rl, ry, rdw1, rdw2), cref) = data[b]
        (l, y), (dw1, dw2) = vg(w1g, w2g, x, t)
        c = jconv(cx, cwg)
        fast_check(sib, "loss b=%d" % b, np.asarray(l), rl)
        fast_check(sib, "softmax b=%d" % b, np.asarray(y), ry)
        fast_check(sib, "dW1 b=%d" % b, np.asarray(dw1), rdw1)
        fast_check(sib, "dW2 b=%d" % b, np.asarray(dw2), rdw2)
        fast_check(sib, "conv b=%d" % b, np.asarray(c), cref)

    def it(i):
        now = time.monotonic()
        if now >= st["next"] and sib.may_start_new() and st["n"] < len(batches):
            b = batches[st["n"]]
            st["n"] += 1
            make(b)
            with sib.phase("autotune"):  # compilation with XLA's autotuner
                check(b)
            st["next"] = time.monotonic() + sib.args.new_shape_s
        for b in list(data)[-3:]:
            check(b)

    sib.loop(it)
    sib.note("%d shapes compiled; XLA_FLAGS=%s" % (st["n"], os.environ.get("XLA_FLAGS", "")))
    return sib.finish()


if __name__ == "__main__":
    sys.exit(main())
