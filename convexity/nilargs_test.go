package convexity

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/search"
)

// Issue 52: AHSC.Run with a nil random source panicked (in the sampler) instead of
// returning an error; so did the Hutchinson and power-iteration estimates.
func TestNilRandomSourcesAreErrors(t *testing.T) {
	space := search.Space{search.FloatParam("lr", 1e-4, 1e-1, true)}
	obj := func(context.Context, search.Config, float64) (float64, error) { return 0, nil }
	a := &AHSC{Task: &Task{}, N1: 2, N2: 1}
	call := func(name string, f func() error, want ...string) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", name, r)
			}
		}()
		w := append(want, "nil")[0]
		if err := f(); err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%s: got %v, want an error saying %q", name, err, w)
		}
	}
	call("AHSC.Run(nil rng)", func() error { _, err := a.Run(context.Background(), nil, space, obj); return err })
	call("AHSC.Run(nil objective)", func() error {
		_, err := a.Run(context.Background(), rand.New(rand.NewPCG(1, 2)), space, nil)
		return err
	})
	var nilAHSC *AHSC
	call("(*AHSC)(nil).Run", func() error {
		_, err := nilAHSC.Run(context.Background(), rand.New(rand.NewPCG(1, 2)), space, obj)
		return err
	}, "needs a task")
	var c *Curvature
	call("Curvature.Trace(nil)", func() error { _, err := c.Trace(context.Background(), nil, 4); return err })
	call("Curvature.TopEigenvalue(nil)", func() error { _, _, err := c.TopEigenvalue(context.Background(), nil, 4, 1e-6); return err })
	call("NewCurvature(nil param)", func() error { _, err := NewCurvature(nil, nil); return err })
	call("Curvature.HVP", func() error { _, err := c.HVP(context.Background(), nil); return err })
	call("Curvature.Sharpness", func() error { _, err := c.Sharpness(context.Background(), math.NaN(), 3); return err })
	if c.Dim() != 0 {
		t.Errorf("nil Curvature's Dim = %d", c.Dim())
	}
	var task *Task
	call("(*Task)(nil).Fit", func() error { _, _, err := task.Fit(context.Background(), search.Config{}, 1, false); return err })
	call("(*Task)(nil).Evaluate", func() error { return task.Evaluate(context.Background(), search.Config{}, 1).Err })
	call("(*Task)(nil).CheckMemory", func() error { return task.CheckMemory(search.Config{}) })
	call("(*Task)(nil).RecordRows", func() error { _, err := task.RecordRows(8); return err })
	call("Task{Whitebox}.RecordRows without data", func() error { _, err := (&Task{Whitebox: &WhiteboxOptions{}}).RecordRows(8); return err }, "without training data")
	call("Task{}.Objective()", func() error { _, err := (&Task{}).Objective()(context.Background(), search.Config{}, 1); return err })
	call("NewTrainingCurvature(nil)", func() error { _, err := NewTrainingCurvature(nil, nil, 0); return err })
}
