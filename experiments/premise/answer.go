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
// configuration) and which worst, whether any correlation is significant at this many
// configurations, a row per dataset × measure and the legend of its marks.
func answer(cs []correlation) (string, *experiments.Table, []string) {
	format := experiments.Digits(2)
	view := &experiments.Table{Name: "answer", Columns: []string{"dataset", "measure", "rho_test", "rho_gap", "n"}}
	var names []string
	rhos := map[string][]float64{}
	marked, fewest, datasets := false, math.MaxInt, map[string]bool{}
	mark := func(r stats.SpearmanResult) string {
		if r.P < experiments.Significance {
			marked = true
			return format(r.Rho) + "*"
		}
		return format(r.Rho)
	}
	for _, c := range cs {
		view.Add(c.dataset, c.measure, mark(c.test), mark(c.gap), c.n)
		if !slices.Contains(names, c.measure) {
			names = append(names, c.measure)
		}
		if !math.IsNaN(c.test.Rho) {
			rhos[c.measure] = append(rhos[c.measure], c.test.Rho)
		}
		fewest = min(fewest, c.n)
		datasets[c.dataset] = true
	}
	if len(cs) == 0 {
		return "No dataset has usable configurations yet.", nil, nil
	}
	var ranked []experiments.Ranked
	for _, m := range names {
		v := math.NaN()
		if len(rhos[m]) > 0 {
			v = stats.Mean(rhos[m])
		}
		ranked = append(ranked, experiments.Ranked{Name: m, Value: v})
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
	sentence := experiments.Sentence(where+", "+experiments.RankWords(ranked, false, format), power)
	legend := []string{"rho_test, rho_gap: Spearman ρ with the test metric and the train−test gap"}
	if marked {
		legend = append([]string{"* p < 0.05"}, legend...)
	}
	return sentence, view, legend
}
