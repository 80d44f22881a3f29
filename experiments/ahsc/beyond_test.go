package ahsc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// syntheticBeyond is a stored result with a selections table of repeats whose Eq. 7 choice
// scores shift above the validation one (shift 0: the same configuration), and an
// evaluations table of trials whose Eq. 7 regularizer is the metric gap plus noise·N(0,1).
func syntheticBeyond(repeats int, shift, noise float64) *experiments.Result {
	rng := rand.New(rand.NewPCG(3, 4))
	sel := experiments.Table{Name: "selections", Columns: []string{"dataset", "repeat", "method", "zeta",
		"validation_config", "validation_test_metric", "eq7_config", "eq7_score", "eq7_test_metric", "same"}}
	for r := range repeats {
		v := 0.8 + 0.01*rng.NormFloat64()
		sel.Add("toy", r, "random", 0.1, "a", v, map[bool]string{true: "a", false: "b"}[shift == 0], 0.3, v+shift, shift == 0)
	}
	ev := experiments.Table{Name: "evaluations", Columns: append([]string{"dataset", "repeat", "method", "hidden", "call", "fidelity",
		"failed", "metric", "val_metric", "val_accuracy", "val_log_loss", "test_metric", "test_accuracy", "test_log_loss", "test_auc", "config"},
		whiteboxColumns...)}
	for i := range 40 {
		gap := rng.NormFloat64()
		row := []any{"toy", i % repeats, "random", false, i, 1.0, false, "accuracy", 0.8, 0.8, 0.5, 0.8 - gap, 0.8, 0.5, math.NaN(), "c"}
		row = append(row, 1.0+rng.Float64(), rng.NormFloat64(), 0.1, 4, rng.Float64(), 10, gap+noise*rng.NormFloat64(), 8, 3, 256,
			0.4, rng.NormFloat64(), gap, 0.01, "lanczos")
		ev.Add(row...)
	}
	return &experiments.Result{Experiment: "ahsc", Tables: []experiments.Table{sel, ev}}
}

// TestBeyondVerdict: the page says "no effect" where the rules return the same
// configurations and the signals are noise, and names the effect where Eq. 7's choices
// score higher on every repeat and the regularizer tracks the gap; its numbers are
// stats.MannWhitneyU's and stats.Spearman's on the tables' values.
func TestBeyondVerdict(t *testing.T) {
	none, err := BeyondMarkdown("cmd", StoredRun{ID: 1, Result: syntheticBeyond(10, 0, 1e6)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(none), "**Selection by Eq. 7: no effect.**") {
		t.Errorf("identical choices: %s", firstLines(none))
	}
	res := syntheticBeyond(10, 0.05, 0.01)
	md, err := BeyondMarkdown("cmd", StoredRun{ID: 2, Result: res})
	if err != nil {
		t.Fatal(err)
	}
	page := string(md)
	if !strings.Contains(page, "**Selection by Eq. 7: 1 of 1 dataset × method groups differ significantly**") ||
		!strings.Contains(page, "higher on 1, lower on 0") || !strings.Contains(page, "Eq. 7 regularizer with the gap (validation − test metric): ρ 1.00, significant and positive on 1 of 1 datasets") {
		t.Errorf("a clear effect: %s", firstLines(md))
	}
	sel := res.Table("selections")
	var val, eq7 []float64
	for i := range sel.Rows {
		val, eq7 = append(val, sel.Float(i, "validation_test_metric")), append(eq7, sel.Float(i, "eq7_test_metric"))
	}
	mw, err := stats.MannWhitneyU(eq7, val, stats.MannWhitneyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("| 10 | %s | %s | 0.050 [0.050, 0.050] | 10 | %s |", num(stats.Median(val), 4), num(stats.Median(eq7), 4), num(mw.P, 3)); !strings.Contains(page, want) {
		t.Errorf("the rules' row lacks %q:\n%s", want, page)
	}
	ev := res.Table("evaluations")
	var x, y []float64
	for i := range ev.Rows {
		x, y = append(x, ev.Float(i, "whitebox_mu")), append(y, ev.Float(i, "test_metric"))
	}
	sp, err := stats.Spearman(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("| toy | μ | test metric | 40 | %s [", num(sp.Rho, 2)); !strings.Contains(page, want) {
		t.Errorf("the μ row lacks %q", want)
	}
	// Without records there is no page.
	plain := &experiments.Result{Tables: []experiments.Table{{Name: "evaluations", Columns: []string{"dataset"}}}}
	if md, err := BeyondMarkdown("cmd", StoredRun{ID: 3, Result: plain}); md != nil || err != nil {
		t.Errorf("a run without records gave a page (%v)", err)
	}
}

func firstLines(b []byte) string {
	lines := strings.SplitN(string(b), "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], "\n")
}

// TestBeyondFromASmallRun: a quick --whitebox run of two methods gives beyond.md a row per
// method and a correlation row per signal and target.
func TestBeyondFromASmallRun(t *testing.T) {
	res := testRun(t, experiments.Options{Seed: 3, Workers: 1, DataDir: t.TempDir()},
		map[string]string{"dataset": "iris", "methods": "random,ahsc", "whitebox": "true", "zeta": "0.05"})
	if !strings.Contains(res.Answer, "By Eq. 7 (validation loss + 0.05 × regularizer) the searches return another configuration on ") {
		t.Errorf("the answer does not give the Eq. 7 rule's choices: %s", res.Answer)
	}
	md, err := BeyondMarkdown("hyperflat report --markdown docs/reproduction", StoredRun{ID: 1, Result: res})
	if err != nil || md == nil {
		t.Fatalf("no page: %v", err)
	}
	// A --whitebox run is the study's, not Table 1's: it would hide iris's six-method row.
	if cells, err := Table1Cells(StoredRun{ID: 1, Result: res}); err != nil || len(cells.Rows) != 0 {
		t.Errorf("Table 1 takes %d cells from a --whitebox run (%v), want none", len(cells.Rows), err)
	}
	page := string(md)
	for _, want := range []string{"| iris | random | 0.050 | 2 |", "| iris | ahsc | 0.050 | 2 |", "| iris | Eq. 7 regularizer | test metric |",
		"| iris | λ_max | validation − training loss |", "**Selection by Eq. 7:", "**Signals:",
		"Datasets: iris (1 of the study's 8); not yet run: breast, digits, wine, blood-transfusion, australian, credit-g, kc1, so the verdict"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}

// With 23 of 24 correlations clearly significant, the two-stage procedure called ρ's of p = 0.125
// significant (adjusted p 0.010). The signals are adjusted by plain Benjamini–Hochberg: never
// below their own p.
func TestBeyondCorrelationsAdjusted(t *testing.T) {
	rows := make([]corrRow, 24)
	for i := range rows {
		rows[i].p = 1e-6
	}
	rows[23].p = 0.125
	if err := adjustCorrs(rows); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.adjusted < r.p {
			t.Errorf("row %d: adjusted p %g below p %g", i, r.adjusted, r.p)
		}
	}
	if rows[23].adjusted < significance {
		t.Errorf("p = 0.125 adjusted to %g: significant", rows[23].adjusted)
	}
}
