package hypergrad

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/samplers"
	"gorgonia.org/tensor"
)

// Issue 52: NewT1T2(nil, …) panicked, a NaN step size was accepted (its hypergradients were
// NaN, with a nil error), and NewUnrolled with K = 12000 built for 8 minutes (with 1<<40 it
// failed after 3 minutes with a message about another cause).
func TestEstimatorArgumentsAreChecked(t *testing.T) {
	r := newRidge(t, 1, false, 0.3)
	cases := []struct {
		name string
		f    func() error
		want string
	}{
		{"NewT1T2(nil)", func() error { _, err := NewT1T2(nil, 0.1); return err }, "nil *Problem"},
		{"NewUnrolled(nil)", func() error { _, err := NewUnrolled(nil, 3, 0.1); return err }, "nil *Problem"},
		{"NewImplicit(nil)", func() error { _, err := NewImplicit(nil, CG, 10); return err }, "nil *Problem"},
		{"NewT1T2AtCurrent(nil)", func() error { _, err := NewT1T2AtCurrent(nil, 0.1); return err }, "nil *Problem"},
		{"NewT1T2(NaN)", func() error { _, err := NewT1T2(r.problem, math.NaN()); return err }, "step size NaN"},
		{"NewUnrolled(+Inf)", func() error { _, err := NewUnrolled(r.problem, 2, math.Inf(1)); return err }, "step size +Inf"},
		{"NewUnrolled(12000)", func() error { _, err := NewUnrolled(r.problem, 12000, 0.1); return err }, "hypergrad.MaxUnrolled"},
		{"NewUnrolled(1<<40)", func() error { _, err := NewUnrolled(r.problem, 1<<40, 0.1); return err }, "hypergrad.MaxUnrolled"},
		{"Bilevel RiskLR NaN", func() error {
			b := &Bilevel{Chains: []*Chain{{Problem: r.problem, Inner: samplers.NewAdam(0.05)}}, Lambda: []*tensor.Dense{r.lambda},
				Outer: samplers.NewAdam(0.01), InnerSteps: 1, HyperSteps: 1, RiskLR: math.NaN()}
			_, err := b.Run(context.Background())
			return err
		}, "RiskLR NaN"},
		{"Implicit Alpha NaN", func() error {
			im, err := NewImplicit(r.problem, Neumann, 5)
			if err != nil {
				return nil
			}
			im.Alpha = math.NaN()
			_, err = im.Estimate(context.Background())
			return err
		}, "Alpha NaN"},
		{"nil Bilevel", func() error { var b *Bilevel; _, err := b.Run(context.Background()); return err }, "nil *Bilevel"},
		{"nil Bilevel InnerStep", func() error { var b *Bilevel; return b.InnerStep(context.Background(), 0) }, "nil *Bilevel"},
		{"Bilevel with a nil chain", func() error {
			b := &Bilevel{Chains: []*Chain{nil}, Lambda: []*tensor.Dense{r.lambda}, Outer: samplers.NewAdam(0.01), InnerSteps: 1, HyperSteps: 1, RiskLR: 0.1}
			return b.InnerStep(context.Background(), 0)
		}, "chain 0 lacks a problem"},
		{"Bilevel with a nil λ", func() error {
			b := &Bilevel{Chains: []*Chain{{Problem: r.problem, Inner: samplers.NewAdam(0.05)}}, Lambda: []*tensor.Dense{nil},
				Outer: samplers.NewAdam(0.01), InnerSteps: 1, HyperSteps: 1, RiskLR: 0.1, Bounds: []Bound{NonNegative}}
			_, err := b.Run(context.Background())
			return err
		}, "λ tensor 0 is nil"},
		{"nil Regularizer", func() error { var r *Regularizer; return r.Add(1) }, "nil *Regularizer"},
		{"Regularizer Zeta NaN", func() error { r := &Regularizer{Zeta: math.NaN()}; return r.Add(1) }, "Zeta NaN"},
		{"nil Unrolled", func() error { var u *Unrolled; _, err := u.Estimate(context.Background()); return err }, "not made by NewUnrolled"},
	}
	for _, c := range cases {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s panicked: %v", c.name, p)
				}
			}()
			start := time.Now()
			err := c.f()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s took %v", c.name, d)
			}
		}()
	}
}
