package samplers_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The scalar loops RMSprop and Langevin ran before their vector kernels: the steps must stay
// bit for bit what they were.

func oldRMSprop[T graph.Float](o *samplers.RMSprop, p, g, s, b, a []T) {
	lr, alpha, ac, eps := T(o.LR), T(o.Alpha), T(1-o.Alpha), T(o.Eps)
	mom, wd := T(o.Momentum), T(o.WeightDecay)
	for j := range p {
		gj := g[j]
		if wd != 0 {
			gj += wd * p[j]
		}
		s[j] = alpha*s[j] + ac*gj*gj
		var r T
		if o.Centered {
			a[j] += ac * (gj - a[j])
			r = T(math.Sqrt(float64(max(s[j]-a[j]*a[j], 0)))) + eps
		} else {
			r = T(math.Sqrt(float64(s[j]))) + eps
		}
		if mom > 0 {
			b[j] = mom*b[j] + gj/r
			p[j] -= lr * b[j]
		} else {
			p[j] -= lr * (gj / r)
		}
	}
}

func oldLangevin[T graph.Float](rng *rand.Rand, p, g []T, eta, std float64) {
	if std == 0 {
		for j := range p {
			p[j] = T(float64(p[j]) - eta*float64(g[j]))
		}
		return
	}
	for j := range p {
		p[j] = T(float64(p[j]) - eta*float64(g[j]) + std*rng.NormFloat64())
	}
}

// kernelProblem is two parameters (one longer than the kernels' core split) with fixed
// pseudo-random gradients.
func kernelProblem[T graph.Float](seed uint64) (params []*tensor.Dense, grads []G.Value, ref [][]T) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, n := range []int{37, 70001} {
		p, g := make([]T, n), make([]T, n)
		for j := range p {
			p[j], g[j] = T(rng.NormFloat64()), T(rng.NormFloat64())
		}
		params = append(params, tensor.New(tensor.WithShape(n), tensor.WithBacking(p)))
		grads = append(grads, tensor.New(tensor.WithShape(n), tensor.WithBacking(g)))
		ref = append(ref, append([]T(nil), p...))
	}
	return params, grads, ref
}

func elems[T graph.Float](t *testing.T, v G.Value) []T {
	t.Helper()
	e, err := graph.Elements[T](v)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRMSpropStepMatchesOldLoop(t *testing.T) {
	testRMSpropOld[float32](t)
	testRMSpropOld[float64](t)
}

func testRMSpropOld[T graph.Float](t *testing.T) {
	for flags := 0; flags < 8; flags++ {
		o := samplers.NewRMSprop(1e-2)
		if flags&1 != 0 {
			o.WeightDecay = 1e-3
		}
		o.Centered = flags&2 != 0
		if flags&4 != 0 {
			o.Momentum = 0.9
		}
		params, grads, ref := kernelProblem[T](uint64(flags))
		st := make([][3][]T, len(ref))
		for i := range st {
			for k := range st[i] {
				st[i][k] = make([]T, len(ref[i]))
			}
		}
		for step := 0; step < 3; step++ {
			if err := o.Step(params, grads); err != nil {
				t.Fatal(err)
			}
			for i := range ref {
				oldRMSprop(o, ref[i], elems[T](t, grads[i]), st[i][0], st[i][1], st[i][2])
				if p := elems[T](t, params[i]); !equalBits(p, ref[i]) {
					t.Fatalf("%T flags=%d step %d parameter %d differs from the old loop", p[0], flags, step, i)
				}
			}
			if j := o.NonFiniteAfterStep(); j != -1 {
				t.Fatalf("flags=%d: NonFiniteAfterStep %d on finite parameters", flags, j)
			}
		}
		// the split of the long parameter across cores allocates its job (graph.parallelFor)
		if a := testing.AllocsPerRun(5, func() { _ = o.Step(params, grads) }); a > 4 {
			t.Errorf("%T flags=%d: %v allocations per step", ref[0][0], flags, a)
		}
	}
	// a finite gradient times a huge rate overflows: reported, not an error
	o := &samplers.RMSprop{LR: math.MaxFloat64, Alpha: 0.5, Eps: 1e-30}
	params, grads, _ := kernelProblem[T](9)
	if err := o.Step(params, grads); err != nil {
		t.Fatal(err)
	}
	if j := o.NonFiniteAfterStep(); j != 0 {
		t.Fatalf("%T: NonFiniteAfterStep %d after an overflowing step; want 0", ref0[T](), j)
	}
}

func ref0[T graph.Float]() T { return 0 }

func equalBits[T graph.Float](x, y []T) bool {
	for i := range x {
		if math.Float64bits(float64(x[i])) != math.Float64bits(float64(y[i])) {
			return false
		}
	}
	return len(x) == len(y)
}

func TestLangevinStepMatchesOldLoop(t *testing.T) {
	testLangevinOld[float32](t)
	testLangevinOld[float64](t)
}

func testLangevinOld[T graph.Float](t *testing.T) {
	for _, beta := range []float64{math.Inf(1), 1e4} {
		params, grads, ref := kernelProblem[T](3)
		l := &samplers.Langevin{Eta: 1e-2, Beta: beta, N: 100, Rand: rand.New(rand.NewPCG(4, 4))}
		r2 := rand.New(rand.NewPCG(4, 4))
		for step := 0; step < 3; step++ {
			if err := l.Step(params, grads); err != nil {
				t.Fatal(err)
			}
			for i := range ref {
				oldLangevin(r2, ref[i], elems[T](t, grads[i]), l.Eta, l.NoiseStd())
				if p := elems[T](t, params[i]); !equalBits(p, ref[i]) {
					t.Fatalf("%T β=%v step %d parameter %d differs from the old loop", p[0], beta, step, i)
				}
			}
			if j := l.NonFiniteAfterStep(); j != -1 {
				t.Fatalf("NonFiniteAfterStep %d on finite parameters", j)
			}
		}
		if l.Rand.Uint64() != r2.Uint64() {
			t.Fatal("the noise generator ends in another state than the old loop's")
		}
		// the gradient scan splits the long parameter across cores (graph.parallelFor's job)
		if a := testing.AllocsPerRun(5, func() { _ = l.Step(params, grads) }); a > 2 {
			t.Errorf("%T: %v allocations per step", ref[0][0], a)
		}
	}
}
