#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""torch_loop.py - a small PyTorch training-style loop (GPU machine only).

    python3 torch_loop.py [--seconds S] [--steps N]

An MLP on random data: forward, loss, backward, SGD step, and a CUDA graph
replay every 10 steps.  Prints one line at the end:
    torch_loop steps=N seconds=S loss_first=A loss_last=B ok=1
ok=1 when the loss went down (the results are right).
"""
import argparse
import sys
import time

try:
    import torch
except ImportError:
    print("torch_loop SKIP: no torch")
    sys.exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--steps", type=int, default=200)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_loop SKIP: no CUDA device")
        return 0
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(512, 1024, device=dev)
    y = torch.randint(0, 10, (512,), device=dev)
    lossf = torch.nn.CrossEntropyLoss()
    # A captured graph of a forward pass, replayed now and then.
    static_x = x.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = model(static_x)
    first = last = None
    t0 = time.time()
    step = 0
    while True:
        opt.zero_grad(set_to_none=True)
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            g.replay()
        step += 1
        if first is None:
            first = loss.item()
        if a.seconds > 0:
            if time.time() - t0 >= a.seconds:
                break
        elif step >= a.steps:
            break
    torch.cuda.synchronize()
    last = loss.item()
    _ = static_out.sum().item()
    ok = int(last < first)
    print("torch_loop steps=%d seconds=%.2f loss_first=%.4f loss_last=%.4f ok=%d"
          % (step, time.time() - t0, first, last, ok))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
