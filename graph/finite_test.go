package graph

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestFinite: a Program vouches for a weight gradient Xᵀ·dY from its operands alone exactly
// when they bound it below overflow — never for a product that overflowed or holds a NaN, and
// not for a product its operands are too large to be worth reading for.
func TestFinite(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testFinite[float32](t, tensor.Float32, math.MaxFloat32) })
	t.Run("float64", func(t *testing.T) { testFinite[float64](t, tensor.Float64, math.MaxFloat64) })
}

func testFinite[T Float](t *testing.T, dt tensor.Dtype, largest float64) {
	rng := rand.New(rand.NewPCG(5, 6))
	const batch, in, out = 4, 64, 64
	run := func(b, n int, xScale, wScale float64, poison bool) (finite, holds bool, p *Program, loss *G.Node) {
		t.Helper()
		x, w, l, grads := productLossOf(t, dt, b, n, out, nil)
		p, err := Compile(l, grads[0])
		if err != nil {
			t.Fatal(err)
		}
		if p.Finite(grads[0]) {
			t.Fatal("Finite before any Run")
		}
		fill := func(rows, cols int, scale float64) *tensor.Dense {
			d := make([]T, rows*cols)
			for i := range d {
				d[i] = T(scale * (2*rng.Float64() - 1))
			}
			if poison {
				d[len(d)/2] = T(math.NaN())
			}
			return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(d))
		}
		if err := p.Let(x, fill(b, n, xScale)); err != nil {
			t.Fatal(err)
		}
		if err := p.Let(w, fill(n, out, wScale)); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		v, err := p.Value(grads[0])
		if err != nil {
			t.Fatal(err)
		}
		e, err := Elements[T](v)
		if err != nil {
			t.Fatal(err)
		}
		return p.Finite(grads[0]), FirstNonFinite(e) < 0, p, l
	}
	finite, holds, p, loss := run(batch, in, 1, 1, false)
	if !finite || !holds {
		t.Errorf("ordinary operands: Finite = %v, gradient finite %v; want both", finite, holds)
	}
	if p.Finite(loss) || p.Finite(G.NewScalar(G.NewGraph(), dt)) {
		t.Error("Finite vouched for a sum, or for a node not in the program")
	}
	// x and dY = 2·x·w finite, but their products beyond the largest value: dW overflows
	if finite, holds, _, _ = run(batch, in, math.Sqrt(largest)/2, 1, false); finite || holds {
		t.Errorf("an overflowing gradient: Finite = %v, gradient finite %v; want neither", finite, holds)
	}
	if finite, _, _, _ = run(batch, in, 1, 1, true); finite {
		t.Error("Finite vouched for a product of a NaN")
	}
	if finite, holds, _, _ = run(in, in, 1, 1, false); finite || !holds {
		t.Errorf("operands as large as the product: Finite = %v (want false: not read), gradient finite %v", finite, holds)
	}
	// near the bound either way, Finite never vouches for a gradient that is not finite, and it
	// vouches where the bound leaves a factor of 64 to spare
	base := math.Cbrt(largest / 64) // where the bound below reaches the largest value
	for trial := 0; trial < 40; trial++ {
		s := base * math.Pow(2, float64(trial%20-10)/2)
		finite, holds, _, _ := run(batch, in, s, s/8, false)
		if finite && !holds {
			t.Fatalf("scale %g: Finite vouched for a gradient with a non-finite entry", s)
		}
		// |dW| sums batch products of |x| ≤ s and |dY| ≤ 2·in·s·s/8
		if bound := float64(batch) * s * 2 * in * s * s / 8; bound <= largest/256 && !finite {
			t.Fatalf("scale %g: Finite = false where operands bound the gradient by %g", s, bound)
		}
	}
}
