package ahsc

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// Budgets. Table 1 compares methods that made different numbers of calls of the objective:
// under --protocol authors AHSC trains N2 = 15 finalists on the Bayesmark sets where every
// baseline makes its budget of 45 calls, as in the authors' code and the paper. A search's
// Bayesmark perf at call k is its cumulative best at k, and a black-box search's selection
// at call k is the best of its first k calls, so every method can be scored at AHSC's count
// from the stored evaluations, nothing retrained: the equal-budget table. Bayesmark's opt
// and clip are then recomputed from the truncated evaluations, as Bayesmark would compute
// them had every method made k calls. The authors' own pooling (bbo_challenge's
// *_stcvx_min runs: AHSC and random search only, 15 calls each, scored in one pool) is
// the other view.

// storedSearches rebuilds the searches of dataset (every method and repeat, Bayesmark's
// hidden random reference included) from a stored result's evaluations table, each with its
// evaluations in call order; nil when the result has no such table.
func storedSearches(res *experiments.Result, dataset string) []run {
	t := res.Table("evaluations")
	if t == nil {
		return nil
	}
	type key struct {
		repeat int
		method string
		hidden bool
	}
	idx := map[key]int{}
	var out []run
	for i := range t.Rows {
		if t.String(i, "dataset") != dataset {
			continue
		}
		k := key{t.Int(i, "repeat"), t.String(i, "method"), isTrue(t.Value(i, "hidden"))}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, run{dataset: dataset, group: groupOf(dataset), repeat: k.repeat, method: k.method, hidden: k.hidden,
				value: math.NaN(), genScore: math.NaN()})
		}
		out[j].evals = append(out[j].evals, eval{config: t.String(i, "config"), fidelity: t.Float(i, "fidelity"), failed: isTrue(t.Value(i, "failed")),
			valMetric: t.Float(i, "val_metric"), valLoss: t.Float(i, "val_log_loss"), testMetric: t.Float(i, "test_metric"),
			testAcc: t.Float(i, "test_accuracy"), testNLL: t.Float(i, "test_log_loss")})
	}
	return out
}

// fullCount is the number of full-fidelity calls of r (failed ones included: they spend the
// budget): the calls Bayesmark scores and Table 1's evaluation count.
func (r run) fullCount() int { return len(fullEvals(r.evals)) }

// truncated is r as it stood after its first k full-fidelity calls (lower fidelities before
// the k-th kept), its scores unset.
func (r run) truncated(k int) run {
	out := r
	out.evals = nil
	out.value, out.genScore = math.NaN(), math.NaN()
	n := 0
	for _, e := range r.evals {
		if n == k {
			break
		}
		out.evals = append(out.evals, e)
		if e.fullFidelity() {
			n++
		}
	}
	return out
}

// selectedValue is what Table 1 reports of a search outside Bayesmark: the test metric of the
// configuration it selects, the full-fidelity call of greatest finite validation metric, the
// earliest among equals (search.Best on minus the metric), in % on the images; NaN when no
// call succeeded.
func (r run) selectedValue() float64 {
	best := -1
	for i, e := range r.evals {
		if !e.fullFidelity() || e.failed || math.IsNaN(e.valMetric) || math.IsInf(e.valMetric, 0) {
			continue
		}
		if best < 0 || -e.valMetric < -r.evals[best].valMetric {
			best = i
		}
	}
	if best < 0 {
		return math.NaN()
	}
	if r.group == image {
		return 100 * r.evals[best].testMetric
	}
	return r.evals[best].testMetric
}

// scoreSearches fills every search's value (and Bayesmark's generalization score) as Table 1
// scores it: on a Bayesmark set, in one pool of every search given.
func scoreSearches(runs []run) {
	if len(runs) > 0 && runs[0].group == bayesmark {
		bayesmarkScores(runs)
		return
	}
	for i := range runs {
		runs[i].value = runs[i].selectedValue()
	}
}

// budgetCell is one dataset × method of a re-scored table: per-repeat values (visible score,
// or the selected test metric) and generalization scores, and the calls each search made.
type budgetCell struct {
	dataset, proto, method, metric string
	values, gen                    []float64
	repeats                        []int // the repeat of each value
	calls                          []int // full-fidelity calls per search, after truncation
	best                           bool
	paper                          float64
	run                            int64
}

// budgetTable is a re-scored Table 1: its cells in Table 1's order, and the budget k each
// dataset was scored at.
type budgetTable struct {
	cells []budgetCell
	k     map[[2]string]int // dataset, protocol → calls
}

