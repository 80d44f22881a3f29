package ahsc

import (
	"math"
	"strings"
	"testing"

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
	// A user's table has no paper values: no paper column, no paper legend entry.
	rows[0].paper, rows[1].paper = math.NaN(), math.NaN()
	_, view, legend = answer([]*problem{p}, rows, runs)
	if view.Column("paper") >= 0 || strings.Contains(strings.Join(legend, ";"), "paper") {
		t.Errorf("paper column or legend on a user's data: %v, %v", view.Columns, legend)
	}
}
