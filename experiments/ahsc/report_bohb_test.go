package ahsc

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// TestAuthorsBOHBNote reads the authors' BOHB back from hand-made evaluations: the reported
// configuration's best rung (the first of the highest selection AUC, a failed rung never),
// its epochs, and its full training's test AUC, against the counts and medians worked out by
// hand; a repeat stored without its rungs, a clean-protocol run, an older run of the same
// dataset and a Bayesmark set are left out.
func TestAuthorsBOHBNote(t *testing.T) {
	evals := func(dataset string, rows ...[]any) *experiments.Result {
		ev := experiments.Table{Name: "evaluations", Columns: []string{"dataset", "repeat", "method", "hidden", "call", "fidelity", "failed",
			"val_metric", "test_metric", "config"}}
		for _, r := range rows {
			ev.Add(append([]any{dataset}, r...)...)
		}
		return &experiments.Result{Experiment: "ahsc", Params: map[string]string{"protocol": protocolAuthors, "epochs": "200"},
			Tables: []experiments.Table{ev}}
	}
	nan := math.NaN()
	vehicle := evals("vehicle",
		// repeat 0: the 1-epoch fit of a (0.80) ties a later 30-epoch one of b and beats c's
		// failed rung; a's 200-epoch training scores 0.70 (below)
		[]any{0, "bohb", false, 0, 0.005, false, 0.80, nan, "a"},
		[]any{0, "bohb", false, 1, 0.15, false, 0.80, nan, "b"},
		[]any{0, "bohb", false, 2, 0.15, true, nan, nan, "c"},
		[]any{0, "bohb", false, 3, 1.0, false, 0.70, 0.70, "a"},
		// repeat 1: best at 30 epochs (0.75), its training 0.90 (above)
		[]any{1, "bohb", false, 0, 0.005, false, 0.60, nan, "d"},
		[]any{1, "bohb", false, 1, 0.15, false, 0.75, nan, "e"},
		[]any{1, "bohb", false, 2, 1.0, false, 0.90, 0.90, "e"},
		// repeat 2: stored before the rungs were
		[]any{2, "bohb", false, 0, 1.0, false, 0.50, 0.50, "f"},
		// repeat 3: 3 epochs (0.90), training 0.60 (below)
		[]any{3, "bohb", false, 0, 0.015, false, 0.90, nan, "g"},
		[]any{3, "bohb", false, 1, 1.0, false, 0.60, 0.60, "g"},
		// repeat 4: the full training is of another configuration than the best rung's (h,
		// not k): left out of the counts and named
		[]any{4, "bohb", false, 0, 0.005, false, 0.99, nan, "k"},
		[]any{4, "bohb", false, 1, 1.0, false, 0.10, 0.10, "h"},
		// another method's rows
		[]any{0, "random", false, 0, 1.0, false, 0.99, 0.99, "h"},
	)
	older := evals("vehicle", []any{0, "bohb", false, 0, 0.005, false, 0.99, nan, "x"}, []any{0, "bohb", false, 1, 1.0, false, 0.1, 0.1, "x"})
	// a run of two datasets: its second one, kc1, is read too (and only its own rows)
	older.Tables[0].Add("kc1", 0, "bohb", false, 0, 0.005, false, 0.60, nan, "k")
	older.Tables[0].Add("kc1", 0, "bohb", false, 1, 1.0, false, 0.70, 0.70, "k")
	clean := evals("car", []any{0, "bohb", false, 0, 0.005, false, 0.99, nan, "x"}, []any{0, "bohb", false, 1, 1.0, false, 0.1, 0.1, "x"})
	clean.Params["protocol"] = protocolClean
	iris := evals("iris", []any{0, "bohb", false, 0, 0.005, false, 0.99, nan, "x"}, []any{0, "bohb", false, 1, 1.0, false, 0.1, 0.1, "x"})
	var b bytes.Buffer
	writeAuthorsBOHB(&b, []StoredRun{{ID: 1, Result: older}, {ID: 2, Result: vehicle}, {ID: 3, Result: clean}, {ID: 4, Result: iris}})
	// repeats 0, 1, 3: epochs 1, 30, 3 → 2 at most 3; rungs 0.80, 0.75, 0.90 → 0.80;
	// trainings 0.70, 0.90, 0.60 → 0.70; lower in 2.
	// (with the medians' bootstrap intervals: a value's own, or spanning the three)
	for _, want := range []string{"kc1, 1 repeat: found by a fit of at most 3 epochs in 1; that fit's selection ROC-AUC median 0.600 [0.600, 0.600], " +
		"the full training's test ROC-AUC median 0.700 [0.700, 0.700], lower in 0; ",
		"vehicle, 3 repeats: found by a fit of at most 3 epochs in 2; that fit's selection ROC-AUC median 0.800 [0.750, 0.900], " +
			"the full training's test ROC-AUC median 0.700 [0.600, 0.900], lower in 2 (1 more left out"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("note\n%s\nlacks %q", b.String(), want)
		}
	}
	for _, not := range []string{"car", "iris", "kc1, 1 repeat: found by a fit of at most 3 epochs in 1; that fit's selection ROC-AUC median 0.600 [0.600, 0.600], " +
		"the full training's test ROC-AUC median 0.700 [0.700, 0.700], lower in 0 ("} {
		if strings.Contains(b.String(), not) {
			t.Errorf("note names %q:\n%s", not, b.String())
		}
	}
	b.Reset()
	writeAuthorsBOHB(&b, []StoredRun{{ID: 3, Result: clean}})
	if b.Len() != 0 {
		t.Errorf("a note without any stored rung: %s", b.String())
	}
}
