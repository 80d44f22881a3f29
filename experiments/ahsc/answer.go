package ahsc

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// answer states the run's result for the terminal: a sentence (which method ranks first and
// last, and whether the differences can be significant at this many repeats), the table of
// one row per method (per dataset where there are several) and the legend of its marks. The
// numbers are the summary's; the marks are Table 1's (bestGroups, which marks nothing when n
// is too small for the test).
func answer(problems []*problem, rows []summaryRow, runs []run) (string, *experiments.Table, []string) {
	single := len(problems) == 1
	paper := slices.ContainsFunc(rows, func(r summaryRow) bool { return !math.IsNaN(r.paper) })
	cols := []string{"dataset", "method", "metric", "value", "paper", "n", "evaluations", "seconds"}
	if single {
		cols = cols[1:]
		cols = slices.Delete(cols, 1, 2) // the sentence names the dataset and its metric
	}
	if !paper {
		cols = slices.DeleteFunc(cols, func(c string) bool { return c == "paper" })
	}
	view := &experiments.Table{Name: "answer", Columns: cols}
	marked := false
	var sizes []int
	var ranked []experiments.Ranked
	bestOn := map[string]int{}
	ranks := map[string][]float64{}
	cis := map[string]map[string]*stats.Interval{} // dataset → method → interval
	callsOf := map[string][]int{}                  // method → its calls per dataset
	for _, p := range problems {
		var vals []float64
		var names []string
		// A mark on every method of a dataset says nothing: none is significantly worse.
		everyBest := !slices.ContainsFunc(rows, func(r summaryRow) bool { return r.dataset == p.name && !r.best })
		for _, r := range rows {
			if r.dataset != p.name {
				continue
			}
			v, prec := headlineValue(r)
			format := experiments.Digits(prec)
			sample, calls := runSample(runs, r)
			ci := experiments.BootCI(sample, headlineStat(r))
			if cis[r.dataset] == nil {
				cis[r.dataset] = map[string]*stats.Interval{}
			}
			cis[r.dataset][r.method] = ci
			cell := experiments.Interval(v, ci, format)
			if r.best && r.n > 0 && !everyBest {
				cell = format(v) + "*" + cell[len(format(v)):]
				marked = true
				bestOn[r.method]++
			}
			sizes = append(sizes, r.n)
			callsOf[r.method] = append(callsOf[r.method], calls)
			cells := map[string]any{"dataset": r.dataset, "method": r.method, "metric": r.label, "value": cell,
				"paper": format(r.paper), "n": r.n, "evaluations": calls, "seconds": strconv.FormatFloat(r.seconds, 'g', 3, 64)}
			if math.IsNaN(r.paper) {
				cells["paper"] = ""
			}
			row := make([]any, len(cols))
			for k, c := range cols {
				row[k] = cells[c]
			}
			view.Add(row...)
			if single {
				ranked = append(ranked, experiments.Ranked{Name: r.method, Value: v, CI: ci})
			}
			if !math.IsNaN(v) {
				vals, names = append(vals, v), append(names, r.method)
			}
		}
		for k, rk := range descendingRanks(vals) {
			ranks[names[k]] = append(ranks[names[k]], rk)
		}
	}
	var where, order string
	if single {
		p := problems[0]
		where = fmt.Sprintf("on %s (%s, higher is better)", p.name, p.label)
		order = experiments.RankWords(ranked, true, func(x float64) string {
			_, prec := headlineValue(summaryRow{label: p.label})
			return experiments.Digits(prec)(x)
		})
	} else {
		for _, r := range rows {
			if rs, ok := ranks[r.method]; ok && !slices.ContainsFunc(ranked, func(x experiments.Ranked) bool { return x.Name == r.method }) {
				ranked = append(ranked, experiments.Ranked{Name: r.method, Value: stats.Mean(rs)})
			}
		}
		where = fmt.Sprintf("over %d datasets, by mean rank (1 is best)", len(problems))
		order = experiments.RankWords(ranked, false, experiments.Digits(1))
	}
	power := experiments.PowerWords(sizes, "repeats")
	overlap := overlapWords(power != "", single, ranked, problems, cis)
	if power == "" {
		power = markWords(marked, single, bestOn["ahsc"], len(problems))
	}
	sentence := experiments.Sentence(where+", "+order, power, overlap, budgetWords(callsOf))
	var legend []string
	if marked {
		legend = append(legend, experiments.MarkLegend)
	}
	legend = append(legend, experiments.CILegend("value: median (score: mean)", "repeats", sizes))
	if paper {
		legend = append(legend, "paper: AHSC paper, Table 1")
	}
	return sentence, view, legend
}