// ahscCalls is the most full-fidelity calls an "ahsc" search of runs made; 0 without one.
func ahscCalls(runs []run) int {
	k := 0
	for _, r := range runs {
		if r.method == "ahsc" && !r.hidden {
			k = max(k, r.fullCount())
		}
	}
	return k
}

// rescore truncates every search of runs that keep accepts to k calls (k ≤ 0: none), scores
// them in one pool and collects the visible searches per method, in the order of methods.
func rescore(runs []run, k int, keep func(run) bool, methods []string) map[string]*budgetCell {
	var use []run
	for _, r := range runs {
		if !keep(r) {
			continue
		}
		if k > 0 {
			r = r.truncated(k)
		}
		use = append(use, r)
	}
	scoreSearches(use)
	cells := map[string]*budgetCell{}
	for _, r := range use {
		if r.hidden {
			continue
		}
		c := cells[r.method]
		if c == nil {
			c = &budgetCell{method: r.method}
			cells[r.method] = c
		}
		c.calls = append(c.calls, r.fullCount())
		if !math.IsNaN(r.value) {
			c.values = append(c.values, r.value)
			c.repeats = append(c.repeats, r.repeat)
		}
		if !math.IsNaN(r.genScore) {
			c.gen = append(c.gen, r.genScore)
		}
	}
	groups := make([]stats.Group, 0, len(methods))
	var present []string
	for _, m := range methods {
		if c := cells[m]; c != nil {
			groups = append(groups, stats.Group{Name: m, Values: c.values})
			present = append(present, m)
		}
	}
	for i, b := range bestGroups(groups) {
		cells[present[i]].best = b
	}
	return cells
}

// budgetTables re-scores the stored runs behind Table 1's cells t: every method at AHSC's
// count of calls on each dataset (equal), and on the Bayesmark sets AHSC and random search
// alone, at AHSC's count, pooled together (authors). A dataset without AHSC, or whose run
// has no evaluations table, is left out of both.
func budgetTables(t experiments.Table, runs []StoredRun) (equal, authors budgetTable, err error) {
	byID := map[int64]*experiments.Result{}
	for _, sr := range runs {
		byID[sr.ID] = sr.Result
	}
	equal.k, authors.k = map[[2]string]int{}, map[[2]string]int{}
	type dp struct{ d, proto string }
	var order []dp
	methodsOf := map[dp][]string{}
	runOf := map[dp]int64{}
	metricOf := map[dp]string{}
	for i := range t.Rows {
		k := dp{t.String(i, "dataset"), t.String(i, "protocol")}
		if _, ok := runOf[k]; !ok {
			order = append(order, k)
		}
		runOf[k] = int64(t.Int(i, "run"))
		metricOf[k] = t.String(i, "metric")
		methodsOf[k] = append(methodsOf[k], t.String(i, "method"))
	}
	for _, k := range order {
		res := byID[runOf[k]]
		if res == nil {
			return equal, authors, fmt.Errorf("ahsc: Table 1's run %d of %s is not among the runs", runOf[k], k.d)
		}
		searches := storedSearches(res, k.d)
		calls := ahscCalls(searches)
		if calls == 0 {
			continue
		}
		add := func(bt *budgetTable, cells map[string]*budgetCell, methods []string) {
			bt.k[[2]string{k.d, k.proto}] = calls
			for _, m := range methods {
				if c := cells[m]; c != nil {
					c.dataset, c.proto, c.metric, c.run = k.d, k.proto, metricOf[k], runOf[k]
					c.paper = math.NaN()
					if v, ok := paperTable1[k.d][m]; ok {
						c.paper = v
					}
					bt.cells = append(bt.cells, *c)
				}
			}
		}
		all := func(run) bool { return true }
		if err := checkRescore(res, k.d, rescore(searches, 0, all, methodsOf[k])); err != nil {
			return equal, authors, fmt.Errorf("ahsc: run %d: %w", runOf[k], err)
		}
		add(&equal, rescore(searches, calls, all, methodsOf[k]), methodsOf[k])
		if groupOf(k.d) == bayesmark {
			pair := []string{"ahsc", "random"}
			two := func(r run) bool { return !r.hidden && slices.Contains(pair, r.method) }
			add(&authors, rescore(searches, calls, two, pair), pair)
		}
	}
	return equal, authors, nil
}

