package ahsc

import (
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// TestNoMarkBelowFourRepeats: at 1 to 3 repeats per method the Mann–Whitney test cannot
// separate two methods, so no method is marked best, however far apart their results; at 5
// a method that beats every other on every repeat is marked, alone.
func TestNoMarkBelowFourRepeats(t *testing.T) {
	groups := func(n int) []stats.Group {
		var gs []stats.Group
		for k, name := range []string{"ahsc", "random", "tpe"} {
			g := stats.Group{Name: name}
			for i := range n {
				g.Values = append(g.Values, float64(100*k+i))
			}
			gs = append(gs, g)
		}
		return gs
	}
	for n := 1; n <= 3; n++ {
		for i, b := range bestGroups(groups(n)) {
			if b {
				t.Errorf("n = %d: method %d marked best", n, i)
			}
		}
	}
	if got := bestGroups(groups(5)); got[0] || got[1] || !got[2] {
		t.Errorf("n = 5: best = %v, want only tpe", got)
	}
}

func TestTheAnswerSaysNIsTooSmall(t *testing.T) {
	p := &problem{name: "wine", label: "score"}
	rows := []summaryRow{
		{dataset: "wine", method: "ahsc", label: "score", mean: 0, median: 0, n: 1, paper: 92.35},
		{dataset: "wine", method: "random", label: "score", mean: 95.12, median: 95.12, n: 1, paper: 76.59},
	}
	runs := []run{{dataset: "wine", method: "ahsc", value: 0, calls: 3}, {dataset: "wine", method: "random", value: 95.12, calls: 3}}
	sentence, view, legend := answer([]*problem{p}, rows, runs)
	for _, want := range []string{"On wine (score", "random ranks first (95.12) and ahsc last (0.00)", "n = 1 repeats is too few"} {
		if !strings.Contains(sentence, want) {
			t.Errorf("sentence lacks %q: %s", want, sentence)
		}
	}
	if got := view.String(0, "value"); got != "0.00" || view.String(0, "paper") != "92.35" {
		t.Errorf("ahsc's cells: value %q, paper %q", got, view.String(0, "paper"))
	}
	if strings.Contains(strings.Join(legend, ";"), "*") {
		t.Errorf("legend of a mark never used: %v", legend)
	}
	if l := strings.Join(legend, ";"); !strings.Contains(l, "no interval at n = 1") || strings.Contains(sentence, "intervals") {
		t.Errorf("n = 1 has no interval: legend %q, sentence %q", l, sentence)
	}
	// A user's table has no paper values: no paper column, no paper legend entry.
	rows[0].paper, rows[1].paper = math.NaN(), math.NaN()
	_, view, legend = answer([]*problem{p}, rows, runs)
	if view.Column("paper") >= 0 || strings.Contains(strings.Join(legend, ";"), "paper") {
		t.Errorf("paper column or legend on a user's data: %v, %v", view.Columns, legend)
	}
}

// sampleRows are a summary's rows and runs for per-method values on datasets of one label.
func sampleRows(label string, values map[string]map[string][]float64) ([]summaryRow, []run) {
	var rows []summaryRow
	var runs []run
	for _, d := range []string{"iris", "wine"} {
		for _, m := range []string{"ahsc", "random"} {
			vs, ok := values[d][m]
			if !ok {
				continue
			}
			rows = append(rows, summaryRow{dataset: d, method: m, label: label, median: stats.Median(vs),
				mean: stats.Mean(vs), n: len(vs), paper: math.NaN()})
			for i, v := range vs {
				runs = append(runs, run{dataset: d, method: m, repeat: i, value: v, calls: 5})
			}
		}
	}
	return rows, runs
}

// TestTheAnswerBootstrapsItsIntervals: at n = 3 the cells carry the bootstrap interval of
// the median, worked by hand (the resampled medians of three values are the smallest and the
// largest with probability 7/27 each, so the 95% interval runs from one to the other), the
// legend says so, and the sentence, whose test cannot separate the methods, says whether the
// first's and the last's intervals overlap.
func TestTheAnswerBootstrapsItsIntervals(t *testing.T) {
	if bootResamples != experiments.BootResamples || bootSeed != experiments.BootSeed {
		t.Fatalf("the answer's bootstrap settings differ from the report's %d resamples, seed %d", bootResamples, bootSeed)
	}
	p := &problem{name: "iris", label: "roc-auc"}
	rows, runs := sampleRows("roc-auc", map[string]map[string][]float64{
		"iris": {"ahsc": {0.94, 0.90, 0.92}, "random": {0.80, 0.84, 0.82}}})
	sentence, view, legend := answer([]*problem{p}, rows, runs)
	if got := view.String(0, "value"); got != "0.920 [0.900, 0.940]" {
		t.Errorf("ahsc's cell %q, want 0.920 [0.900, 0.940]", got)
	}
	if got := view.String(1, "value"); got != "0.820 [0.800, 0.840]" {
		t.Errorf("random's cell %q, want 0.820 [0.800, 0.840]", got)
	}
	for _, want := range []string{"ahsc ranks first (0.920) and random last (0.820)", "n = 3 repeats is too few",
		"the 95% intervals of ahsc and random do not overlap."} {
		if !strings.Contains(sentence, want) {
			t.Errorf("sentence lacks %q: %s", want, sentence)
		}
	}
	if l := strings.Join(legend, "; "); !strings.Contains(l, "value: median (score: mean) [95% bootstrap CI, 10,000 resamples]") {
		t.Errorf("legend: %s", l)
	}
	rows, runs = sampleRows("roc-auc", map[string]map[string][]float64{
		"iris": {"ahsc": {0.94, 0.90, 0.92}, "random": {0.85, 0.91, 0.93}}})
	if sentence, _, _ = answer([]*problem{p}, rows, runs); !strings.Contains(sentence, "of ahsc and random overlap.") {
		t.Errorf("[0.90, 0.94] and [0.85, 0.93]: %s", sentence)
	}
	// Two datasets at n = 2 (the resampled means of a and b are a, (a+b)/2 and b with ¼, ½ and
	// ¼, so the interval is [a, b]): apart on iris, overlapping on wine.
	rows, runs = sampleRows("score", map[string]map[string][]float64{
		"iris": {"ahsc": {90, 94}, "random": {80, 84}}, "wine": {"ahsc": {90, 94}, "random": {85, 90}}})
	ps := []*problem{p, {name: "wine", label: "score"}}
	sentence, view, _ = answer(ps, rows, runs)
	if got := view.String(2, "value"); got != "92.00 [90.00, 94.00]" {
		t.Errorf("ahsc's cell on wine %q", got)
	}
	if !strings.Contains(sentence, "the 95% intervals of ahsc and random overlap on 1 of 2 datasets.") {
		t.Errorf("two datasets: %s", sentence)
	}
}

func TestBudgetWords(t *testing.T) {
	for _, c := range []struct {
		calls map[string][]int
		want  string
	}{
		{map[string][]int{"ahsc": {3}, "random": {15}, "bohb": {65}}, "budgets differ: ahsc made 3 full evaluations, the others 15–65"},
		{map[string][]int{"ahsc": {15, 12}, "random": {45}}, "budgets differ: ahsc made 12–15 full evaluations, the others 45"},
		{map[string][]int{"ahsc": {15}, "random": {15}}, ""},
		{map[string][]int{"random": {15}, "tpe": {45}}, ""},
		{map[string][]int{"ahsc": {15}}, ""},
	} {
		if got := budgetWords(c.calls); got != c.want {
			t.Errorf("budgetWords(%v) = %q, want %q", c.calls, got, c.want)
		}
	}
}
