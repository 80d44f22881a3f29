package ahsc

import (
	"math"
	"slices"
)

// Bayesmark's score, as uber/bayesmark computes it (experiment_baseline.py compute_baseline,
// experiment_analysis.py compute_aggregates and get_perf_array, quantiles.py quantile,
// np_util.py cummin; the authors' bbo_challenge/experiment_analysis.py is the same code).
// For one problem (dataset) and one test case (acc: the loss 1 − accuracy; nll: the log
// loss), over every call of every method and trial:
//
//   - opt is the least loss of any evaluation, lowered by PAD_FACTOR = 10⁴ spacings of its
//     magnitude (compute_baseline's pad, so that no run reaches it exactly);
//   - clip is quantile(random_evals, 0.5) of the random-search evaluations pooled over trials
//     and calls: the ⌈n/2⌉-th smallest (order statistics, not numpy's interpolation);
//   - a trial's perf is the cumulative best at its last call; its normalized loss is
//     clip((perf − opt)/(clip − opt), −1, 1), and its score 100·(1 − the mean of the two
//     cases' normalized losses). Bayesmark's mean score is the mean of these per-trial scores.
//
// The visible score uses the cross-validated losses the search minimized; the generalization
// score uses the test losses, perf being the test loss of the call of cumulatively best
// visible loss (cummin: the latest call reaching the running minimum), with its own opt and
// clip pooled from the test losses. Calls are the full-fidelity evaluations: BOHB's lower
// rungs and AHSC's one-epoch screenings are not calls of the objective Bayesmark scores. A
// failed call counts as an infinite loss (it is never the best, and is the worst in the
// random pool; Bayesmark's sklearn objectives never fail).

// bmPadFactor is experiment_baseline.py's PAD_FACTOR.
const bmPadFactor = 10000

// bmCase is one of Bayesmark's test cases for a classifier.
type bmCase struct {
	name          string
	visible, test func(e eval) float64 // the losses of an evaluation
}

var bmCases = []bmCase{
	{"acc", func(e eval) float64 { return 1 - e.valMetric }, func(e eval) float64 { return 1 - e.testAcc }},
	{"nll", func(e eval) float64 { return e.valLoss }, func(e eval) float64 { return e.testNLL }},
}

// reference is the scale of one dataset's scores for one objective (visible or
// generalization) and test case.
type reference struct {
	dataset, objective, testCase string
	opt, clip                    float64
	pooled, random, failures     int // evaluations pooled for opt; random ones for clip (failed ones among them)
}

// normalized is Bayesmark's normalized loss, clipped to [−1, 1]. The scale is degenerate
// only when clip is not finite (every random call failed, or half of them): the score is
// then undefined (NaN).
func normalized(perf, opt, clip float64) float64 {
	if !(clip > opt) || math.IsInf(clip, 0) || math.IsNaN(perf) {
		return math.NaN()
	}
	return math.Max(-1, math.Min(1, (perf-opt)/(clip-opt)))
}

// bmQuantile is quantiles.py quantile(X, q): the ⌈n·q⌉-th smallest of x (1-based), −∞ for
// ⌈n·q⌉ = 0.
func bmQuantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	i := int(math.Ceil(float64(len(s)) * q))
	if i == 0 {
		return math.Inf(-1)
	}
	return s[i-1]
}

// bmPad lowers opt as compute_baseline does: opt + PAD_FACTOR·spacing(−max(MIN_POS, |opt|)).
func bmPad(opt float64) float64 {
	a := math.Max(math.SmallestNonzeroFloat64, math.Abs(opt))
	return opt - bmPadFactor*(math.Nextafter(a, math.Inf(1))-a)
}

// loss is an evaluation's loss for a case: +∞ when it failed.
func loss(e eval, f func(eval) float64) float64 {
	if e.failed {
		return math.Inf(1)
	}
	v := f(e)
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}

// bmPerf is a trial's perf for a case: its cumulative best visible loss at the last call, and
// the test loss of the call that reached it (np_util.cummin: ties go to the latest call).
func bmPerf(evals []eval, c bmCase) (visible, test float64) {
	visible, test = math.Inf(1), math.NaN()
	for _, e := range evals {
		if v := loss(e, c.visible); v <= visible && !math.IsInf(v, 1) {
			visible, test = v, loss(e, c.test)
		}
	}
	return visible, test
}

// bmScale computes one case's opt and clip over the runs idx of a dataset, on the visible or
// the test losses.
func bmScale(runs []run, idx []int, f func(eval) float64) reference {
	ref := reference{opt: math.Inf(1)}
	var rnd []float64
	for _, i := range idx {
		random := runs[i].method == "random"
		for _, e := range fullEvals(runs[i].evals) {
			v := loss(e, f)
			if random {
				rnd = append(rnd, v)
				ref.random++
				if math.IsInf(v, 1) {
					ref.failures++
				}
			}
			if !math.IsInf(v, 1) {
				ref.pooled++
				ref.opt = math.Min(ref.opt, v)
			}
		}
	}
	ref.clip = bmQuantile(rnd, 0.5)
	if !math.IsInf(ref.opt, 1) {
		ref.opt = bmPad(ref.opt)
	}
	return ref
}

// bayesmarkScores fills the value (visible score) and generalization score of every
// Bayesmark run from the opt and clip of its dataset, pooled over all its runs, and returns
// those references.
func bayesmarkScores(runs []run) []reference {
	groups := map[string][]int{}
	var names []string
	for i, r := range runs {
		if r.group == bayesmark {
			if _, ok := groups[r.dataset]; !ok {
				names = append(names, r.dataset)
			}
			groups[r.dataset] = append(groups[r.dataset], i)
		}
	}
	var refs []reference
	for _, name := range names {
		idx := groups[name]
		vis := make([]reference, len(bmCases))
		gen := make([]reference, len(bmCases))
		for k, c := range bmCases {
			vis[k], gen[k] = bmScale(runs, idx, c.visible), bmScale(runs, idx, c.test)
			vis[k].dataset, vis[k].objective, vis[k].testCase = name, "visible", c.name
			gen[k].dataset, gen[k].objective, gen[k].testCase = name, "generalization", c.name
			refs = append(refs, vis[k], gen[k])
		}
		for _, i := range idx {
			r := &runs[i]
			evals := fullEvals(r.evals)
			if len(evals) == 0 {
				r.value, r.genScore = math.NaN(), math.NaN()
				continue
			}
			var sv, sg float64
			for k, c := range bmCases {
				pv, pt := bmPerf(evals, c)
				sv += normalized(pv, vis[k].opt, vis[k].clip) / float64(len(bmCases))
				sg += normalized(pt, gen[k].opt, gen[k].clip) / float64(len(bmCases))
			}
			r.value, r.genScore = 100*(1-sv), 100*(1-sg)
		}
	}
	return refs
}
