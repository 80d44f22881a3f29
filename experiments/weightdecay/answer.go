package weightdecay

import (
	"fmt"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// answer states the run's result for the terminal: which of Table C.1's methods reaches the
// best mean final test accuracy and which the worst, whether the differences can be
// significant at this many replicates, a row per method and the legend of its marks. The
// final-model reading of the heuristic is one classifier, so it takes no part in the test.
func answer(cfg *Config, p *pair) (string, *experiments.Table, []string) {
	rows := p.rows()
	var groups []stats.Group
	var tested []int
	for i, r := range rows {
		if len(r.test) > 0 && r.method != methodFinal {
			groups = append(groups, stats.Group{Name: r.method, Values: r.test})
			tested = append(tested, i)
		}
	}
	best, separable := experiments.BestMarks(groups, true)
	marks := make([]bool, len(rows))
	marked := false
	var sizes []int
	for k, i := range tested {
		marks[i] = best[k]
		marked = marked || best[k]
		sizes = append(sizes, len(groups[k].Values))
	}
	format := experiments.Digits(3)
	view := &experiments.Table{Name: "answer", Columns: []string{"method", "reading", "test_acc", "val_acc", "n"}}
	var ranked []experiments.Ranked
	var shown []int
	for i, r := range rows {
		if len(r.test) == 0 {
			continue
		}
		m, ci := stats.Mean(r.test), experiments.BootCI(r.test, stats.Mean)
		cell := experiments.Interval(m, ci, format)
		if marks[i] {
			cell = format(m) + "*" + cell[len(format(m)):]
		}
		shown = append(shown, len(r.test))
		view.Add(r.method, r.reading, cell, format(stats.Mean(r.val)), len(r.test))
		ranked = append(ranked, experiments.Ranked{Name: r.method, Value: m, CI: ci})
	}
	where := fmt.Sprintf("by mean final test accuracy (%s on %s, %d ζ)", cfg.Model, cfg.Dataset, len(cfg.Zetas))
	power := experiments.PowerWords(sizes, "replicates")
	var overlap string
	if power != "" {
		overlap = experiments.OverlapWords(ranked, true)
	}
	if power == "" && separable && !marked {
		power = "no difference is significant (p < 0.05)"
	}
	sentence := experiments.Sentence(where+", "+experiments.RankWords(ranked, true, format), power, overlap)
	var legend []string
	if marked {
		legend = append(legend, experiments.MarkLegend)
	}
	legend = append(legend, experiments.CILegend("test_acc: mean", "replicates", shown))
	legend = append(legend, "oracle: ζ picked on the test set (the paper's way)")
	return sentence, view, legend
}
