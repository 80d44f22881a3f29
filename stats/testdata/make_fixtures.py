#!/usr/bin/python3
"""Regenerate stats/testdata/fixtures.json, the reference values for package stats.

Run with the Debian interpreter, which has SciPy and statsmodels installed
(apt-get install python3-scipy python3-statsmodels):

    /usr/bin/python3 stats/testdata/make_fixtures.py

The Go tests only read fixtures.json; Python is not needed to run them.

Non-finite floats are written as the strings "nan", "inf" and "-inf" because
JSON has no literal for them. Exact Mann-Whitney counts are computed here in
integer arithmetic by methods independent of the Go code: a Gaussian
binomial polynomial when there are no ties, and brute-force enumeration of
all subsets when there are ties.
"""

import itertools
import json
import math
import os
import sys

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.multitest import multipletests


def enc(v):
    """Encodes a float (or nested list) for JSON, spelling non-finite values."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [enc(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def rng_data(seed, kind, n, **kw):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        x = rng.normal(kw.get("loc", 0.0), kw.get("scale", 1.0), n)
    elif kind == "int":
        x = rng.integers(kw["lo"], kw["hi"] + 1, n).astype(float)
    elif kind == "round":
        x = np.round(rng.normal(kw.get("loc", 0.0), 1.0, n), kw["digits"])
    else:
        raise ValueError(kind)
    return [float(v) for v in x]


# ---------------------------------------------------------------- Mann-Whitney

def midranks_doubled(xy):
    """Twice the average ranks of xy (integers)."""
    r = stats.rankdata(xy)
    d = [int(round(2 * v)) for v in r]
    assert all(abs(2 * v - di) < 1e-9 for v, di in zip(r, d))
    return d


def gaussian_binomial_counts(m, n):
    """Coefficients of [m+n choose m]_q: number of m-subsets of {1..m+n}
    with U = k, for k = 0..m*n (no ties), computed in exact integers."""
    # [n+j choose j]_q = [n+j-1 choose j-1]_q * (1 - q^(n+j)) / (1 - q^j)
    poly = [1]
    for j in range(1, m + 1):
        prod = [0] * (len(poly) + n + j)
        for k, c in enumerate(poly):
            prod[k] += c
            prod[k + n + j] -= c
        # divide by (1 - q^j): q[k] = prod[k] + q[k-j]
        quo = [0] * (len(prod) - j)
        for k in range(len(quo)):
            quo[k] = prod[k] + (quo[k - j] if k >= j else 0)
        poly = quo
    assert len(poly) == m * n + 1
    assert sum(poly) == math.comb(m + n, m)
    assert all(c >= 0 for c in poly)
    return poly


def exact_counts(x, y):
    """Returns (counts dict: 2U -> number of x-subsets, total) for the
    permutation distribution of U1 given the observed mid-ranks."""
    n1, n2 = len(x), len(y)
    xy = list(x) + list(y)
    d = midranks_doubled(xy)
    total = math.comb(n1 + n2, n1)
    if len(set(xy)) == len(xy):
        poly = gaussian_binomial_counts(n1, n2)
        return {2 * k: c for k, c in enumerate(poly) if c}, total
    assert total <= 2_000_000, "brute force too large"
    counts = {}
    base = n1 * (n1 + 1)
    for comb in itertools.combinations(range(n1 + n2), n1):
        u2 = sum(d[i] for i in comb) - base
        counts[u2] = counts.get(u2, 0) + 1
    assert sum(counts.values()) == total
    return counts, total


def exact_reference(x, y, alternative):
    """Exact conditional p-value (the Go package's definition), as counts."""
    n1, n2 = len(x), len(y)
    mn = n1 * n2
    counts, total = exact_counts(x, y)
    d = midranks_doubled(list(x) + list(y))
    u2obs = sum(d[:n1]) - n1 * (n1 + 1)  # 2*U1
    if alternative == "greater":
        num = sum(c for k, c in counts.items() if k >= u2obs)
    elif alternative == "less":
        num = sum(c for k, c in counts.items() if k <= u2obs)
    else:
        delta = abs(u2obs - mn)
        if delta == 0:
            num = total
        else:
            num = sum(c for k, c in counts.items() if abs(k - mn) >= delta)
    return num, total


def mwu_cases():
    males, females = [19, 22, 16, 29, 24], [20, 11, 17, 12]
    cases = [
        ("doc_example", males, females),
        ("doc_example_swapped", females, males),
        ("one_each", [1.0], [2.0]),
        ("one_vs_five", [3.5], [1, 2, 3, 4, 5]),
        ("three_four", [1.1, 5.2, 3.3], [2.4, 7.5, 0.6, 4.7]),
        ("n7_n7", rng_data(1, "normal", 7), rng_data(2, "normal", 7, loc=1.0)),
        ("n8_n8", rng_data(3, "normal", 8), rng_data(4, "normal", 8, loc=0.8)),
        ("n8_n20", rng_data(5, "normal", 8, loc=0.7), rng_data(6, "normal", 20)),
        ("n20_n8", rng_data(7, "normal", 20), rng_data(8, "normal", 8, loc=-0.5)),
        ("n9_n9", rng_data(9, "normal", 9), rng_data(10, "normal", 9, loc=1.0)),
        ("n10_n12", rng_data(11, "normal", 10), rng_data(12, "normal", 12, loc=0.6)),
        ("n20_n30", rng_data(13, "normal", 20), rng_data(14, "normal", 30, loc=0.4)),
        ("separated_n6_n6", [10, 11, 12, 13, 14, 15], [1, 2, 3, 4, 5, 6]),
        ("separated_n30_n30", [float(100 + i) for i in range(30)], [float(i) for i in range(30)]),
        ("ties_small", [1, 2, 2, 3, 3], [2, 3, 4, 4, 5, 5]),
        ("ties_asymmetric", [1, 1, 2], [1, 3, 3, 3]),
        ("ties_heavy_small", [0, 0, 1, 1, 1, 2], [1, 1, 2, 2, 3, 3, 3]),
        ("ties_int_n25_n30", rng_data(15, "int", 25, lo=0, hi=4), rng_data(16, "int", 30, lo=1, hi=5)),
        ("ties_round_n40_n35", rng_data(17, "round", 40, digits=1), rng_data(18, "round", 35, digits=1, loc=0.3)),
        ("all_identical", [2, 2, 2, 2], [2, 2, 2]),
        ("equal_samples", [1, 2, 3], [1, 2, 3]),
        ("with_infinities", [-math.inf, 1.0, 2.0, math.inf], [0.5, 1.5, 3.0]),
        ("n50_n60", rng_data(19, "normal", 50), rng_data(20, "normal", 60, loc=0.3)),
    ]
    out = []
    for name, x_in, y_in in cases:
        x_in = [float(v) for v in x_in]
        y_in = [float(v) for v in y_in]
        # SciPy 1.10's rankdata returns NaN for infinite input, so the
        # reference for such data is computed with +-inf replaced by +-1e300,
        # which leaves every rank (and so U and every p-value) unchanged.
        x = [math.copysign(1e300, v) if math.isinf(v) else v for v in x_in]
        y = [math.copysign(1e300, v) if math.isinf(v) else v for v in y_in]
        xy = np.array(x + y)
        has_ties = len(np.unique(xy)) != len(xy)
        small = len(x) + len(y) <= 20 or not has_ties
        results = []
        for alt in ("two-sided", "less", "greater"):
            for method in ("auto", "exact", "asymptotic"):
                for cont in (True, False):
                    if method != "asymptotic" and not cont:
                        continue  # continuity only affects the asymptotic method
                    r = stats.mannwhitneyu(x, y, alternative=alt, method=method,
                                           use_continuity=cont)
                    entry = {"alternative": alt, "method": method,
                             "continuity": cont, "u": enc(r.statistic),
                             "p_scipy": enc(r.pvalue)}
                    if method == "auto":
                        n1, n2 = len(x), len(y)
                        entry["used"] = "asymptotic" if (n1 > 8 and n2 > 8) or has_ties else "exact"
                    if method == "exact" and small:
                        num, total = exact_reference(x, y, alt)
                        entry["exact_num"] = num
                        entry["exact_total"] = total
                        entry["p_exact"] = enc(num / total)
                    results.append(entry)
        out.append({"name": name, "x": enc(x_in), "y": enc(y_in), "ties": bool(has_ties),
                    "results": results})
    return out


# ---------------------------------------------------------------- Kruskal-Wallis

def kruskal_cases():
    cases = [
        ("three_no_ties", [[2.9, 3.0, 2.5, 2.6, 3.2], [3.8, 2.7, 4.0, 2.4], [2.8, 3.4, 3.7, 2.2, 2.0]]),
        ("three_ties", [[1, 3, 5, 7, 9], [2, 4, 6, 8, 10], [1, 2, 3, 4, 5, 5]]),
        ("two_groups", [[1, 2, 3, 4], [5, 6, 7]]),
        ("identical_groups", [[1, 2], [1, 2]]),
        ("singletons", [[1.0], [2.0], [3.0]]),
        ("five_random", [rng_data(30 + i, "normal", 20, loc=0.2 * i) for i in range(5)]),
        ("six_int_ties", [rng_data(40 + i, "int", 20, lo=0, hi=6) for i in range(6)]),
        ("strong_effect", [[float(10 * g + i) for i in range(10)] for g in range(4)]),
    ]
    out = []
    for name, groups in cases:
        groups = [[float(v) for v in g] for g in groups]
        r = stats.kruskal(*groups)
        out.append({"name": name, "groups": enc(groups), "h": enc(r.statistic),
                    "p": enc(r.pvalue)})
    return out


# ---------------------------------------------------------------- Spearman

def spearman_cases():
    x20 = rng_data(50, "normal", 20)
    noise = rng_data(51, "normal", 20)
    cases = [
        ("small_no_ties", [1, 2, 3, 4, 5], [5, 6, 7, 8, 7.5]),
        ("perfect_positive", [1, 2, 3, 4, 5, 6], [2, 4, 8, 16, 32, 64]),
        ("perfect_negative", [1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]),
        ("n3", [1, 2, 3], [1, 3, 2]),
        ("n2", [1, 2], [2, 1]),
        ("ties", [1, 2, 2, 3, 4, 4, 4, 5], [1, 1, 2, 3, 3, 5, 4, 6]),
        ("random_n20", x20, [a + 0.7 * b for a, b in zip(x20, noise)]),
        ("int_ties_n40", rng_data(52, "int", 40, lo=0, hi=5), rng_data(53, "int", 40, lo=0, hi=5)),
        ("uncorrelated_n100", rng_data(54, "normal", 100), rng_data(55, "normal", 100)),
    ]
    out = []
    for name, x, y in cases:
        x = [float(v) for v in x]
        y = [float(v) for v in y]
        r = stats.spearmanr(x, y)
        out.append({"name": name, "x": enc(x), "y": enc(y), "rho": enc(r.statistic),
                    "p": enc(r.pvalue)})
    return out


# ---------------------------------------------------------------- multipletests

def multitest_cases():
    rng = np.random.default_rng(60)
    mixed = np.concatenate([rng.uniform(0, 0.01, 8), rng.uniform(0, 1, 22)])
    rng.shuffle(mixed)
    cases = [
        ("classic", [0.01, 0.02, 0.03, 0.04, 0.05]),
        ("textbook", [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298,
                      0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0]),
        ("mixed30", mixed),
        ("uniform20", rng.uniform(0, 1, 20)),
        ("all_tiny", [1e-8, 1e-6, 1e-5, 2e-5]),
        ("none_significant", [0.2, 0.5, 0.9, 0.7, 0.3]),
        ("with_ties", [0.01, 0.01, 0.04, 0.04, 0.04, 0.2, 0.2, 0.9]),
        ("zeros_and_ones", [0.0, 0.0, 0.03, 1.0, 1.0, 0.5]),
        ("single_small", [0.01]),
        ("single_large", [0.5]),
        ("near_threshold", [0.049, 0.051, 0.025, 0.0125, 0.8]),
    ]
    out = []
    for name, p in cases:
        p = [float(v) for v in p]
        results = []
        for alpha in (0.05, 0.1):
            for method in ("fdr_bh", "fdr_tsbh", "fdr_tsbky"):
                rej, adj, _, _ = multipletests(p, alpha=alpha, method=method)
                results.append({"alpha": alpha, "method": method,
                                "reject": [bool(v) for v in rej], "adjusted": enc(adj)})
        out.append({"name": name, "p": enc(p), "results": results})
    return out


# ---------------------------------------------------------------- comparison

def run_stats_like(data, higher=True, use_median=False, unique_pairs=False,
                   method="fdr_tsbh", alpha=0.05):
    """The paper's comparison, generalised by the same options as Compare."""
    names = list(data.keys())
    k = len(names)
    h, kp = stats.kruskal(*data.values())
    loc = [float(np.median(data[g]) if use_median else np.mean(data[g])) for g in names]
    score = loc if higher else [-v for v in loc]
    top = max(range(k), key=lambda i: score[i])  # first maximum, as Python's max
    raw = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            _, p = stats.mannwhitneyu(data[names[i]], data[names[j]], alternative="two-sided")
            raw[i, j] = raw[j, i] = p
    if unique_pairs:
        iu = np.triu_indices(k, 1)
        adj_vals = multipletests(raw[iu], alpha=alpha, method=method)[1]
        adj = np.zeros((k, k))
        adj[iu] = adj_vals
        adj = adj + adj.T
    else:
        adj = multipletests(raw.ravel(), alpha=alpha, method=method)[1].reshape(raw.shape)
    top_sig = all(adj[top, j] < alpha for j in range(k) if j != top)
    best = []
    for i in range(k):
        beaten = any(adj[i, j] < alpha and score[j] > score[i] for j in range(k) if j != i)
        best.append(not beaten)
    return {"kruskal_h": enc(h), "kruskal_p": enc(kp), "loc": enc(loc), "top": top,
            "top_significant": bool(top_sig), "best": best, "p": enc(raw), "adjusted": enc(adj)}


def compare_cases():
    paperlike = {}
    for i, (name, loc, scale) in enumerate([("hyperopt", 91.0, 3.5), ("opentuner", 89.0, 5.5),
                                            ("random", 86.0, 4.0), ("skopt", 88.0, 5.0),
                                            ("turbo", 94.5, 4.0), ("smoothness", 93.5, 6.0)]):
        paperlike[name] = rng_data(70 + i, "normal", 20, loc=loc, scale=scale)
    clear = {"a": rng_data(80, "normal", 20, loc=0.0),
             "b": rng_data(81, "normal", 20, loc=3.0),
             "c": rng_data(82, "normal", 20, loc=0.5)}
    ties = {"m1": rng_data(83, "int", 20, lo=0, hi=5),
            "m2": rng_data(84, "int", 20, lo=2, hi=7),
            "m3": rng_data(85, "int", 20, lo=1, hi=6),
            "m4": rng_data(86, "int", 20, lo=2, hi=7)}
    small = {"x": [1.0, 2.0, 3.0, 4.0], "y": [5.0, 6.0, 7.0, 8.0], "z": [2.5, 3.5, 4.5, 5.5]}
    datasets = [("paperlike", paperlike), ("clear_winner", clear), ("int_ties", ties),
                ("small_exact", small)]
    variants = [
        {},
        {"lower_is_better": True},
        {"use_median": True},
        {"unique_pairs": True},
        {"correction": "fdr_bh"},
        {"correction": "fdr_bh", "unique_pairs": True},
        {"correction": "fdr_tsbky", "alpha": 0.1},
    ]
    out = []
    for dname, data in datasets:
        for v in variants:
            res = run_stats_like(data, higher=not v.get("lower_is_better", False),
                                 use_median=v.get("use_median", False),
                                 unique_pairs=v.get("unique_pairs", False),
                                 method=v.get("correction", "fdr_tsbh"),
                                 alpha=v.get("alpha", 0.05))
            out.append({"name": dname, "options": v, "names": list(data.keys()),
                        "groups": enc([data[n] for n in data]), "result": res})
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    doc = {
        "generator": "stats/testdata/make_fixtures.py",
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "statsmodels": statsmodels.__version__,
        "mannwhitneyu": mwu_cases(),
        "kruskal": kruskal_cases(),
        "spearman": spearman_cases(),
        "multipletests": multitest_cases(),
        "compare": compare_cases(),
    }
    path = os.path.join(here, "fixtures.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False, allow_nan=False)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
