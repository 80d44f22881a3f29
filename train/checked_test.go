package train

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/layers"
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

// tellRecorder is Adam, keeping what the Trainer tells it of each step's gradients.
type tellRecorder struct {
	*samplers.Adam
	told [][]bool
}

func (r *tellRecorder) TellFinite(proved []bool) {
	r.told = append(r.told, append([]bool(nil), proved...))
	r.Adam.TellFinite(proved)
}

// TestStepTellsProvedFiniteGradients: at every step the Trainer tells a FiniteTeller which
// gradients the Program vouches are finite — the hidden layer's weight gradient, whose operands
// (a batch of 4 rows each side) are an eighth of its size, and no other.
func TestStepTellsProvedFiniteGradients(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		net, err := layers.NewNet(dt, 1)
		if err != nil {
			t.Fatal(err)
		}
		m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 8, Hidden: []int{64, 64}, Out: 3})
		if err != nil {
			t.Fatal(err)
		}
		opt := &tellRecorder{Adam: samplers.NewKerasAdam(1e-3)}
		if _, err := Fit(context.Background(), m, opt, blobs(6, 8, 3, 8), nil, Config{Epochs: 1, BatchSize: 4}); err != nil {
			t.Fatal(err)
		}
		params := m.Net().Params()
		if len(opt.told) != 6 {
			t.Fatalf("%v: told %d times in 6 steps", dt, len(opt.told))
		}
		for s, proved := range opt.told {
			for i, p := range proved {
				hidden := params[i].Value.Shape().Eq(tensor.Shape{64, 64})
				if p != hidden || len(proved) != len(params) {
					t.Fatalf("%v step %d: told %v for parameters %v", dt, s, proved, params)
				}
			}
		}
	}
}
