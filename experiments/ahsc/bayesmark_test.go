package ahsc

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// TestBayesmarkScoreByHand scores a hand-made set of calls, worked out by hand as Bayesmark's
// experiment_baseline.py and experiment_analysis.py would: opt and clip pooled over every
// method and trial, clip the ⌈n/2⌉-th smallest of the random calls (a failed one the worst),
// perf the cumulative best at the last call, clipping at 1 (−1 is out of reach once opt is
// pooled from the same calls; normalized is checked there directly).
func TestBayesmarkScoreByHand(t *testing.T) {
	// ev: visible CV accuracy and log loss, then test accuracy and log loss.
	ev := func(va, vl, ta, tl float64) eval {
		return eval{fidelity: 1, valMetric: va, valLoss: vl, testAcc: ta, testNLL: tl}
	}
	rung := eval{fidelity: 0.2, valMetric: 1, valLoss: 0.01, testAcc: math.NaN(), testNLL: math.NaN()}
	failed := eval{fidelity: 1, failed: true, valMetric: math.NaN(), valLoss: math.NaN(), testAcc: math.NaN(), testNLL: math.NaN()}
	runs := []run{
		{dataset: "iris", group: bayesmark, method: "random", repeat: 0, evals: []eval{ev(0.8, 0.5, 0.7, 0.6), ev(0.9, 0.4, 0.8, 0.5), failed}},
		{dataset: "iris", group: bayesmark, method: "random", repeat: 1, evals: []eval{ev(0.7, 0.7, 0.9, 0.3), ev(0.9, 0.6, 0.6, 0.8)}},
		// A tie in visible accuracy: the later call's test loss counts (np_util.cummin).
		{dataset: "iris", group: bayesmark, method: "ahsc", repeat: 0, evals: []eval{ev(0.95, 0.3, 0.85, 0.45), ev(0.95, 0.35, 0.9, 0.4)}},
		{dataset: "iris", group: bayesmark, method: "tpe", repeat: 0, evals: []eval{ev(0.6, 1.2, 0.5, 1.0)}},
		// A lower rung better than every call: not a call of the scored objective, so it
		// moves neither opt nor this run's perf (which is TPE's).
		{dataset: "iris", group: bayesmark, method: "bohb", repeat: 0, evals: []eval{rung, ev(0.6, 1.2, 0.5, 1.0)}},
	}
	refs := bayesmarkScores(runs)
	// Visible: acc losses of random .2 .1 ∞ .3 .1 → 3rd of 5 = .2, opt .05 (AHSC);
	// nll .5 .4 ∞ .7 .6 → .6, opt .3. Generalization: acc .3 .2 ∞ .1 .4 → .3, opt .1;
	// nll .6 .5 ∞ .3 .8 → .6, opt .3.
	want := map[[2]string][2]float64{
		{"visible", "acc"}: {0.05, 0.2}, {"visible", "nll"}: {0.3, 0.6},
		{"generalization", "acc"}: {0.1, 0.3}, {"generalization", "nll"}: {0.3, 0.6},
	}
	if len(refs) != 4 {
		t.Fatalf("%d references, want 4", len(refs))
	}
	for _, r := range refs {
		w := want[[2]string{r.objective, r.testCase}]
		if math.Abs(r.opt-w[0]) > 1e-9 || math.Abs(r.clip-w[1]) > 1e-9 || r.opt >= w[0] {
			t.Errorf("%s %s: opt %v (padded below %v), clip %v, want %v", r.objective, r.testCase, r.opt, w[0], r.clip, w[1])
		}
		if r.random != 5 || r.failures != 1 || r.pooled != 8 {
			t.Errorf("%s %s: %d random (%d failed), %d pooled, want 5 (1), 8", r.objective, r.testCase, r.random, r.failures, r.pooled)
		}
	}
	third := 1.0 / 3
	for i, w := range []struct{ visible, gen float64 }{
		// random 0: acc (.1−.05)/.15 = ⅓, nll (.4−.3)/.3 = ⅓; test at call 2: acc (.2−.1)/.2 = ½, nll (.5−.3)/.3 = ⅔.
		{100 * (1 - third), 100 * (1 - (0.5+2*third)/2)},
		// random 1: acc ⅓, nll (.6−.3)/.3 = 1; test at call 2: acc (.4−.1)/.2 = 1.5 → 1, nll (.8−.3)/.3 → 1.
		{100 * (1 - (third+1)/2), 0},
		// AHSC: at opt in both; test: acc at the later tied call .1 → 0, nll at call 1 .45 → ½.
		{100, 75},
		// TPE: (.4−.05)/.15 and (1.2−.3)/.3 both clipped to 1; test too.
		{0, 0},
		// BOHB: TPE's one full-fidelity call.
		{0, 0},
	} {
		if math.Abs(runs[i].value-w.visible) > 1e-9 || math.Abs(runs[i].genScore-w.gen) > 1e-9 {
			t.Errorf("run %d (%s): score %v and generalization %v, want %v and %v", i, runs[i].method, runs[i].value, runs[i].genScore, w.visible, w.gen)
		}
	}
	if v := normalized(-0.5, 0.1, 0.3); v != -1 {
		t.Errorf("normalized %v, want clipped to −1", v)
	}
	if v := normalized(0.2, 0.1, 0.3); math.Abs(v-0.5) > 1e-12 {
		t.Errorf("normalized %v, want 0.5", v)
	}
	if !math.IsNaN(normalized(0.2, 0.1, math.Inf(1))) {
		t.Error("an infinite clip (half the random calls failed) should leave the score undefined")
	}
	for _, c := range []struct {
		x    []float64
		want float64
	}{{[]float64{4, 1, 3, 2}, 2}, {[]float64{5}, 5}, {[]float64{3, 1, 2}, 2}, {[]float64{1, 2, 3, 4, 5, 6}, 3}} {
		if got := bmQuantile(c.x, 0.5); got != c.want {
			t.Errorf("quantile(%v, 0.5) = %v, want %v (the ⌈n/2⌉-th smallest)", c.x, got, c.want)
		}
	}
}

