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

// bmStudy is one study as Bayesmark scores it: one search of one method on one problem,
// with, for each test case k, the visible and generalization losses of its calls,
// visible[k][call][suggestion]. A failed call is +∞ in both.
type bmStudy struct {
	method        string
	random        bool // pooled for clip
	visible, test [][][]float64
}

// bmCalls counts a study's calls (the same for every test case of our runs).
func (s bmStudy) bmCalls() int {
	if len(s.visible) == 0 {
		return 0
	}
	return len(s.visible[0])
}

// studyOf is a run's study: its full-fidelity calls, one suggestion each, under both cases.
func studyOf(r run) bmStudy {
	s := bmStudy{method: r.method, random: r.method == "random",
		visible: make([][][]float64, len(bmCases)), test: make([][][]float64, len(bmCases))}
	for _, e := range fullEvals(r.evals) {
		for k, c := range bmCases {
			s.visible[k] = append(s.visible[k], []float64{loss(e, c.visible)})
			s.test[k] = append(s.test[k], []float64{loss(e, c.test)})
		}
	}
	return s
}

// bmPerf is a study's perf for case k: its cumulative best visible loss at the last call,
// and the generalization loss of the suggestion that reached it (get_perf_array: within a
// call the first least visible loss, np.argmin; across calls np_util.cummin, ties to the
// latest call). Infinite visible losses (failed calls) are never the best; a study none of
// whose calls is finite has perf +∞ and an undefined test loss.
func bmPerf(s bmStudy, k int) (visible, test float64) {
	visible, test = math.Inf(1), math.NaN()
	for i, batch := range s.visible[k] {
		best, j := math.Inf(1), -1
		for jj, v := range batch {
			if v < best {
				best, j = v, jj
			}
		}
		if j >= 0 && best <= visible {
			visible, test = best, s.test[k][i][j]
		}
	}
	return visible, test
}

// bmScale computes case k's opt and clip over studies, on the visible (gen false) or the
// generalization losses: opt the least finite loss of every study, padded; clip the median
// of the random studies' losses, every suggestion of every call pooled.
func bmScale(studies []bmStudy, k int, gen bool) reference {
	ref := reference{opt: math.Inf(1)}
	var rnd []float64
	for _, s := range studies {
		losses := s.visible[k]
		if gen {
			losses = s.test[k]
		}
		for _, batch := range losses {
			for _, v := range batch {
				if s.random {
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
	}
	ref.clip = bmQuantile(rnd, 0.5)
	if !math.IsInf(ref.opt, 1) {
		ref.opt = bmPad(ref.opt)
	}
	return ref
}

// bmScore is a study's visible and generalization scores against the cases' references:
// 100·(1 − the mean over the cases of the normalized loss of its perf). NaN when the study
// has no call.
func bmScore(s bmStudy, vis, gen []reference) (visible, generalization float64) {
	if s.bmCalls() == 0 {
		return math.NaN(), math.NaN()
	}
	n := float64(len(vis))
	var sv, sg float64
	for k := range vis {
		pv, pt := bmPerf(s, k)
		sv += normalized(pv, vis[k].opt, vis[k].clip) / n
		sg += normalized(pt, gen[k].opt, gen[k].clip) / n
	}
	return 100 * (1 - sv), 100 * (1 - sg)
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
		studies := make([]bmStudy, len(idx))
		for j, i := range idx {
			studies[j] = studyOf(runs[i])
		}
		vis := make([]reference, len(bmCases))
		gen := make([]reference, len(bmCases))
		for k, c := range bmCases {
			vis[k], gen[k] = bmScale(studies, k, false), bmScale(studies, k, true)
			vis[k].dataset, vis[k].objective, vis[k].testCase = name, "visible", c.name
			gen[k].dataset, gen[k].objective, gen[k].testCase = name, "generalization", c.name
			refs = append(refs, vis[k], gen[k])
		}
		for j, i := range idx {
			runs[i].value, runs[i].genScore = bmScore(studies[j], vis, gen)
		}
	}
	return refs
}
