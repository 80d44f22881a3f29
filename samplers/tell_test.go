package samplers_test

import (
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAdamTellFinite: a gradient told finite is not read for the check (a NaN told finite gets
// through, and NonFiniteAfterStep names the parameter it spoiled), the flags hold for one step
// (the next refuses the NaN, changing nothing), and flags of the wrong number are refused.
func TestAdamTellFinite(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		o := samplers.NewKerasAdam(1e-2)
		params := []*tensor.Dense{tensorOf(dt, []float64{1, 2, 3, 4}, 2, 2), tensorOf(dt, []float64{5, 6}, 2)}
		nan := []G.Value{tensorOf(dt, []float64{1, 1, 1, 1}, 2, 2), tensorOf(dt, []float64{1, math.NaN()}, 2)}
		o.TellFinite([]bool{false, true})
		if err := o.Step(params, nan); err != nil {
			t.Fatalf("%v: a step told its NaN gradient is finite failed: %v", dt, err)
		}
		if i := o.NonFiniteAfterStep(); i != 1 {
			t.Fatalf("%v: NonFiniteAfterStep = %d after a NaN got through to parameter 1", dt, i)
		}
		before := params[0].Clone().(*tensor.Dense)
		if err := o.Step(params, nan); err == nil || !strings.Contains(err.Error(), "non-finite") {
			t.Fatalf("%v: the step after a told one took a NaN gradient: %v", dt, err)
		}
		if !before.Eq(params[0]) {
			t.Fatalf("%v: a refused step changed parameter 0", dt)
		}
		o.TellFinite([]bool{true})
		if err := o.Step(params, nan); err == nil || !strings.Contains(err.Error(), "TellFinite gave 1 flags for 2 gradients") {
			t.Fatalf("%v: one flag for two gradients: %v", dt, err)
		}
	}
}
