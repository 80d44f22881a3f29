package ahsc

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hyperflat/hyperflat/stats"
)

// Scoring Bayesmark's own output folders with the scorer of bayesmark.go, the one report
// uses. A problem is a classifier and a dataset (MLP-adam_iris); its test cases are its
// functions (MLP-adam_iris_acc, MLP-adam_iris_nll). Bayesmark runs a separate study per
// function; as experiment_aggregate.py does, the k-th study of each function is study k, so
// that a study's score is 100·(1 − the mean over the functions of its normalized loss).
// Their mean is Bayesmark's per-problem score (the mean over the functions of
// experiment_analysis.py's "mean normed", subtracted from 1, times 100) whatever the
// pairing; the median depends on it.

// The baseline. Bayesmark's analysis (experiment_analysis.py main) loads derived/baseline.json
// and computes it (experiment_baseline.py do_baseline) only when it is absent, so a stored
// baseline is what Bayesmark scores with: its best (opt, already padded) and clip for each
// function and objective; BaselineAuto does the same. BaselineRecompute computes them from
// the studies read, as do_baseline would. Each row reports how far the stored baseline is from
// the recomputed one; for the authors' stored outputs (33a136d *_stcvx_min, 2f2815c *_stcvx)
// the two are identical.

// Baseline choices of BayesmarkScoreOptions.
const (
	BaselineAuto      = "auto"      // stored when derived/baseline.json is present, as Bayesmark's analysis
	BaselineStored    = "stored"    // derived/baseline.json's best and clip; an error without it
	BaselineRecompute = "recompute" // experiment_baseline.py's computation over the studies read
)

// DefaultRandomNames are the optimizers (their names before Bayesmark's _OPTREV_REV suffix)
// whose evaluations set clip: Bayesmark's own RandomSearch (experiment_baseline.py looks for
// the prefix "RandomSearch_") and the starter kit's example random optimizer, "random", which
// the authors' stored runs use.
var DefaultRandomNames = []string{"RandomSearch", "random"}

// BayesmarkScoreOptions choose the baseline and the bootstrap.
type BayesmarkScoreOptions struct {
	Baseline  string   // BaselineAuto ("" too), BaselineStored or BaselineRecompute
	Random    []string // random-search optimizers (nil: DefaultRandomNames)
	Resamples int      // bootstrap resamples (0: DefaultResamples)
	Seed      uint64   // the bootstrap's seed
}

// DefaultResamples is the bootstrap's default number of resamples.
const DefaultResamples = 10000

// maxResamples bounds the bootstrap's work.
const maxResamples = 1000000

// BayesmarkScore is one optimizer's scores on one problem.
type BayesmarkScore struct {
	Problem   string // classifier_dataset, e.g. MLP-adam_iris
	Dataset   string // the dataset part of Problem
	Optimizer string // as Bayesmark names it: NAME_OPTREV_REV
	Method    string // NAME
	Studies   int
	// CallsMin and CallsMax are the least and most calls of its studies (equal in any
	// output Bayesmark's aggregation accepts).
	CallsMin, CallsMax int
	// Visible score (Bayesmark's leaderboard score): the mean and median over the studies,
	// each with a percentile-bootstrap 95% interval over the studies.
	Mean, MeanLow, MeanHigh       float64
	Median, MedianLow, MedianHigh float64
	// Generalization score, its mean and interval.
	GenMean, GenMeanLow, GenMeanHigh float64
	// CVAccuracyMedian is the median, over every call of every study, of the cross-validated
	// accuracy the search saw (the acc function's visible loss negated: Bayesmark's
	// sklearn_funcs.py minimizes −accuracy); NaN where the problem has no _acc function. It
	// says how well the configurations an optimizer tried fit, apart from any score's pool.
	CVAccuracyMedian float64
	// Baseline is "stored" or "recomputed"; BaselineDiff, with a stored baseline, is the
	// largest difference between it and the one recomputed from the studies read, in units
	// of clip − opt (0: the stored baseline was computed from exactly these studies).
	Baseline     string
	BaselineDiff float64
}

// splitOptimizer is Bayesmark's optimizer name without its _OPTREV_REV suffix.
func splitOptimizer(o string) string {
	parts := strings.Split(o, "_")
	if len(parts) >= 3 {
		return strings.Join(parts[:len(parts)-2], "_")
	}
	return o
}

// splitFunction is a function's problem and dataset: MLP-adam_iris_acc → MLP-adam_iris, iris.
func splitFunction(f string) (problem, dataset string) {
	i := strings.LastIndex(f, "_")
	if i <= 0 {
		return f, f
	}
	problem = f[:i]
	dataset = problem
	if j := strings.Index(problem, "_"); j >= 0 {
		dataset = problem[j+1:]
	}
	return problem, dataset
}

