"""Cross-check of `hyperflat bayesmark score` against Bayesmark's own code.

Runs uber/bayesmark's experiment_baseline.compute_baseline and
experiment_analysis.compute_aggregates (its source, e.g. `git archive` of a fetched copy;
numpy, scipy, pandas and xarray from Debian: python3-numpy python3-scipy python3-pandas
python3-xarray) on a derived/eval.json, with the stored baseline.json when given (as
Bayesmark's analysis does) or the baseline it computes, and prints each optimizer's final
score 100·(1 − mean normed) for both objectives, to compare with the mean and
generalization_mean columns of `hyperflat bayesmark score --format csv`. Bayesmark's modules
that need packages not in Debian (pathvalidate, GitPython, its sklearn objectives) are stubbed:
the functions run here use none of them.

    python3 bayesmark_crosscheck.py BAYESMARK_SRC DB/derived/eval.json [DB/derived/baseline.json]

Measured (Debian bookworm: numpy 1.24.2): on the authors' wine_stcvx_min (33a136d) and on an
ahsc run written by `run ahsc --bayesmark-out`, Bayesmark and hyperflat agree to 1e-13.
"""
import os, sys, tempfile, types

src, sys.argv = sys.argv[1], sys.argv[1:]
stubs = tempfile.mkdtemp()
os.makedirs(os.path.join(stubs, "pathvalidate"))
for f in ("__init__.py", "argparse.py"):
    with open(os.path.join(stubs, "pathvalidate", f), "w") as fh:
        fh.write("def validate_filename(*a, **k): pass\ndef validate_filepath(*a, **k): pass\n"
                 "def sanitize_filename(x, *a, **k): return x\n")
sys.path.insert(0, stubs); sys.path.insert(0, src)
g = types.ModuleType("git"); g.exc = types.ModuleType("git.exc"); g.exc.InvalidGitRepositoryError = Exception
sys.modules["git"] = g; sys.modules["git.exc"] = g.exc
sk = types.ModuleType("bayesmark.sklearn_funcs"); sk.SklearnModel = object; sys.modules["bayesmark.sklearn_funcs"] = sk
import xarray as xr
import bayesmark.constants as cc
from bayesmark.experiment_baseline import compute_baseline
from bayesmark.experiment_analysis import compute_aggregates
from bayesmark.serialize import _load_xr
from bayesmark.xr_util import ds_concat

evalf, basef = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
with open(evalf) as f:
    perf_ds, meta = _load_xr(f)
# experiment_baseline looks for the prefix RandomSearch_; the starter kit's optimizer is "random".
opts = [o.replace("random_", "RandomSearch_", 1) if o.startswith("random_") else o for o in perf_ds.coords["optimizer"].values.tolist()]
perf_ds = perf_ds.assign_coords(optimizer=opts)
if basef:
    with open(basef) as f:
        baseline_ds, _ = _load_xr(f)
else:
    D = {(kk,): compute_baseline(perf_ds[kk]) for kk in perf_ds}
    baseline_ds = ds_concat(D, dims=(cc.OBJECTIVE,))
baseline_ds = baseline_ds.sel({cc.ITER: perf_ds.coords[cc.ITER].values.tolist()})
vis = perf_ds[cc.VISIBLE_TO_OPT]
for obj in ["_visible_to_opt", "generalization"]:
    agg, summary = compute_aggregates(perf_ds[obj], baseline_ds.sel({cc.OBJECTIVE: obj}, drop=True), vis)
    final = summary[cc.PERF_MEAN][{cc.ITER: -1}]
    for o in final.coords[cc.METHOD].values:
        print(obj, o, repr(100 * (1 - float(final.sel({cc.METHOD: o})))))
