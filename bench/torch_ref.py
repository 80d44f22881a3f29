#!/usr/bin/python3
"""PyTorch speed reference for the hyperflat gradient / HVP benchmarks.

Run with the Debian system interpreter (python3-torch, PyTorch 1.13):

    /usr/bin/python3 bench/torch_ref.py [--quick] [--only mlp_grad_f32,cnn_hvp_f64] [--reps N]

Prints one line per workload:  TORCH <name> <median ms per step>

Workloads (same shapes as graph/ BenchmarkMLPGrad, BenchmarkMLPHVP, BenchmarkCNNGrad, BenchmarkCNNHVP):
  mlp_grad_<dt>  MLP 784-256-256-10 ReLU, batch 128, mean softmax cross-entropy; grad w.r.t. all params
  mlp_hvp_<dt>   same MLP, Hessian-vector product by double backprop (fixed random v)
  cnn_grad_<dt>  64x1x28x28 -> conv3x3(1->16,pad1) ReLU pool2 -> conv3x3(16->32,pad1) ReLU pool2
                 -> dense 1568->10, mean cross-entropy; grad w.r.t. all params
  cnn_hvp_<dt>   same CNN, HVP by double backprop
One step = forward + backward (grad) or forward + both backward passes (HVP).

For the malloc-tuned numbers run it with
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "f64": torch.float64}


def mlp_setup(dt):
    torch.manual_seed(0)
    b, sizes = 128, [784, 256, 256, 10]
    params = []
    for i, o in zip(sizes[:-1], sizes[1:]):
        w = (torch.randn(i, o, dtype=dt) * (2.0 / i) ** 0.5).requires_grad_()
        bias = torch.zeros(o, dtype=dt).requires_grad_()
        params += [w, bias]
    x = torch.randn(b, 784, dtype=dt)
    y = torch.randint(0, 10, (b,))

    def loss_fn():
        h = x
        n = len(params) // 2
        for k in range(n):
            h = h @ params[2 * k] + params[2 * k + 1]
            if k < n - 1:
                h = F.relu(h)
        return F.cross_entropy(h, y)

    return params, loss_fn


def cnn_setup(dt):
    torch.manual_seed(0)
    b = 64
    w1 = (torch.randn(16, 1, 3, 3, dtype=dt) * (2.0 / 9) ** 0.5).requires_grad_()
    b1 = torch.zeros(16, dtype=dt).requires_grad_()
    w2 = (torch.randn(32, 16, 3, 3, dtype=dt) * (2.0 / 144) ** 0.5).requires_grad_()
    b2 = torch.zeros(32, dtype=dt).requires_grad_()
    w3 = (torch.randn(32 * 7 * 7, 10, dtype=dt) * (2.0 / 1568) ** 0.5).requires_grad_()
    b3 = torch.zeros(10, dtype=dt).requires_grad_()
    params = [w1, b1, w2, b2, w3, b3]
    x = torch.randn(b, 1, 28, 28, dtype=dt)
    y = torch.randint(0, 10, (b,))

    def loss_fn():
        h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=1)), 2)
        h = h.reshape(b, -1) @ w3 + b3
        return F.cross_entropy(h, y)

    return params, loss_fn


def make_step(setup, dt, hvp):
    params, loss_fn = setup(dt)
    if not hvp:
        def step():
            return torch.autograd.grad(loss_fn(), params)
        return step
    gen = torch.Generator().manual_seed(1)
    vs = [torch.randn(p.shape, dtype=dt, generator=gen) for p in params]

    def step():
        g = torch.autograd.grad(loss_fn(), params, create_graph=True)
        dot = sum((gi * vi).sum() for gi, vi in zip(g, vs))
        return torch.autograd.grad(dot, params)
    return step


WORKLOADS = {}
for _dn, _dt in DTYPES.items():
    WORKLOADS["mlp_grad_" + _dn] = (mlp_setup, _dt, False)
    WORKLOADS["mlp_hvp_" + _dn] = (mlp_setup, _dt, True)
    WORKLOADS["cnn_grad_" + _dn] = (cnn_setup, _dt, False)
    WORKLOADS["cnn_hvp_" + _dn] = (cnn_setup, _dt, True)
ORDER = [f"{m}_{k}_{d}" for m in ("mlp", "cnn") for k in ("grad", "hvp") for d in ("f32", "f64")]


def _busy_s():
    """(machine busy CPU-seconds from /proc/stat, this process's CPU-seconds); None if unavailable."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    hz = os.sysconf("SC_CLK_TCK")
    busy = (sum(v[:8]) - v[3] - v[4]) / hz  # user..steal minus idle, iowait
    t = os.times()
    return busy, t.user + t.system


def bench(name, reps, target_s, min_reps):
    setup, dt, hvp = WORKLOADS[name]
    step = make_step(setup, dt, hvp)
    for _ in range(3):  # warm-up
        step()
    if reps is None:  # calibrate on >= 0.1 s of steps
        n, t0 = 0, time.perf_counter()
        while True:
            step()
            n += 1
            el = time.perf_counter() - t0
            if el >= 0.1:
                break
        reps = max(min_reps, int(target_s * n / el))
    times = []
    b0, w0 = _busy_s() or (0, 0), time.perf_counter()
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    b1, wall = _busy_s(), time.perf_counter() - w0
    # CPU cores used on average by *other* processes while timing (noise indicator)
    other = max(0.0, ((b1[0] - b0[0]) - (b1[1] - b0[1])) / wall) if b1 else float("nan")
    return statistics.median(times) * 1e3, reps, other


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="~0.3 s per workload (min 5 reps) instead of ~1.5 s")
    ap.add_argument("--only", default="", help="comma-separated workload names (default: all)")
    ap.add_argument("--reps", type=int, default=None, help="fixed number of timed reps per workload")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("-v", "--verbose", action="store_true", help="also print rep counts to stderr")
    a = ap.parse_args()

    names = [n.strip() for n in a.only.split(",") if n.strip()] or ORDER
    bad = [n for n in names if n not in WORKLOADS]
    if bad:
        sys.exit(f"unknown workload(s) {bad}; choose from {ORDER}")
    torch.set_num_threads(a.threads)
    target_s = 0.3 if a.quick else 1.5
    if a.verbose:
        print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}", file=sys.stderr)
    for n in names:
        ms, reps, other = bench(n, a.reps, target_s, 5)
        if a.verbose or other > 0.15:
            warn = "  WARNING: machine busy, timing inflated" if other > 0.15 else ""
            print(f"# {n}: {reps} reps, other processes used {other:.2f} CPUs{warn}", file=sys.stderr)
        print(f"TORCH {n} {ms:.3f}", flush=True)


if __name__ == "__main__":
    main()
