#!/usr/bin/python3
"""Reference side of bench/compare: PyTorch and Optuna workloads, served over stdin/stdout.

Run by bench/compare (through the gocmp orchestrator) with the Debian system interpreter
(python3-torch = PyTorch 1.13, python3-optuna = Optuna 3.1). Protocol, one line each way:

    WARM <name>        -> OK <ms of the last warm-up step>     (builds the workload, 3 steps)
    RUN <name> <k>     -> OK <ms> <ms> ...                       (k timed steps)
    INFO               -> OK <versions>
    QUIT

Errors answer "ERR <message>". The workloads and their data match bench/gocmp (models.go,
workloads.go) value for value: element i of data stream s is frac((i+1)·0.618… + s·0.754…) − ½.

  mlp_train_<dt>  784-256-256-10 ReLU, batch 128, mean cross-entropy; forward, backward, SGD step
  mlp_hvp_<dt>    same MLP, loss and Hessian-vector product by double backprop
  cnn_train_<dt>  64x1x28x28 -> conv3x3(16,pad1) ReLU pool2 -> conv3x3(32,pad1) ReLU pool2 -> dense 10
  cnn_hvp_<dt>    same CNN, HVP by double backprop
  tpe_suggest     Optuna TPESampler (defaults) ask + 5 suggests with 100 completed trials, 5-D space
"""
import math
import os
import sys
import time

LR = 0.01


def gen(torch, seed, n, scale, dtype):
    i = torch.arange(1, n + 1, dtype=torch.float64)
    x = i * 0.6180339887498949 + float(seed) * 0.7548776662466927
    return ((x - torch.floor(x) - 0.5) * scale).to(dtype)


def he(fan_in):
    return math.sqrt(12 * 2 / fan_in)


def labels(torch, seed, n, k):
    return torch.tensor([(7 * i + 3 + seed) % k for i in range(n)], dtype=torch.long)


def mlp(torch, F, dt):
    x = gen(torch, 1, 128 * 784, 2, dt).reshape(128, 784)
    y = labels(torch, 0, 128, 10)
    sizes = [784, 256, 256, 10]
    params = []
    for l in range(3):
        w = gen(torch, 10 + l, sizes[l] * sizes[l + 1], he(sizes[l]), dt).reshape(sizes[l], sizes[l + 1])
        b = gen(torch, 20 + l, sizes[l + 1], 0.1, dt)
        params += [w.requires_grad_(), b.requires_grad_()]

    def loss():
        h = x
        for l in range(3):
            h = h @ params[2 * l] + params[2 * l + 1]
            if l < 2:
                h = F.relu(h)
        return F.cross_entropy(h, y)

    return params, loss


def cnn(torch, F, dt):
    x = gen(torch, 2, 64 * 784, 2, dt).reshape(64, 1, 28, 28)
    y = labels(torch, 1, 64, 10)
    w1 = gen(torch, 30, 16 * 9, he(9), dt).reshape(16, 1, 3, 3)
    b1 = gen(torch, 31, 16, 0.1, dt)
    w2 = gen(torch, 32, 32 * 16 * 9, he(144), dt).reshape(32, 16, 3, 3)
    b2 = gen(torch, 33, 32, 0.1, dt)
    wd = gen(torch, 34, 1568 * 10, he(1568), dt).reshape(1568, 10)
    bd = gen(torch, 35, 10, 0.1, dt)
    params = [p.requires_grad_() for p in (w1, b1, w2, b2, wd, bd)]

    def loss():
        h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=1)), 2)
        return F.cross_entropy(h.reshape(64, -1) @ wd + bd, y)

    return params, loss