// overlapWords says, when the repeats are too few for the test, whether the intervals of the
// first and last methods overlap (on how many datasets, when there are several).
func overlapWords(tooFew, single bool, ranked []experiments.Ranked, problems []*problem, cis map[string]map[string]*stats.Interval) string {
	switch {
	case !tooFew:
		return ""
	case single:
		return experiments.OverlapWords(ranked, true)
	}
	return overlapCount(ranked, problems, cis)
}

// markWords says what the marks show when the repeats can separate methods.
func markWords(marked, single bool, ahscBest, datasets int) string {
	switch {
	case !marked:
		return "no difference is significant (p < 0.05)"
	case single:
		return "* marks the methods no other beats significantly"
	}
	return fmt.Sprintf("ahsc is marked * (not significantly beaten) on %d of %d datasets", ahscBest, datasets)
}

// budgetWords says, when AHSC's count of full evaluations differs from the other methods', that
// the comparison is at unequal budgets: a reader comparing the values must know it (report's
// Equal budgets table rescores every method at AHSC's count).
func budgetWords(callsOf map[string][]int) string {
	own, ok := callsOf["ahsc"]
	if !ok {
		return ""
	}
	lo, hi := math.MaxInt, 0
	for m, cs := range callsOf {
		if m == "ahsc" {
			continue
		}
		for _, c := range cs {
			lo, hi = min(lo, c), max(hi, c)
		}
	}
	alo, ahi := slices.Min(own), slices.Max(own)
	if hi == 0 || (alo == lo && ahi == hi) {
		return ""
	}
	span := func(a, b int) string {
		if a == b {
			return strconv.Itoa(a)
		}
		return fmt.Sprintf("%d–%d", a, b)
	}
	return fmt.Sprintf("budgets differ: ahsc made %s full evaluations, the others %s", span(alo, ahi), span(lo, hi))
}

// headlineValue is the value Table 1 prints for a summary row and its decimals: the median,
// or the mean for a Bayesmark score (as the paper's cells are).
func headlineValue(r summaryRow) (float64, int) {
	prec := 2
	if r.label == "roc-auc" || r.label == "accuracy" {
		prec = 3
	}
	if r.label == "score" {
		return r.mean, prec
	}
	return r.median, prec
}

// headlineStat is the statistic headlineValue takes of a summary row's runs: the mean of
// Bayesmark scores, the median otherwise.
func headlineStat(r summaryRow) func([]float64) float64 {
	if r.label == "score" {
		return stats.Mean
	}
	return stats.Median
}

// overlapCount says, over several datasets, on how many the 95% intervals of the methods
// ranked first and last by mean rank overlap, among those where both have one: "" when
// none has two (a single repeat) or the two tie.
func overlapCount(ranked []experiments.Ranked, problems []*problem, cis map[string]map[string]*stats.Interval) string {
	first, last, ok := experiments.Extremes(ranked, false)
	if !ok || first.Value == last.Value {
		return ""
	}
	both, overlap := 0, 0
	for _, p := range problems {
		a, b := cis[p.name][first.Name], cis[p.name][last.Name]
		if a == nil || b == nil {
			continue
		}
		both++
		if experiments.Overlap(*a, *b) {
			overlap++
		}
	}
	if both == 0 {
		return ""
	}
	return fmt.Sprintf("the 95%% intervals of %s and %s overlap on %d of %d datasets", first.Name, last.Name, overlap, both)
}

// runSample returns the values a summary row summarizes and the mean objective calls per run.
func runSample(runs []run, s summaryRow) ([]float64, int) {
	var sample []float64
	calls, n := 0, 0
	for _, r := range runs {
		if r.dataset != s.dataset || r.method != s.method || r.hidden {
			continue
		}
		calls, n = calls+r.calls, n+1
		if !math.IsNaN(r.value) {
			sample = append(sample, r.value)
		}
	}
	if n == 0 {
		return sample, 0
	}
	return sample, int(math.Round(float64(calls) / float64(n)))
}

// descendingRanks ranks values from the largest (1), ties sharing their mean rank.
func descendingRanks(vals []float64) []float64 {
	out := make([]float64, len(vals))
	for i, v := range vals {
		above, same := 0, 0
		for _, w := range vals {
			switch {
			case w > v:
				above++
			case w == v:
				same++
			}
		}
		out[i] = float64(above) + float64(same+1)/2
	}
	return out
}