// TestRescoreFromEvaluations re-scores a run from its evaluations table alone, as a reader
// of `run ahsc --format json` would, and finds the runs table's scores; BOHB's lower rungs
// are rows of the table (every call is) that the score leaves out.
func TestRescoreFromEvaluations(t *testing.T) {
	res := testRun(t, experiments.Options{Seed: 2}, map[string]string{"dataset": "iris", "methods": "ahsc,tpe,bohb", "bayesmark-budget": "4",
		"n1": "4", "n2": "2", "epochs": "3", "folds": "2", "protocol": "authors"})
	ev := res.Table("evaluations")
	if ev == nil || !ev.Detail {
		t.Fatal("no evaluations detail table")
	}
	byRun := map[string]*run{}
	var order []string
	for i := range ev.Rows {
		k := fmt.Sprintf("%d/%s/%v", ev.Int(i, "repeat"), ev.String(i, "method"), ev.Value(i, "hidden"))
		if byRun[k] == nil {
			byRun[k] = &run{dataset: "iris", group: bayesmark, repeat: ev.Int(i, "repeat"), method: ev.String(i, "method")}
			order = append(order, k)
		}
		byRun[k].evals = append(byRun[k].evals, eval{fidelity: ev.Float(i, "fidelity"), failed: ev.Value(i, "failed") == true,
			valMetric: ev.Float(i, "val_accuracy"), valLoss: ev.Float(i, "val_log_loss"), testAcc: ev.Float(i, "test_accuracy"), testNLL: ev.Float(i, "test_log_loss")})
	}
	if len(order) != 8 { // 2 repeats × (ahsc, tpe, bohb, the hidden random reference)
		t.Fatalf("%d runs in the evaluations table, want 8", len(order))
	}
	rungs := 0
	for _, k := range order {
		rungs += len(byRun[k].evals) - len(fullEvals(byRun[k].evals))
	}
	if rungs == 0 {
		t.Error("no lower-fidelity rows: BOHB's rungs are missing from the evaluations table")
	}
	runs := make([]run, len(order))
	for i, k := range order {
		runs[i] = *byRun[k]
	}
	bayesmarkScores(runs)
	rt := res.Table("runs")
	for i := range rt.Rows {
		k := fmt.Sprintf("%d/%s/false", rt.Int(i, "repeat"), rt.String(i, "method"))
		j := slices.Index(order, k)
		if j < 0 {
			t.Fatalf("run %s has no evaluations", k)
		}
		if math.Abs(runs[j].value-rt.Float(i, "value")) > 1e-9 || math.Abs(runs[j].genScore-rt.Float(i, "generalization_score")) > 1e-9 {
			t.Errorf("%s: re-scored %v / %v, the run says %v / %v", k, runs[j].value, runs[j].genScore, rt.Float(i, "value"), rt.Float(i, "generalization_score"))
		}
	}
}
