#!/usr/bin/python3
"""Reference side of bench/compare: PyTorch and Optuna workloads, served over stdin/stdout.

Run by bench/compare (through the gocmp orchestrator) with the Debian system interpreter
(python3-torch = PyTorch 1.13, python3-optuna = Optuna 3.1). Protocol, one line each way:

    WARM <name> [<w>]  -> OK <ms of the last warm-up step>     (builds the workload, 3 steps;
                                                              w: the Go side's weights file)
    CHECK <name> <w>   -> OK <loss> <gradient norm>             (at weights w, not timed)
    RUN <name> <k>     -> OK <ms> <ms> ...                       (k timed steps)
    INFO               -> OK <versions>
    QUIT

Errors answer "ERR <message>". The workloads and their data match bench/gocmp (models.go,
workloads.go) value for value: element i of data stream s is frac((i+1)·0.618… + s·0.754…) − ½.

  mlp_train_<dt>  784-256-256-10 ReLU, batch 128, mean cross-entropy; forward, backward, SGD step
  mlp_hvp_<dt>    same MLP, loss and Hessian-vector product by double backprop
  cnn_train_<dt>  64x1x28x28 -> conv3x3(16,pad1) ReLU pool2 -> conv3x3(32,pad1) ReLU pool2 -> dense 10
  cnn_hvp_<dt>    same CNN, HVP by double backprop
  resnet18_train_f32, resnet34_train_f32, resnet18_cifar_train_f32, ahsc_convnet_train_f32,
  openml_mlp_train_f32/_f64, resnet18_hvp_f32, resnet18_wd_inner_f32: the papers' workloads
                  (bench/gocmp/paper.go), forward, backward and Adam; HVP; one Eq. 7 inner step
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


# ---- the papers' workloads (issue 13): bench/gocmp/paper.go builds the same networks with the
# library builders; weights come from the Go side (WARM <name> <weights file>), data and labels
# from the gen streams. Parameters are taken in the Go builders' order and layouts (Linear
# weights in×out, used as x @ W + b).

PAPER = {
    # model: (data seed, batch, input shape, classes)
    "resnet18": (4, 50, (1, 28, 28), 1000),
    "resnet34": (4, 50, (1, 28, 28), 1000),
    "resnet18_cifar": (5, 50, (3, 32, 32), 10),
    "ahsc_convnet": (6, 64, (1, 28, 28), 10),
    "openml_mlp": (7, 32, (30,), 1),
}
RESNET_BLOCKS = {"resnet18": (2, 2, 2, 2), "resnet34": (3, 4, 6, 3), "resnet18_cifar": (2, 2, 2, 2)}


def read_weights(torch, path, dt):
    """The Go side's weights file: a line 'name d0 d1 ...' per parameter, a blank line, then the
    float32 values of every parameter in that order (little-endian)."""
    with open(path, "rb") as f:
        blob = f.read()
    head, _, data = blob.partition(b"\n\n")
    params, off = [], 0
    for line in head.decode().splitlines():
        parts = line.split()
        shape = [int(s) for s in parts[1:]]
        n = math.prod(shape)
        t = torch.frombuffer(bytearray(data[off:off + 4 * n]), dtype=torch.float32).reshape(shape)
        params.append(t.to(dt).clone().requires_grad_())
        off += 4 * n
    return params


def paper_data(torch, model, dt, seed_offset=0):
    seed, n, shape, k = PAPER[model]
    seed += seed_offset
    x = gen(torch, seed, n * math.prod(shape), 2, torch.float32).to(dt).reshape((n,) + shape)
    if k == 1:
        y = torch.tensor([(7 * i + 3 + seed) % 2 for i in range(n)], dtype=dt).reshape(n, 1)
    else:
        y = torch.tensor([(7 * i + 3 + seed) % k for i in range(n)], dtype=torch.long)
    return x, y


def paper_forward(torch, F, model, params, bn_state):
    """logits(x) of the model at params; bn_state holds the running statistics (updated in
    place, as torch's BatchNorm2d in training mode)."""
    it = iter(params)
    stats = iter(bn_state)

    def bn(h):
        g, b = next(it), next(it)
        rm, rv = next(stats)
        return F.batch_norm(h, rm, rv, g, b, training=True, momentum=0.1, eps=1e-5)

    if model.startswith("resnet"):
        def f(x):
            h = F.relu(bn(F.conv2d(x, next(it), stride=2, padding=3)))
            h = F.max_pool2d(h, 3, 2, 1)
            cin = 64
            for s, nb in enumerate(RESNET_BLOCKS[model]):
                cout = 64 << s
                for i in range(nb):
                    stride = 2 if s > 0 and i == 0 else 1
                    y = F.relu(bn(F.conv2d(h, next(it), stride=stride, padding=1)))
                    y = bn(F.conv2d(y, next(it), padding=1))
                    short = h
                    if stride != 1 or cin != cout:
                        short = bn(F.conv2d(h, next(it), stride=stride))
                    h = F.relu(y + short)
                    cin = cout
            h = h.mean((2, 3))
            return h @ next(it) + next(it)
        return f
    if model == "ahsc_convnet":
        def f(x):
            h = x
            for _ in range(2):
                h = F.max_pool2d(F.relu(F.conv2d(h, next(it), padding=1) + next(it).reshape(1, -1, 1, 1)), 2)
            h = F.relu(h.reshape(h.shape[0], -1) @ next(it) + next(it))
            return h @ next(it) + next(it)
        return f

    def f(x):  # openml_mlp
        h = F.relu(x @ next(it) + next(it))
        h = F.relu(h @ next(it) + next(it))
        return h @ next(it) + next(it)
    return f


def bn_state_for(torch, model, dt):
    if not model.startswith("resnet"):
        return []
    widths = [64]
    cin = 64
    for s, nb in enumerate(RESNET_BLOCKS[model]):
        cout = 64 << s
        for i in range(nb):
            stride = 2 if s > 0 and i == 0 else 1
            widths += [cout, cout]
            if stride != 1 or cin != cout:
                widths.append(cout)
            cin = cout
    return [(torch.zeros(c, dtype=dt), torch.ones(c, dtype=dt)) for c in widths]


def paper_risk(F, model, logits, y):
    if PAPER[model][3] == 1:
        return F.binary_cross_entropy_with_logits(logits, y)
    return F.cross_entropy(logits, y)


def paper_workload(torch, F, name, weights):
    if weights is None:
        raise ValueError(name + " needs the Go side's weights file")
    model, kind, dn = name.rsplit("_", 2)
    model = model.removesuffix("_wd")
    dt = {"f32": torch.float32, "f64": torch.float64}[dn]
    params = read_weights(torch, weights, dt)
    x, y = paper_data(torch, model, dt)
    bn_state = bn_state_for(torch, model, dt)

    def loss(ps, xb=x, yb=y):
        return paper_risk(F, model, paper_forward(torch, F, model, ps, bn_state)(xb), yb)

    if kind == "train":  # forward, backward, Adam (lr 1e-3; Keras's ε for the OpenML MLP, as its builder)
        opt = torch.optim.Adam(params, lr=1e-3, eps=1e-7 if model == "openml_mlp" else 1e-8)

        def step():
            opt.zero_grad(set_to_none=True)
            loss(params).backward()
            opt.step()
        return step
    if kind == "hvp":
        vs = [gen(torch, 100 + i, p.numel(), 2, dt).reshape(p.shape) for i, p in enumerate(params)]

        def step():
            g = torch.autograd.grad(loss(params), params, create_graph=True)
            dot = sum((gi * vi).sum() for gi, vi in zip(g, vs))
            return torch.autograd.grad(dot, params)
        return step
    if kind == "inner":  # wd_inner: one Eq. 7 inner step (Algorithm 1, K = 0, per-entry λ)
        xv, yv = paper_data(torch, model, dt, seed_offset=10)
        lam = [torch.zeros_like(p, requires_grad=True) for p in params]
        opt = torch.optim.Adam(params, lr=1e-3)
        acc = [torch.zeros_like(p) for p in params]

        def step():
            # the training gradient (with ∂/∂θ of ½Σλθ² = λ⊙θ) is both the Adam step's (without
            # the penalty: decay is decoupled) and the Fisher distance's; the λ-gradient of
            # ½‖a‖², a = ∇L_T + λ⊙θ − ∇L_V, goes through the penalty's gradient
            gt = torch.autograd.grad(loss(params), params)
            gv = torch.autograd.grad(loss(params, xv, yv), params)
            a = [t + l * p.detach() - v for t, l, p, v in zip(gt, lam, params, gv)]
            half = 0.5 * sum((ai * ai).sum() for ai in a)
            rg = torch.autograd.grad(half, lam)
            with torch.no_grad():
                for s, r in zip(acc, rg):
                    s.add_(r)
                for p, g in zip(params, gt):
                    p.grad = g
            opt.step()
            with torch.no_grad():
                for p, l in zip(params, lam):
                    p.sub_(1e-3 * l * p)
        return step
    raise ValueError("unknown workload " + name)


def paper_check(torch, F, name, weights):
    """loss and the global gradient norm at the given weights (no step)."""
    model, _, dn = name.rsplit("_", 2)
    dt = {"f32": torch.float32, "f64": torch.float64}[dn]
    params = read_weights(torch, weights, dt)
    x, y = paper_data(torch, model, dt)
    l = paper_risk(F, model, paper_forward(torch, F, model, params, bn_state_for(torch, model, dt))(x), y)
    g = torch.autograd.grad(l, params)
    return float(l), math.sqrt(sum(float((gi.double() ** 2).sum()) for gi in g))


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


def is_paper(name):
    return name.rsplit("_", 2)[0].removesuffix("_wd") in PAPER


def build(name, weights=None):
    if name == "tpe_suggest":
        return tpe_workload()
    if is_paper(name):
        import torch
        import torch.nn.functional as F
        torch.set_num_threads(int(os.environ.get("REF_THREADS", "2")))
        return paper_workload(torch, F, name, weights)
    return torch_workload(name)


def aten_capability(torch):
    """The vector extension ATen's own kernels dispatch to (torch.backends.cpu.get_cpu_capability,
    PyTorch ≥ 2.0; before, the "CPU capability usage" line of torch.__config__.show())."""
    try:
        import torch.backends.cpu as cpu
        return cpu.get_cpu_capability()
    except (ImportError, AttributeError):
        pass
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def onednn_isa():
    """The instruction set oneDNN (MKL-DNN), which computes PyTorch's convolutions, chose on
    this CPU: its verbose mode's isa line, from a child interpreter (the mode is read once, at
    oneDNN's first call)."""
    import subprocess
    code = ("import torch\n"
            "torch.nn.functional.conv2d(torch.zeros(2, 3, 8, 8), torch.zeros(4, 3, 3, 3))\n")
    env = dict(os.environ, DNNL_VERBOSE="1", ONEDNN_VERBOSE="1")
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    for line in out.splitlines():
        if ",isa:" in line:
            return line.split(",isa:", 1)[1].strip().replace(" ", "_")
    return "unknown"


def info():
    out = []
    try:
        import torch
        torch.set_num_threads(int(os.environ.get("REF_THREADS", "2")))
        out.append(f"torch={torch.__version__} threads={torch.get_num_threads()}")
        out.append(f"aten={aten_capability(torch)} onednn={onednn_isa()}")
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
            elif parts[0] == "CHECK":
                import torch
                import torch.nn.functional as F
                torch.set_num_threads(int(os.environ.get("REF_THREADS", "2")))
                l, g = paper_check(torch, F, parts[1], parts[2])
                print(f"OK {l:.10g} {g:.10g}", flush=True)
            elif parts[0] == "WARM":
                name = parts[1]
                if name not in steps:
                    steps[name] = build(name, parts[2] if len(parts) > 2 else None)
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
