package samplers_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// productOf returns Aᵀ·B as a graph Program computes it (the gradient a Program that defers
// nothing hands an optimizer).
func productOf(t *testing.T, a, b *tensor.Dense) G.Value {
	t.Helper()
	g := G.NewGraph()
	an := G.NewMatrix(g, G.Float32, G.WithShape(a.Shape()...), G.WithValue(a))
	bn := G.NewMatrix(g, G.Float32, G.WithShape(b.Shape()...), G.WithValue(b))
	c, err := graph.MatMulT(an, bn, true, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := graph.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	v, err := p.Value(c)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*tensor.Dense).Clone().(*tensor.Dense)
}

func randomDense(rng *rand.Rand, scale float64, shape ...int) *tensor.Dense {
	n := 1
	for _, s := range shape {
		n *= s
	}
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(scale * rng.NormFloat64())
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}

// TestAdamProducts: Adam given a gradient as a Product (TellProducts) moves the parameters and
// its moments exactly as given the product itself, step after step, beside a gradient given as
// usual; a Product told for one step only holds for that step; and a Product it cannot trust
// or use is an error that changes nothing.
func TestAdamProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const k, r, c = 4, 72, 128
	for _, hat := range []bool{false, true} {
		start := []*tensor.Dense{randomDense(rng, 0.1, r, c), randomDense(rng, 0.1, 3, 5), randomDense(rng, 0.1, 24, 9)}
		clone := func() []*tensor.Dense {
			out := make([]*tensor.Dense, len(start))
			for i, p := range start {
				out[i] = p.Clone().(*tensor.Dense)
			}
			return out
		}
		told, plain := clone(), clone()
		ot, op := samplers.NewAdam(1e-2), samplers.NewAdam(1e-2)
		ot.EpsHat, op.EpsHat = hat, hat
		ot.WeightDecay, op.WeightDecay = 1e-3, 1e-3
		for step := range 6 {
			a, b := randomDense(rng, 1, k, r), randomDense(rng, 1, k, c)
			a2, b2 := randomDense(rng, 1, 2, 24), randomDense(rng, 1, 2, 9)
			g1 := randomDense(rng, 1, 3, 5)
			full := []G.Value{productOf(t, a, b), g1, productOf(t, a2, b2)}
			if err := op.Step(plain, full); err != nil {
				t.Fatal(err)
			}
			stale := []G.Value{randomDense(rng, 1, r, c), g1, randomDense(rng, 1, 24, 9)}
			if step%2 == 1 { // every other step as usual, to see that a told step does not linger
				stale = full
			} else {
				ot.TellFinite([]bool{true, false, true})
				ot.TellProducts([]samplers.Product{{A: a, B: b}, {}, {A: a2, B: b2}})
			}
			if err := ot.Step(told, stale); err != nil {
				t.Fatal(err)
			}
			for i := range told {
				x, y := flat(t, told[i:i+1]), flat(t, plain[i:i+1])
				for j := range x {
					if math.Float64bits(x[j]) != math.Float64bits(y[j]) {
						t.Fatalf("hat %v, step %d: parameter %d entry %d is %v from a Product, %v from the gradient", hat, step, i, j, x[j], y[j])
					}
				}
			}
		}
	}

	a, b := randomDense(rng, 1, k, r), randomDense(rng, 1, k, c)
	prods := []samplers.Product{{A: a, B: b}}
	grads := []G.Value{randomDense(rng, 1, r, c)}
	for _, tc := range []struct {
		name   string
		tell   func(o *samplers.Adam)
		step   func(o *samplers.Adam, ps []*tensor.Dense) error
		substr string
	}{
		{"not proved finite", func(o *samplers.Adam) { o.TellProducts(prods) }, nil, "not proved finite"},
		{"proved false", func(o *samplers.Adam) { o.TellFinite([]bool{false}); o.TellProducts(prods) }, nil, "not proved finite"},
		{"count", func(o *samplers.Adam) { o.TellFinite([]bool{true}); o.TellProducts(append(prods, prods...)) }, nil, "2 products for 1"},
		{"one operand", func(o *samplers.Adam) { o.TellFinite([]bool{true}); o.TellProducts([]samplers.Product{{A: a}}) }, nil, "lacks an operand"},
		{"shapes", func(o *samplers.Adam) {
			o.TellFinite([]bool{true})
			o.TellProducts([]samplers.Product{{A: b, B: a}})
		}, nil, "operands of shapes"},
		{"with rows", func(o *samplers.Adam) { o.TellFinite([]bool{true}); o.TellProducts(prods) },
			func(o *samplers.Adam, ps []*tensor.Dense) error { return o.StepRows(ps, grads, [][]int32{{0, 5}}) }, "with nonzero rows"},
	} {
		ps := []*tensor.Dense{randomDense(rng, 0.1, r, c)}
		before := flat(t, ps)
		o := samplers.NewAdam(1e-2)
		tc.tell(o)
		var err error
		if tc.step != nil {
			err = tc.step(o, ps)
		} else {
			err = o.Step(ps, grads)
		}
		if err == nil || !strings.Contains(err.Error(), tc.substr) {
			t.Errorf("%s: error %v; want one containing %q", tc.name, err, tc.substr)
		}
		after := flat(t, ps)
		for j := range before {
			if math.Float64bits(before[j]) != math.Float64bits(after[j]) {
				t.Errorf("%s: the failed step changed entry %d", tc.name, j)
				break
			}
		}
	}
}
