package premise

import (
	"fmt"
	"math"
	"slices"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// minSpearman is the fewest configurations at which an exact two-sided Spearman test can
// reach p < 0.05: with n pairs the most extreme ranking has probability 2/n!, 0.083 at 4 and
// 0.017 at 5.
const minSpearman = 5

// answer states the run's result for the terminal: which curvature measure predicts the test
// metric best (the most negative mean Spearman ρ: the lower the curvature, the better the
// configuration) and which worst, each with its 95% interval, whether any correlation is
// significant at this many configurations, a row per dataset × measure (ρ with its interval)
// and the legend of its marks.
func answer(cs []correlation) (string, *experiments.Table, []string) {
	format := experiments.Digits(2)
	view := &experiments.Table{Name: "answer", Columns: []string{"dataset", "measure", "rho_test", "rho_gap", "n"}}
	var names []string
	rhos := map[string][]float64{}
	cis := map[string]*stats.Interval{} // a measure's interval, where it was measured on one dataset
	marked, fewest, datasets := false, math.MaxInt, map[string]bool{}
	mark := func(r stats.SpearmanResult, ci *stats.Interval) string {
		s := format(r.Rho)
		if r.P < experiments.Significance {
			marked = true
			s += "*"
		}
		if ci != nil {
			s += " [" + format(ci.Low) + ", " + format(ci.High) + "]"
		}
		return s
	}
	for _, c := range cs {
		view.Add(c.dataset, c.measure, mark(c.test, c.testCI), mark(c.gap, c.gapCI), c.n)
		if !slices.Contains(names, c.measure) {
			names = append(names, c.measure)
		}
		if !math.IsNaN(c.test.Rho) {
			rhos[c.measure] = append(rhos[c.measure], c.test.Rho)
			cis[c.measure] = c.testCI
		}
		fewest = min(fewest, c.n)
		datasets[c.dataset] = true
	}
	if len(cs) == 0 {
		return "No dataset has usable configurations yet.", nil, nil
	}
	// One dataset: each measure's ρ with its pair-bootstrap interval. Several: the mean ρ over
	// the datasets with the bootstrap interval of that mean, the datasets resampled.
	var ranked []experiments.Ranked
	var sizes []int
	for _, m := range names {
		r := experiments.Ranked{Name: m, Value: math.NaN()}
		if len(rhos[m]) > 0 {
			r.Value = stats.Mean(rhos[m])
			r.CI = cis[m]
			if len(datasets) > 1 {
				r.CI = experiments.BootCI(rhos[m], stats.Mean)
			}
		}
		ranked = append(ranked, r)
		sizes = append(sizes, len(rhos[m]))
	}
	where := "by Spearman ρ with the test metric (the premise wants it negative)"
	if len(datasets) > 1 {
		where = fmt.Sprintf("by mean Spearman ρ with the test metric over %d datasets (the premise wants it negative)", len(datasets))
	}
	var power string
	switch {
	case fewest < minSpearman:
		power = fmt.Sprintf("n = %d configurations is too few for significance (an exact Spearman test needs %d for p < %g)",
			fewest, minSpearman, experiments.Significance)
	case !marked:
		power = "no correlation is significant (p < 0.05)"
	}
	sentence := experiments.Sentence(where+", "+rankWords(ranked, format), power)
	legend := []string{"rho_test, rho_gap: Spearman ρ with the test metric and the train−test gap, in brackets its " + ciWords}
	if len(datasets) > 1 {
		legend = append(legend, experiments.CILegend("the sentence's ρ: mean", "datasets", sizes))
	}
	if marked {
		legend = append([]string{"* p < 0.05"}, legend...)
	}
	return sentence, view, legend
}

// ciWords says how a ρ's interval is made, for the legend and premise.md.
var ciWords = fmt.Sprintf("pair-bootstrap 95%% interval (the configurations resampled with replacement and ρ recomputed, "+
	"%d resamples from seed %d, percentile method: stats.SpearmanBootstrap)", experiments.BootResamples, experiments.BootSeed)

// rankWords is experiments.RankWords with each of the two named values followed by its
// interval where it has one: "mu ranks first (-0.35 [-0.55, -0.11]) and …".
func rankWords(ranked []experiments.Ranked, format func(float64) string) string {
	first, last, ok := experiments.Extremes(ranked, false)
	if !ok || first.Value == last.Value {
		return experiments.RankWords(ranked, false, format)
	}
	return fmt.Sprintf("%s ranks first (%s) and %s last (%s)", first.Name, experiments.Interval(first.Value, first.CI, format),
		last.Name, experiments.Interval(last.Value, last.CI, format))
}