def torch_workload(name):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(int(os.environ.get("REF_THREADS", "2")))
    model, kind, dn = name.split("_")
    dt = {"f32": torch.float32, "f64": torch.float64}[dn]
    params, loss = {"mlp": mlp, "cnn": cnn}[model](torch, F, dt)
    if kind == "train":
        def step():
            g = torch.autograd.grad(loss(), params)
            with torch.no_grad():
                for p, gi in zip(params, g):
                    p.sub_(LR * gi)
        return step
    vs = [gen(torch, 100 + i, p.numel(), 2, dt).reshape(p.shape) for i, p in enumerate(params)]

    def step():
        g = torch.autograd.grad(loss(), params, create_graph=True)
        dot = sum((gi * vi).sum() for gi, vi in zip(g, vs))
        return torch.autograd.grad(dot, params)
    return step


def frac(seed, t):
    x = (t + 1) * 0.6180339887498949 + seed * 0.7548776662466927
    return x - math.floor(x)


def tpe_workload():
    import optuna
    from optuna.distributions import FloatDistribution, IntDistribution
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    dists = {
        "lr": FloatDistribution(1e-5, 1, log=True),
        "momentum": FloatDistribution(0, 0.99),
        "weight_decay": FloatDistribution(1e-6, 1e-1, log=True),
        "width": IntDistribution(16, 1024),
        "dropout": FloatDistribution(0, 0.8),
    }

    def from_unit(name, u):
        d = dists[name]
        if isinstance(d, IntDistribution):
            return min(d.high, max(d.low, int(round(d.low - 0.5 + u * (d.high - d.low + 1)))))
        if d.log:
            lo, hi = math.log(d.low), math.log(d.high)
            return min(d.high, max(d.low, math.exp(lo + u * (hi - lo))))
        return d.low + u * (d.high - d.low)

    sampler = optuna.samplers.TPESampler(seed=1)
    study = optuna.create_study(sampler=sampler)
    for t in range(100):
        params, obj = {}, 0.0
        for d, name in enumerate(dists):
            u = frac(50 + d, t)
            obj += (u - 0.3) ** 2
            params[name] = from_unit(name, u)
        study.add_trial(optuna.trial.create_trial(params=params, distributions=dists, value=obj))

    def step():
        trial = study.ask()
        trial.suggest_float("lr", 1e-5, 1, log=True)
        trial.suggest_float("momentum", 0, 0.99)
        trial.suggest_float("weight_decay", 1e-6, 1e-1, log=True)
        trial.suggest_int("width", 16, 1024)
        trial.suggest_float("dropout", 0, 0.8)
        study.tell(trial, state=optuna.trial.TrialState.FAIL)  # TPE models completed trials only
    return step


def build(name):
    if name == "tpe_suggest":
        return tpe_workload()
    return torch_workload(name)


def info():
    out = []
    try:
        import torch
        torch.set_num_threads(int(os.environ.get("REF_THREADS", "2")))
        out.append(f"torch={torch.__version__} threads={torch.get_num_threads()}")
    except ImportError:
        out.append("torch=missing")
    try:
        import optuna
        out.append(f"optuna={optuna.__version__}")
    except ImportError:
        out.append("optuna=missing")
    return " ".join(out)


def main():
    steps = {}
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        try:
            if parts[0] == "QUIT":
                return
            if parts[0] == "INFO":
                print("OK " + info(), flush=True)
            elif parts[0] == "WARM":
                name = parts[1]
                if name not in steps:
                    steps[name] = build(name)
                ms = 0.0
                for _ in range(3):
                    t0 = time.perf_counter()
                    steps[name]()
                    ms = (time.perf_counter() - t0) * 1e3
                print(f"OK {ms:.6f}", flush=True)
            elif parts[0] == "RUN":
                name, k = parts[1], int(parts[2])
                step = steps[name]
                ts = []
                for _ in range(k):
                    t0 = time.perf_counter()
                    step()
                    ts.append((time.perf_counter() - t0) * 1e3)
                print("OK " + " ".join(f"{t:.6f}" for t in ts), flush=True)
            else:
                print("ERR unknown command " + parts[0], flush=True)
        except Exception as e:  # report, keep serving
            print("ERR " + repr(e).replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
