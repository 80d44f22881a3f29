package freedman

import (
	"fmt"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// answer states the run's result for the terminal from its summary: which selection method
// reaches the lowest test MSE and which the highest, a row per method (test MSE over the
// repeats, features selected) and the legend of its marks.
func answer(cfg *Config, summary *experiments.Table) (string, *experiments.Table, []string) {
	groups := make([]stats.Group, len(cfg.Methods))
	selected := make([][]float64, len(cfg.Methods))
	for i, m := range cfg.Methods {
		groups[i].Name = m
		for r := range summary.Rows {
			if summary.String(r, "method") == m {
				groups[i].Values = append(groups[i].Values, summary.Float(r, "test_mse"))
				selected[i] = append(selected[i], summary.Float(r, "n_selected"))
			}
		}
	}
	best, separable := experiments.BestMarks(groups, false)
	format := experiments.Digits(3)
	view := &experiments.Table{Name: "answer", Columns: []string{"method", "test_mse", "features_selected", "n"}}
	var ranked []experiments.Ranked
	var sizes []int
	marked := false
	for i, g := range groups {
		v, ci := stats.Median(g.Values), experiments.BootCI(g.Values, stats.Median)
		cell := experiments.Interval(v, ci, format)
		if best[i] {
			cell = format(v) + "*" + cell[len(format(v)):]
			marked = true
		}
		k := stats.Median(selected[i])
		view.Add(g.Name, cell, experiments.Interval(k, experiments.BootCI(selected[i], stats.Median), experiments.Digits(0)), len(g.Values))
		ranked = append(ranked, experiments.Ranked{Name: g.Name, Value: v, CI: ci})
		sizes = append(sizes, len(g.Values))
	}
	power := experiments.PowerWords(sizes, "repeats")
	var overlap string
	if power != "" {
		overlap = experiments.OverlapWords(ranked, false)
	}
	if power == "" && separable && !marked {
		power = "no difference is significant (p < 0.05)"
	}
	where := fmt.Sprintf("by test MSE on the %s variant (%d features, lower is better)", cfg.Variant, cfg.Features)
	sentence := experiments.Sentence(where+", "+experiments.RankWords(ranked, false, format), power, overlap)
	var legend []string
	if marked {
		legend = append(legend, experiments.MarkLegend)
	}
	legend = append(legend, experiments.CILegend("median", "repeats", sizes))
	legend = append(legend, "features_selected: at the method's chosen step")
	return sentence, view, legend
}
