package convexity

import (
	"math"
	"testing"

	"github.com/hyperflat/hyperflat/losses"
)

// TestMicroAUC checks the micro-averaged ROC-AUC on softmax probabilities by hand: rows
// (½, ½) and (¼, ¾) of classes 0 and 1 give positives {½, ¾} and negatives {½, ¼}: of the
// four pairs one ties, so the AUC is 3.5/4.
func TestMicroAUC(t *testing.T) {
	s := losses.Scores{Values: []float64{0, 0, 0, math.Log(3)}, N: 2, K: 2}
	got, err := microAUC(s, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-0.875) > 1e-12 {
		t.Errorf("micro AUC %v, want 0.875", got)
	}
	// One output (a binary model's logit): the plain AUC.
	if got, err := microAUC(losses.Scores{Values: []float64{-1, 2, 0.5}, N: 3, K: 1}, []int{0, 1, 0}); err != nil || got != 1 {
		t.Errorf("binary micro AUC %v (%v), want 1", got, err)
	}
}
