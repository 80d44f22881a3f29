package hypergrad

import (
	"context"
	"math"
	"testing"

	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// shove is an outer "optimizer" that moves every λ entry by Delta whatever the gradient,
// counting its calls.
type shove struct {
	Delta float64
	calls int
}

func (s *shove) Step(params []*tensor.Dense, _ []G.Value) error {
	s.calls++
	for _, p := range params {
		d := p.Data().([]float64)
		for j := range d {
			d[j] += s.Delta
		}
	}
	return nil
}

func lambdaValues(r *ridge) []float64 { return append([]float64(nil), r.lambda.Data().([]float64)...) }

func TestOuterStepsAreProjectedOntoTheBounds(t *testing.T) {
	run := func(bounds []Bound) ([]float64, []HyperStep) {
		r := newRidge(t, 5, true, 0.05)
		b := &Bilevel{
			Chains:     []*Chain{{Problem: r.problem, Inner: samplers.NewAdam(0.05)}},
			Lambda:     []*tensor.Dense{r.lambda},
			Outer:      &shove{Delta: -0.1}, // drives weight decay below 0
			InnerSteps: 3, HyperSteps: 4, RiskLR: 0.05,
			Bounds: bounds,
		}
		h, err := b.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return lambdaValues(r), h
	}
	free, _ := run(nil)
	if !(free[0] < 0) {
		t.Fatalf("without bounds λ = %v; the test's outer steps should make it negative", free)
	}
	lam, h := run([]Bound{NonNegative})
	projected := 0
	for _, s := range h {
		projected += s.Projected
	}
	for _, v := range lam {
		if v != 0 {
			t.Errorf("λ = %v; want every entry clipped to 0", lam)
		}
	}
	if projected == 0 {
		t.Errorf("no projection recorded: %+v", h)
	}

	// Bounds must match λ and contain its initial value.
	r := newRidge(t, 5, true, 0.05)
	b := &Bilevel{Chains: []*Chain{{Problem: r.problem, Inner: samplers.NewAdam(0.05)}}, Lambda: []*tensor.Dense{r.lambda},
		Outer: samplers.NewRMSprop(0.01), InnerSteps: 1, HyperSteps: 1, RiskLR: 0.05, Bounds: []Bound{{1, 2}}}
	if _, err := b.Run(context.Background()); err == nil {
		t.Error("initial λ outside its bounds accepted")
	}
}

func TestNonFiniteOuterStepsAreRejected(t *testing.T) {
	r := newRidge(t, 5, true, 0.05)
	outer := &shove{Delta: math.NaN()}
	b := &Bilevel{
		Chains:     []*Chain{{Problem: r.problem, Inner: samplers.NewAdam(0.05)}},
		Lambda:     []*tensor.Dense{r.lambda},
		Outer:      outer,
		InnerSteps: 2, HyperSteps: 3, RiskLR: 0.05,
	}
	before := lambdaValues(r)
	h, err := b.Run(context.Background())
	if err != nil {
		t.Fatalf("a non-finite λ update ended the run: %v", err)
	}
	if len(h) != 3 {
		t.Fatalf("%d hyper-steps", len(h))
	}
	for _, s := range h {
		if s.Rejected != 1 {
			t.Errorf("hyper-step %d: %d rejected; want 1", s.Step, s.Rejected)
		}
	}
	for i, v := range lambdaValues(r) {
		if v != before[i] {
			t.Errorf("λ[%d] = %v after rejected steps; want %v", i, v, before[i])
		}
	}

	// A NaN hypergradient is rejected before the outer optimizer sees it.
	outer.calls = 0
	outer.Delta = 1
	var rec HyperStep
	g := [][]float64{{0.1, math.NaN(), 0.3}}
	if err := b.outerStep(g, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Rejected != 1 || outer.calls != 0 {
		t.Errorf("NaN hypergradient: %d rejected, %d optimizer calls", rec.Rejected, outer.calls)
	}
	for i, v := range lambdaValues(r) {
		if v != before[i] {
			t.Errorf("λ[%d] = %v after a NaN hypergradient; want %v", i, v, before[i])
		}
	}
	if err := b.outerStep([][]float64{{0.1, 0.2, 0.3}}, &rec); err != nil || rec.Rejected != 1 || outer.calls != 1 {
		t.Errorf("finite hypergradient: err %v, %d rejected, %d calls", err, rec.Rejected, outer.calls)
	}
}

// TestEvaluateReusesRegBuffers checks that an inner step reads the λ gradients into the
// chain's buffers of the step before (a fresh copy per step grew the heap by λ's size each
// step: issue 53) and that they hold the program's values.
func TestEvaluateReusesRegBuffers(t *testing.T) {
	r := newRidge(t, 5, true, 0.05)
	b := &Bilevel{Chains: []*Chain{{Problem: r.problem, Inner: samplers.NewAdam(0.05)}}, Lambda: []*tensor.Dense{r.lambda},
		Outer: samplers.NewRMSprop(0.01), InnerSteps: 1, HyperSteps: 1, RiskLR: 0.05, Zeta: 1e-3, Monitor: true}
	ctx := context.Background()
	if err := b.InnerStep(ctx, 0); err != nil {
		t.Fatal(err)
	}
	c := b.Chains[0]
	if len(c.regBuf) == 0 || len(c.regBuf[0]) == 0 {
		t.Fatal("no λ gradient read")
	}
	first := &c.regBuf[0][0]
	if err := b.InnerStep(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if &c.regBuf[0][0] != first {
		t.Error("the second step read the λ gradient into a new buffer")
	}
	want, err := c.prog.Float64s(c.regGrads[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if c.regBuf[0][i] != w {
			t.Fatalf("λ gradient entry %d = %v, the program's is %v", i, c.regBuf[0][i], w)
		}
	}
}
