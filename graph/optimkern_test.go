package graph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamUpdateMatchesScalar: the vector kernels and the core split reproduce adamScalar bit
// for bit, with and without weight decay, with ε in either place (PyTorch's or ε̂), at lengths
// around the vector widths and the split, and report a non-finite result.
func TestAdamUpdateMatchesScalar(t *testing.T) {
	testAdam[float32](t)
	testAdam[float64](t)
}

func testAdam[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 31, 33, 100, 2*optimGrain + 5} {
		for _, form := range []struct {
			wd  T
			hat bool
		}{{0, false}, {1e-2, false}, {0, true}, {1e-2, true}} {
			wd := form.wd
			c := AdamCoeffs[T]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: T(1e-3 / (1 - math.Pow(0.9, 3))), Bc2: T(math.Sqrt(1 - math.Pow(0.999, 3))), Eps: 1e-8, WD: wd, Hat: form.hat}
			mk := func() []T {
				s := make([]T, n)
				for i := range s {
					s[i] = T(rng.NormFloat64())
				}
				return s
			}
			p, g, m, v := mk(), mk(), mk(), mk()
			for i := range v {
				v[i] *= v[i]
			}
			p2, m2, v2 := append([]T(nil), p...), append([]T(nil), m...), append([]T(nil), v...)
			bad := AdamUpdate(p, g, m, v, c)
			bad2 := adamScalar(p2, g, m2, v2, c)
			if bad || bad2 {
				t.Fatalf("n=%d: non-finite reported on finite data", n)
			}
			for i := range p {
				if p[i] != p2[i] || m[i] != m2[i] || v[i] != v2[i] {
					t.Fatalf("%T n=%d wd=%v hat=%v: element %d: (%v %v %v), scalar (%v %v %v)", p[0], n, wd, form.hat, i, p[i], m[i], v[i], p2[i], m2[i], v2[i])
				}
			}
			if n > 0 {
				g[n-1] = T(math.Inf(1)) // an infinite gradient makes p NaN or infinite
				if !AdamUpdate(p, g, m, v, c) {
					t.Fatalf("%T n=%d: a non-finite update was not reported", p[0], n)
				}
			}
		}
	}
}

func TestFirstNonFinite(t *testing.T) {
	testFirstNonFinite[float32](t)
	testFirstNonFinite[float64](t)
}

func testFirstNonFinite[T Float](t *testing.T) {
	for _, n := range []int{0, 1, 5, 8, 16, 33, 130, 2*optimGrain + 3} {
		x := make([]T, n)
		for i := range x {
			x[i] = T(i) - 3
		}
		if j := FirstNonFinite(x); j != -1 {
			t.Fatalf("n=%d: %d on finite data", n, j)
		}
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			for _, at := range []int{0, n / 2, n - 1} {
				if n == 0 {
					continue
				}
				y := append([]T(nil), x...)
				y[at] = T(bad)
				if j := FirstNonFinite(y); j != at {
					t.Fatalf("%T n=%d: %v at %d found at %d", y[0], n, bad, at, j)
				}
			}
		}
	}
	// the largest finite values are finite
	if j := FirstNonFinite([]T{T(math.MaxFloat32), -T(math.MaxFloat32), 0, 0, 0, 0, 0, 0}); j != -1 {
		t.Fatalf("max float reported at %d", j)
	}
}

// TestOptimKernelsScalarPath runs the same checks with the vector kernels off.
func TestOptimKernelsScalarPath(t *testing.T) {
	if !haveVec {
		t.Skip("no vector kernels on this CPU: the other tests ran the scalar path")
	}
	defer func(old bool) { haveVec = old }(haveVec)
	haveVec = false
	TestAdamUpdateMatchesScalar(t)
	TestFirstNonFinite(t)
	TestRMSpropUpdateMatchesScalar(t)
	TestLangevinMoveMatchesScalar(t)
}

// BenchmarkAdamUpdate times one Adam step over a one-hot first layer's weights (1,430 × 1,024
// float32: vehicle under the authors' protocol at the widest width), with ε in PyTorch's place
// (two divisions per weight) and as ε̂ (one).
func BenchmarkAdamUpdate(b *testing.B) {
	const n = 1430 * 1024
	p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range p {
		p[i], g[i], m[i], v[i] = 0.1, 1e-4, 1e-5, 1e-8
	}
	for _, hat := range []bool{false, true} {
		c := AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: 1e-3, Bc2: 0.5, Eps: 1e-7, Hat: hat}
		name := "torch"
		if hat {
			name = "hat"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(n * 4)
			for range b.N {
				AdamUpdate(p, g, m, v, c)
			}
		})
	}
}