// checkRescore checks that the searches of dataset, re-scored from their stored evaluations
// at full length (cells), give the values the run stored: otherwise the evaluations do not
// hold what the scores were computed from, and a truncated re-score could not be trusted.
func checkRescore(res *experiments.Result, dataset string, cells map[string]*budgetCell) error {
	t := res.Table("runs")
	if t == nil {
		return nil
	}
	for i := range t.Rows {
		if t.String(i, "dataset") != dataset {
			continue
		}
		m, rep, want := t.String(i, "method"), t.Int(i, "repeat"), t.Float(i, "value")
		got := math.NaN()
		if c := cells[m]; c != nil {
			if k := slices.Index(c.repeats, rep); k >= 0 {
				got = c.values[k]
			}
		}
		if math.IsNaN(want) && math.IsNaN(got) {
			continue
		}
		if !(math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))) {
			return fmt.Errorf("%s, repeat %d, %s: the stored evaluations re-score to %v, the run stored %v", dataset, rep, m, got, want)
		}
	}
	return nil
}

// shown is the cell's value as Table 1 shows it: the mean for Bayesmark scores, the median
// otherwise.
func (c budgetCell) shown() float64 {
	if c.metric == "score" {
		return stats.Mean(c.values)
	}
	return stats.Median(c.values)
}

// cell finds the table's cell of dataset, protocol and method.
func (bt budgetTable) cell(d, proto, m string) (budgetCell, bool) {
	for _, c := range bt.cells {
		if c.dataset == d && c.proto == proto && c.method == m {
			return c, true
		}
	}
	return budgetCell{}, false
}

// Bootstrap settings of every interval the report prints: percentile intervals at 95% of
// bootResamples resamples from the seed bootSeed (stats.Bootstrap).
const (
	bootResamples = 10000
	bootSeed      = 1
)

// ciOf is the bootstrap 95% interval of stat over xs; NaN ends for no values.
func ciOf(xs []float64, stat func([]float64) float64) stats.Interval {
	iv, err := stats.Bootstrap(xs, stat, stats.BootstrapOptions{Resamples: bootResamples, Seed: bootSeed})
	if err != nil {
		return stats.Interval{Low: math.NaN(), High: math.NaN()}
	}
	return iv
}

// repeatValues are a method's per-repeat values, generalization scores and seconds on
// dataset in a stored result's runs table (those that are numbers: the summary's n).
func repeatValues(res *experiments.Result, dataset, method string) (values, gen, seconds []float64) {
	t := res.Table("runs")
	if t == nil {
		return nil, nil, nil
	}
	for i := range t.Rows {
		if t.String(i, "dataset") != dataset || t.String(i, "method") != method {
			continue
		}
		if v := t.Float(i, "value"); !math.IsNaN(v) {
			values = append(values, v)
		}
		if v := t.Float(i, "generalization_score"); !math.IsNaN(v) {
			gen = append(gen, v)
		}
		if v := t.Float(i, "seconds"); !math.IsNaN(v) {
			seconds = append(seconds, v)
		}
	}
	return values, gen, seconds
}

// callRange is the least and most full-fidelity calls a method's visible searches made
// (0, 0 without any).
func callRange(runs []run, method string) (lo, hi int) {
	found := false
	for _, r := range runs {
		if r.method != method || r.hidden {
			continue
		}
		n := r.fullCount()
		if !found || n < lo {
			lo = n
		}
		hi, found = max(hi, n), true
	}
	return lo, hi
}

