package weightdecay

import (
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// TestTheAnswerBootstrapsItsIntervals: at two replicates the resampled means of a and b are
// a, (a+b)/2 and b with probabilities ¼, ½ and ¼, so each 95% interval is [a, b] (worked by
// hand); the final-model reading, one classifier, has none; the test cannot separate two
// replicates, so the sentence says whether the first's and the last's intervals overlap.
func TestTheAnswerBootstrapsItsIntervals(t *testing.T) {
	if bootResamples != experiments.BootResamples || bootSeed != experiments.BootSeed {
		t.Fatalf("the answer's bootstrap settings differ from the report's %d resamples, seed %d", bootResamples, bootSeed)
	}
	cfg := &Config{Model: "linear", Dataset: "mnist", Zetas: []float64{10}}
	rep := func(i int, base, ckpt float64) replicate {
		return replicate{rep: i, base: fit{replicate: i, history: []checkpoint{{testAcc: base, valAcc: base}}},
			ckpt: checkpoint{testAcc: ckpt, valAcc: ckpt}}
	}
	p := &pair{reps: []replicate{rep(0, 0.80, 0.70), rep(1, 0.84, 0.73)}}
	sentence, view, legend := answer(cfg, p)
	cells := map[string]string{}
	for i := range view.Rows {
		cells[view.String(i, "method")] = view.String(i, "test_acc")
	}
	want := map[string]string{methodEq1: "0.820 [0.800, 0.840]", methodCkpt: "0.715 [0.700, 0.730]", methodFinal: "0.800"}
	for m, w := range want {
		if cells[m] != w {
			t.Errorf("%s's test_acc %q, want %q", m, cells[m], w)
		}
	}
	for _, w := range []string{"n = 2 replicates is too few", "do not overlap."} {
		if !strings.Contains(sentence, w) {
			t.Errorf("sentence lacks %q: %s", w, sentence)
		}
	}
	if l := strings.Join(legend, "; "); !strings.Contains(l, "test_acc: mean [95% bootstrap CI, 10,000 resamples] over replicates, none at n = 1") {
		t.Errorf("legend: %s", l)
	}
	p.reps[1].ckpt.testAcc = 0.81 // [0.70, 0.81] against [0.80, 0.84]
	if sentence, _, _ = answer(cfg, p); !strings.Contains(sentence, " overlap.") || strings.Contains(sentence, "not overlap") {
		t.Errorf("overlapping intervals: %s", sentence)
	}
}