// ScoreBayesmark scores every optimizer of db on every problem.
func ScoreBayesmark(db *BayesmarkDB, opt BayesmarkScoreOptions) ([]BayesmarkScore, error) {
	if db == nil {
		return nil, errors.New("ahsc: no Bayesmark database")
	}
	if opt.Random == nil {
		opt.Random = DefaultRandomNames
	}
	if opt.Resamples == 0 {
		opt.Resamples = DefaultResamples
	}
	if opt.Resamples < 100 || opt.Resamples > maxResamples {
		return nil, fmt.Errorf("ahsc: %d bootstrap resamples: want 100 to %d", opt.Resamples, maxResamples)
	}
	switch opt.Baseline {
	case "":
		opt.Baseline = BaselineAuto
	case BaselineAuto, BaselineRecompute:
	case BaselineStored:
		if db.baseline == nil {
			return nil, fmt.Errorf("%s: --baseline stored: %w", db.Dir, errNoBaseline)
		}
	default:
		return nil, fmt.Errorf("ahsc: baseline %q: want auto, stored or recompute", opt.Baseline)
	}
	useStored := db.baseline != nil && opt.Baseline != BaselineRecompute
	problems := map[string][]string{}
	var order []string
	for _, f := range db.functions {
		p, _ := splitFunction(f)
		if _, ok := problems[p]; !ok {
			order = append(order, p)
		}
		problems[p] = append(problems[p], f)
	}
	var out []BayesmarkScore
	for _, p := range order {
		rows, err := scoreProblem(db, p, problems[p], opt, useStored)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

func scoreProblem(db *BayesmarkDB, problem string, fns []string, opt BayesmarkScoreOptions, useStored bool) ([]BayesmarkScore, error) {
	_, dataset := splitFunction(fns[0])
	var studies []bmStudy
	type span struct {
		optimizer string
		lo, hi    int
	}
	var spans []span
	for _, o := range db.optimizers {
		n := -1
		for _, f := range fns {
			c := len(db.studies[f][o])
			if n >= 0 && c != n {
				return nil, fmt.Errorf("%s: %s has %d studies of %s and %d of %s: Bayesmark pairs them and refuses uneven counts",
					db.Dir, o, n, fns[0], c, f)
			}
			n = c
		}
		if n == 0 {
			continue
		}
		random := slices.Contains(opt.Random, splitOptimizer(o))
		lo := len(studies)
		for t := 0; t < n; t++ {
			s := bmStudy{method: o, random: random, visible: make([][][]float64, len(fns)), test: make([][][]float64, len(fns))}
			for k, f := range fns {
				l := db.studies[f][o][t]
				s.visible[k], s.test[k] = l.visible, l.generalization
			}
			studies = append(studies, s)
		}
		spans = append(spans, span{o, lo, len(studies)})
	}
	vis := make([]reference, len(fns))
	gen := make([]reference, len(fns))
	for k := range fns {
		vis[k], gen[k] = bmScale(studies, k, false), bmScale(studies, k, true)
		if vis[k].random == 0 && !useStored {
			return nil, fmt.Errorf("%s: %s: no random-search optimizer (%s) to set clip, and no stored baseline",
				db.Dir, fns[k], strings.Join(opt.Random, ", "))
		}
	}
	baseline, diff := "recomputed", 0.0
	if useStored {
		baseline = "stored"
		for k, f := range fns {
			for _, c := range []struct {
				obj string
				ref *reference
			}{{bmVisible, &vis[k]}, {bmGeneralization, &gen[k]}} {
				st, ok := db.baseline[[2]string{f, c.obj}]
				if !ok {
					return nil, fmt.Errorf("%s: %s has no %s %s", db.Dir, db.BaselineFile, f, c.obj)
				}
				if c.ref.random > 0 {
					scale := st.clip - st.best
					diff = math.Max(diff, math.Max(math.Abs(st.best-c.ref.opt), math.Abs(st.clip-c.ref.clip))/scale)
				} else {
					diff = math.NaN()
				}
				c.ref.opt, c.ref.clip = st.best, st.clip
			}
		}
	}
	accFn := slices.IndexFunc(fns, func(f string) bool { return strings.HasSuffix(f, "_acc") })
	var out []BayesmarkScore
	for _, sp := range spans {
		vals := make([]float64, 0, sp.hi-sp.lo)
		gens := make([]float64, 0, sp.hi-sp.lo)
		r := BayesmarkScore{Problem: problem, Dataset: dataset, Optimizer: sp.optimizer, Method: splitOptimizer(sp.optimizer),
			Studies: sp.hi - sp.lo, CallsMin: math.MaxInt, Baseline: baseline, BaselineDiff: diff}
		var accs []float64
		for _, s := range studies[sp.lo:sp.hi] {
			if accFn >= 0 {
				for _, call := range s.visible[accFn] {
					for _, l := range call {
						accs = append(accs, -l)
					}
				}
			}
			v, g := bmScore(s, vis, gen)
			vals, gens = append(vals, v), append(gens, g)
			for k := range s.visible {
				r.CallsMin, r.CallsMax = min(r.CallsMin, len(s.visible[k])), max(r.CallsMax, len(s.visible[k]))
			}
		}
		r.CVAccuracyMedian = math.NaN()
		if len(accs) > 0 {
			r.CVAccuracyMedian = stats.Median(accs)
		}
		seed := opt.Seed
		r.Mean, r.MeanLow, r.MeanHigh = bootstrap(vals, stats.Mean, opt.Resamples, seed)
		r.Median, r.MedianLow, r.MedianHigh = bootstrap(vals, stats.Median, opt.Resamples, seed)
		r.GenMean, r.GenMeanLow, r.GenMeanHigh = bootstrap(gens, stats.Mean, opt.Resamples, seed)
		out = append(out, r)
	}
	return out, nil
}

// bootstrap is stat(xs) with its percentile-bootstrap 95% interval: the 2.5% and 97.5%
// quantiles (order statistics ⌈B·q⌉, as bmQuantile) of stat over resamples of xs drawn with
// replacement from a PCG stream seeded by seed. NaN values make every part NaN.
func bootstrap(xs []float64, stat func([]float64) float64, resamples int, seed uint64) (est, lo, hi float64) {
	est = stat(xs)
	if len(xs) == 0 || math.IsNaN(est) {
		return math.NaN(), math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))
	reps := make([]float64, resamples)
	buf := make([]float64, len(xs))
	for b := range reps {
		for i := range buf {
			buf[i] = xs[rng.IntN(len(xs))]
		}
		reps[b] = stat(buf)
	}
	return est, bmQuantile(reps, 0.025), bmQuantile(reps, 0.975)
}