// table is the re-scored cells in Table1Cells' layout, so that Table 1's renderers and
// reading apply to them.
func (bt budgetTable) table() experiments.Table {
	t := experiments.Table{Name: "table1_budget", Columns: []string{"dataset", "protocol", "method", "metric", "mean", "median", "paper", "best", "n",
		"generalization_mean", "generalization_median", "run", "mean_ci_low", "mean_ci_high", "median_ci_low", "median_ci_high",
		"generalization_mean_ci_low", "generalization_mean_ci_high", "generalization_median_ci_low", "generalization_median_ci_high",
		"evaluations_min", "evaluations_max"}}
	for _, c := range bt.cells {
		mean, median := ciOf(c.values, stats.Mean), ciOf(c.values, stats.Median)
		gMean, gMedian := ciOf(c.gen, stats.Mean), ciOf(c.gen, stats.Median)
		lo, hi := 0, 0
		for i, n := range c.calls {
			if i == 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
		t.Add(c.dataset, c.proto, c.method, c.metric, stats.Mean(c.values), stats.Median(c.values), c.paper, c.best, len(c.values),
			stats.Mean(c.gen), stats.Median(c.gen), c.run, mean.Low, mean.High, median.Low, median.High,
			gMean.Low, gMean.High, gMedian.Low, gMedian.High, lo, hi)
	}
	return t
}

// writeBudgetSections writes the equal-budget tables (eq, every method at AHSC's count of
// calls) and the authors' pooling (au) after Table 1's own tables t.
func writeBudgetSections(b *bytes.Buffer, t, eq experiments.Table, au budgetTable, runs []StoredRun) {
	if len(eq.Rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Equal budgets: every method at AHSC's count of calls\n\n"+
		"The tables above compare searches of different lengths: a cell states its calls (full-fidelity evaluations per search; "+
		"BOHB's lower rungs and AHSC's one-epoch screenings are not counted, as Bayesmark does not count them). Here every search of "+
		"the same stored run is cut to its first k calls, k the calls AHSC made on that dataset, and scored again; nothing is retrained. "+
		"On the Bayesmark sets a search's perf at call k is its cumulative best at k, and opt and clip are recomputed from the "+
		"truncated evaluations of every method in one pool, as Bayesmark would compute them had every method made k calls (so AHSC's "+
		"own score moves too); elsewhere a search selects the configuration of best validation metric among its first k calls and "+
		"reports its test metric. Intervals as above; bold by the same test.\n")
	for _, proto := range []string{protocolAuthors, protocolClean} {
		layoutRows(b, eq, proto, "### Equal budgets, protocol "+proto, func(string) bool { return true },
			func(d string) string { return reducedLabel(t, runs, d, proto) })
	}
	if len(au.cells) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## The authors' pooling: AHSC and random search alone\n\n"+
		"The authors scored their Bayesmark AHSC in runs of AHSC and random search only, 15 calls each, one pool "+
		"(bbo_challenge/results/*_stcvx_min in yrahul3910/flatness-guided-hpo); the paper's other columns come from other runs and "+
		"pools. Here AHSC's and random search's searches of the run above, random search cut to AHSC's calls, scored in a pool of "+
		"their own: Bayesmark's mean score [bootstrap 95%% interval] over the repeats, and the paper's values.\n\n"+
		"| dataset | protocol | calls | ahsc | random | ahsc − random | paper: ahsc | paper: random |\n|---|---|---|---|---|---|---|---|\n")
	for _, proto := range []string{protocolAuthors, protocolClean} {
		for _, d := range bayesmarkSets {
			a, okA := au.cell(d, proto, "ahsc")
			r, okR := au.cell(d, proto, "random")
			if !okA || !okR {
				continue
			}
			diff := paired(a, r)
			fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", d, proto, au.k[[2]string{d, proto}],
				num(a.shown(), 2)+ivText(ciOf(a.values, stats.Mean), 2), num(r.shown(), 2)+ivText(ciOf(r.values, stats.Mean), 2),
				signed(stats.Mean(diff), 2)+ivText(ciOf(diff, stats.Mean), 2), num(a.paper, 2), num(r.paper, 2))
		}
	}
	b.WriteString("\nahsc − random: the mean over the repeats of AHSC's score minus random search's on the same repeat (same split and " +
		"initial weights), with its interval; an interval above 0 is AHSC better on this pooling.\n")
}

// paired is a's values minus b's, repeat by repeat, over the repeats both have a value of.
func paired(a, b budgetCell) []float64 {
	of := map[int]float64{}
	for i, r := range b.repeats {
		of[r] = b.values[i]
	}
	var d []float64
	for i, r := range a.repeats {
		if v, ok := of[r]; ok {
			d = append(d, a.values[i]-v)
		}
	}
	return d
}

func signed(v float64, prec int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// Table1BudgetCells are the equal-budget cells (every method at AHSC's count of calls) and
// the authors' pooling (AHSC and random search alone) of the stored runs, in Table1Cells'
// columns, for table1_equal_budget.csv and table1_authors_pooling.csv.
func Table1BudgetCells(runs ...StoredRun) (equal, authors experiments.Table, err error) {
	t, err := Table1Cells(runs...)
	if err != nil {
		return equal, authors, err
	}
	eq, au, err := budgetTables(t, runs)
	if err != nil {
		return equal, authors, err
	}
	equal, authors = eq.table(), au.table()
	equal.Name, authors.Name = "table1_equal_budget", "table1_authors_pooling"
	return equal, authors, nil
}
