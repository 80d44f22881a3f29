package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// same is bit equality, except that any two NaNs are the same.
func same[T Float](x, y T) bool {
	return x == y && math.Signbit(float64(x)) == math.Signbit(float64(y)) || x != x && y != y
}

// TestRMSpropUpdateMatchesScalar: every combination of weight decay, centering and momentum,
// at lengths around the vector widths and the core split, reproduces rmspropScalar bit for
// bit, including the clamp of s − a² at zero and a NaN from it, and a non-finite result is
// reported.
func TestRMSpropUpdateMatchesScalar(t *testing.T) {
	testRMSprop[float32](t)
	testRMSprop[float64](t)
}

func testRMSprop[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	mk := func(n int, scale float64) []T {
		s := make([]T, n)
		for i := range s {
			s[i] = T(scale * rng.NormFloat64())
		}
		return s
	}
	for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 17, 100, 2*optimGrain + 5} {
		for flags := 0; flags < 8; flags++ {
			c := RMSpropCoeffs[T]{Alpha: 0.99, Alphac: T(1 - 0.99), Eps: 1e-8, LR: 1e-2}
			if flags&1 != 0 {
				c.WD = 3e-3
			}
			c.Centered = flags&2 != 0
			if flags&4 != 0 {
				c.Momentum = 0.9
			}
			p, g, a, b := mk(n, 1), mk(n, 1), mk(n, 1), mk(n, 1)
			s := mk(n, 1)
			for i := range s {
				s[i] *= s[i]
				if c.Centered && i%5 == 1 {
					s[i] = 0 // s − a² < 0: the clamp
				}
				if c.Centered && i%7 == 3 {
					s[i], a[i] = T(math.Inf(1)), T(math.Inf(1)) // Inf − Inf: NaN through max
				}
			}
			p2, s2, a2, b2 := clone(p), clone(s), clone(a), clone(b)
			bad := RMSpropUpdate(p, g, s, a, b, c)
			bad2 := rmspropScalar(p2, g, s2, a2, b2, c)
			if bad != bad2 {
				t.Fatalf("%T n=%d flags=%d: non-finite %v, scalar %v", p[0], n, flags, bad, bad2)
			}
			for i := range p {
				if !same(p[i], p2[i]) || !same(s[i], s2[i]) || !same(a[i], a2[i]) || !same(b[i], b2[i]) {
					t.Fatalf("%T n=%d flags=%d: element %d: (%v %v %v %v), scalar (%v %v %v %v)",
						p[0], n, flags, i, p[i], s[i], a[i], b[i], p2[i], s2[i], a2[i], b2[i])
				}
			}
			if n > 8 && !c.Centered && !bad {
				g[n-2] = T(math.Inf(-1))
				if !RMSpropUpdate(p, g, s, a, b, c) {
					t.Fatalf("%T n=%d flags=%d: a non-finite update was not reported", p[0], n, flags)
				}
			}
		}
	}
	// unread buffers may be nil
	p := []T{1, 2, 3, 4, 5, 6, 7, 8, 9}
	if RMSpropUpdate(p, p, make([]T, 9), nil, nil, RMSpropCoeffs[T]{Alpha: 0.9, Alphac: 0.1, Eps: 1e-8, LR: 1e-3}) {
		t.Fatal("non-finite reported on finite data")
	}
}

func clone[T any](x []T) []T { return append([]T(nil), x...) }

// TestLangevinMoveMatchesScalar: the move reproduces the per-entry scalar loop (draw, then
// update) bit for bit and leaves the generator in the same state, with and without noise,
// for float32 and float64 parameters and a float64 gradient of float32 parameters.
func TestLangevinMoveMatchesScalar(t *testing.T) {
	testLangevin[float32, float32](t)
	testLangevin[float64, float64](t)
	testLangevin[float32, float64](t)
}

func testLangevin[T, U Float](t *testing.T) {
	data := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 3, 4, 5, 8, 255, 256, 257, 1000} {
		for _, std := range []float64{0, 0.03} {
			p, g := make([]T, n), make([]U, n)
			for i := range p {
				p[i], g[i] = T(data.NormFloat64()), U(data.NormFloat64())
			}
			p2 := clone(p)
			r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
			bad := LangevinMove(p, g, 0.01, std, r1)
			for j := range p2 { // the loop samplers.Langevin ran before the kernels
				if std == 0 {
					p2[j] = T(float64(p2[j]) - 0.01*float64(g[j]))
				} else {
					p2[j] = T(float64(p2[j]) - 0.01*float64(g[j]) + std*r2.NormFloat64())
				}
			}
			if bad {
				t.Fatalf("%T/%T n=%d: non-finite reported on finite data", p[0], g[0], n)
			}
			for i := range p {
				if p[i] != p2[i] {
					t.Fatalf("%T/%T n=%d std=%v: element %d: %v, scalar %v", p[0], g[0], n, std, i, p[i], p2[i])
				}
			}
			if r1.Uint64() != r2.Uint64() {
				t.Fatalf("n=%d std=%v: the generator ends in another state", n, std)
			}
			if n > 0 {
				g[n/2] = U(math.Inf(1))
				if !LangevinMove(p, g, 0.01, std, r1) {
					t.Fatalf("%T/%T n=%d: a non-finite move was not reported", p[0], g[0], n)
				}
			}
		}
	}
}

func BenchmarkRMSprop(b *testing.B) {
	b.Run("f32", benchRMSprop[float32])
	b.Run("f64", benchRMSprop[float64])
}

func benchRMSprop[T Float](b *testing.B) {
	for _, n := range []int{4096, 1 << 20} {
		p, g, s := make([]T, n), make([]T, n), make([]T, n)
		for i := range p {
			p[i], g[i] = T(i%7)-3, T(i%5)-2
		}
		c := RMSpropCoeffs[T]{Alpha: 0.99, Alphac: T(1 - 0.99), Eps: 1e-8, LR: 1e-2}
		for _, mode := range []string{"vec", "scalar"} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				b.SetBytes(int64(n) * int64(4*sizeOf[T]()))
				b.ReportAllocs()
				for b.Loop() {
					if mode == "vec" {
						RMSpropUpdate(p, g, s, nil, nil, c)
					} else {
						rmspropScalar(p, g, s, s, s, c)
					}
				}
			})
		}
	}
}

func BenchmarkLangevin(b *testing.B) {
	b.Run("f32", benchLangevin[float32])
	b.Run("f64", benchLangevin[float64])
}

func benchLangevin[T Float](b *testing.B) {
	n := 1 << 16
	p, g := make([]T, n), make([]T, n)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, std := range []float64{0, 1e-3} {
		for _, mode := range []string{"vec", "scalar"} {
			b.Run(fmt.Sprintf("%s/std=%g", mode, std), func(b *testing.B) {
				b.SetBytes(int64(n) * int64(3*sizeOf[T]()))
				b.ReportAllocs()
				for b.Loop() {
					if mode == "vec" {
						LangevinMove(p, g, 1e-3, std, rng)
						continue
					}
					for j := range p {
						if std == 0 {
							p[j] = T(float64(p[j]) - 1e-3*float64(g[j]))
						} else {
							p[j] = T(float64(p[j]) - 1e-3*float64(g[j]) + std*rng.NormFloat64())
						}
					}
				}
			})
		}
	}
}

func sizeOf[T Float]() int {
	var x T
	if any(x) == any(float32(0)) {
		return 4
	}
	return 8
}
