package train

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/samplers"
	"gorgonia.org/tensor"
)

// TestCheckedOptimizerReportsNonFiniteParameters: with an optimizer that checks what it writes
// (Adam, RMSprop), Step does not scan the parameters itself, and an overflowing update is
// still reported, naming the parameter, in float32 and float64.
func TestCheckedOptimizerReportsNonFiniteParameters(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		tr := blobs(6, 10, 2, 3)
		lr := math.MaxFloat64
		if dt == tensor.Float32 {
			lr = math.MaxFloat32
		}
		for _, opt := range []samplers.Optimizer{samplers.NewAdam(lr), samplers.NewRMSprop(lr)} {
			m := newMLP(t, dt, 1, 3, 2)
			_, err := Fit(context.Background(), m, opt, tr, nil, Config{Epochs: 1, BatchSize: 10})
			if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "after the optimizer step") {
				t.Errorf("%v %T: err = %v; want ErrDiverged naming a parameter after the optimizer step", dt, opt, err)
			}
		}
	}
}
