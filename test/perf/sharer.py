#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sharer.py - agents.py's session model on a perfect sharer (a simulation).

What N agent sessions would finish an hour if sharing cost nothing: the GPU
time-sliced among the sessions' kernels outside regions with no switching
cost, a region exclusive and free to enter and leave (no drain, no freeze, no
settle: the owner's timed kernels start at once, or when the region before
it ends), the CPU's work spread over the cores without cost, and a GPU
command's process start-up a plain delay that uses neither.  Those are all
optimistic, but the rate is the model's, not a strict bound: the GPU and the
CPUs are served as processor sharing, regions first come first served, and
another order of service could finish a little more.

The same iteration as agents.py's worker, with its think-time jitter (the
same seeds): think (a delay, x U(0.5, 1.5)), compile (CPU), the correctness
command (CPU burn, start-up, its kernels shared), the benchmark (CPU burn,
start-up, warm-up kernels shared, the timed kernels in one region).

agents.py prints it per N as sharer_per_h: what the rest of the bound
(ideal, CPU, GPU) cannot tell, the time sessions lose waiting for each other
on a GPU shared perfectly.  A rate against it (of_sharer_pct) is what KREX's
mechanism costs on top of sharing itself.

  sharer.py --n 16,24,32 [--scale 0.2] [--startup 0.38] [--cores 16]
"""

import argparse
import random
import sys

# Phases of one iteration: (kind, seconds); kinds: T think and D start-up
# (delays), C CPU work, G GPU work shared, R GPU work in a region.
THINK, CPU, DELAY, GPU, REGION = "T", "C", "D", "G", "R"


def iteration(d, startup, k, n_correct, n_warmup, n_timed, think):
    """The phases of one iteration: [(kind, seconds)]."""
    return [(THINK, think), (CPU, d["compile"]),
            (CPU, max(0.0, d["correct_host"] - startup)), (DELAY, startup),
            (GPU, k * n_correct),
            (CPU, max(0.0, d["bench_host"] - startup)), (DELAY, startup),
            (GPU, k * n_warmup), (REGION, k * n_timed)]


def simulate(n, d, startup, k, n_correct, n_warmup, n_timed, cores, seed=1, iters=120,
             warm_iters=10):
    """Benchmarks an hour that n sessions finish on the perfect sharer, and
    the mean iteration in seconds: (rate, iter_s).  Each session runs iters
    iterations; those finished before every session has done warm_iters are
    not counted (the staggered start)."""
    eps = 1e-12
    rnds = [random.Random(seed * 1000 + s) for s in range(n)]
    plan = []  # per session: its phases, the first a random start offset
    for s in range(n):
        ph = [(THINK, rnds[s].uniform(0, d["think"]))]
        for _ in range(iters):
            ph += [p for p in iteration(d, startup, k, n_correct, n_warmup, n_timed,
                                        d["think"] * rnds[s].uniform(0.5, 1.5)) if p[1] > 0]
        plan.append(ph)
    pos = [0] * n                       # index of the current phase
    left = [plan[s][0][1] for s in range(n)]
    done_at = [[] for _ in range(n)]    # times the benchmarks ended
    regions = []                        # sessions waiting for or holding the GPU, FIFO
    now = 0.0
    while True:
        active = [s for s in range(n) if pos[s] < len(plan[s])]
        if not active:
            break
        kind = {s: plan[s][pos[s]][0] for s in active}
        ncpu = sum(1 for s in active if kind[s] == CPU)
        ngpu = sum(1 for s in active if kind[s] == GPU)
        holder = regions[0] if regions else None
        rate = {}
        for s in active:
            if kind[s] in (THINK, DELAY):
                rate[s] = 1.0
            elif kind[s] == CPU:
                rate[s] = min(1.0, cores / float(ncpu))
            elif kind[s] == GPU:
                rate[s] = 0.0 if holder is not None else 1.0 / ngpu
            else:
                rate[s] = 1.0 if s == holder else 0.0
        dt = min(left[s] / rate[s] for s in active if rate[s] > 0)
        now += dt
        for s in active:
            left[s] -= rate[s] * dt
            if left[s] > eps:
                continue
            if kind[s] == REGION:
                regions.pop(0)
                done_at[s].append(now)
            pos[s] += 1
            if pos[s] < len(plan[s]):
                left[s] = plan[s][pos[s]][1]
                if plan[s][pos[s]][0] == REGION:
                    regions.append(s)
    start = max(t[warm_iters - 1] for t in done_at)
    end = min(t[-1] for t in done_at)
    counted = sum(1 for t in done_at for x in t if start < x <= end)
    if end <= start or not counted:
        return None, None
    rate = counted * 3600.0 / (end - start)
    return rate, n * 3600.0 / rate


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="1,4,8,16,24,32", help="session counts, comma separated")
    ap.add_argument("--scale", type=float, default=0.2)
    ap.add_argument("--startup", type=float, default=0.38,
                    help="a GPU command's process start-up, s (agents.py measures it)")
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--kernel-ms", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    sys.path.insert(0, __file__.rsplit("/", 1)[0] if "/" in __file__ else ".")
    from agents import DURATIONS, samples  # noqa: E402
    d = {key: v * a.scale for key, v in DURATIONS.items()}
    k = a.kernel_ms / 1000.0
    print("n sharer_per_h iter_s")
    for n in [int(x) for x in a.n.split(",") if x]:
        rate, it = simulate(n, d, a.startup, k, samples(d["correct_gpu"], a.kernel_ms),
                            samples(d["bench_warmup"], a.kernel_ms),
                            samples(d["bench_timed"], a.kernel_ms), a.cores, a.seed)
        print("%d %.0f %.2f" % (n, rate or 0, it or 0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
