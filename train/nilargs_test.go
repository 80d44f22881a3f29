package train

import (
	"context"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/samplers"
	"gorgonia.org/tensor"
)

// Issue 52 (class 8): a nil model, net, dataset, optimizer or Trainer was a nil-pointer panic;
// each is an error.
func TestNilArgumentsAreErrorsNotPanics(t *testing.T) {
	ctx := context.Background()
	ds := &datasets.Dataset{Name: "x", N: 2, D: 1, X: []float64{1, 2}, Y: []int{0, 1}, Classes: []string{"a", "b"}, Shape: []int{1}}
	var tr *Trainer
	var ev *Evaluator
	adam := samplers.NewAdam(0.1)
	cfg := Config{Epochs: 1, BatchSize: 1}
	cases := map[string]func() error{
		"NewTrainer(nil)":       func() error { _, err := NewTrainer(nil, "", nil); return err },
		"Fit(nil model)":        func() error { _, err := Fit(ctx, nil, adam, ds, nil, cfg); return err },
		"nil Trainer.Fit":       func() error { _, err := tr.Fit(ctx, adam, ds, nil, cfg); return err },
		"nil Trainer.Step":      func() error { _, err := tr.Step(ctx, adam, ds, []int{0}, nil); return err },
		"nil Trainer.Evaluate":  func() error { _, err := tr.Evaluate(ctx, ds, 1); return err },
		"NewEvaluator(nil)":     func() error { _, err := NewEvaluator(nil, ds, 2, 1); return err },
		"nil Evaluator":         func() error { _, _, err := ev.Evaluate(ctx); return err },
		"Bind(nil net)":         func() error { _, _, err := Bind(nil, ds, 2, "x"); return err },
		"Inputs(nil net)":       func() error { _, err := Inputs(nil, ds, "x"); return err },
		"OneHot(nil net)":       func() error { _, err := OneHot(nil, []int{0}, 2, "y"); return err },
		"Trainer.Fit(nil opt)":  func() error { _, err := newTestTrainer(t).Fit(ctx, nil, ds, nil, cfg); return err },
		"Trainer.Step(nil opt)": func() error { _, err := newTestTrainer(t).Step(ctx, nil, ds, []int{0}, nil); return err },
		"Trainer.Step(nil ds)":  func() error { _, err := newTestTrainer(t).Step(ctx, adam, nil, []int{0}, nil); return err },
	}
	for name, f := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", name, r)
				}
			}()
			if err := f(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}()
	}
	if tr.TrainProgram(1) != nil {
		t.Error("a nil Trainer has a program")
	}
}

func newTestTrainer(t *testing.T) *Trainer {
	t.Helper()
	tr, err := NewTrainer(newMLP(t, tensor.Float64, 1, 1, 2), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
