package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hyperflat/hyperflat/graph/internal/vec"
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

// TestAdamF32Paths: each float32 Adam path (AVX-512, AVX2, and the scalar loop alone) gives
// adamScalar's bits in p, m and v, and its report of a non-finite p, on lengths around the
// 16- and 8-lane blocks, with zeros of either sign, subnormals, huge values, infinities and
// NaNs among the inputs, in every form (ε in PyTorch's place or ε̂, with and without weight
// decay).
func TestAdamF32Paths(t *testing.T) {
	defer func(v, z bool) { haveVec, adam512 = v, z }(haveVec, adam512)
	paths := []struct {
		name     string
		vec, avx bool
	}{{"avx512", true, true}, {"avx2", true, false}, {"scalar", false, false}}
	for _, path := range paths {
		if path.vec && !vec.Available {
			t.Logf("%s: skipped, the CPU lacks AVX2/FMA", path.name)
			continue
		}
		if path.avx && !vec.HasAVX512 {
			t.Logf("%s: skipped, the CPU lacks AVX512F", path.name)
			continue
		}
		haveVec, adam512 = path.vec, path.avx
		rng := rand.New(rand.NewPCG(7, 8))
		special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -3e-39, 1e30, -1e30, 3e38,
			float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 47, 48, 63, 100, 2*optimGrain + 13} {
			for _, form := range []struct {
				wd  float32
				hat bool
			}{{0, false}, {1e-2, false}, {0, true}, {1e-2, true}} {
				for _, odd := range []float64{0, 0.02} { // the share of special inputs
					c := AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: float32(1e-3 / (1 - math.Pow(0.9, 3))),
						Bc2: float32(math.Sqrt(1 - math.Pow(0.999, 3))), Eps: 1e-8, WD: form.wd, Hat: form.hat}
					mk := func(sq bool) []float32 {
						s := make([]float32, n)
						for i := range s {
							x := float32(rng.NormFloat64() * math.Exp(4*rng.NormFloat64()))
							if rng.Float64() < odd {
								x = special[rng.IntN(len(special))]
							}
							if sq && x < 0 {
								x = -x
							}
							s[i] = x
						}
						return s
					}
					p, g, m, v := mk(false), mk(false), mk(false), mk(true)
					p2, m2, v2 := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
					bad := AdamUpdate(p, g, m, v, c)
					bad2 := adamScalar(p2, g, m2, v2, c)
					if bad != bad2 {
						t.Fatalf("%s n=%d %+v: non-finite reported %v, scalar %v", path.name, n, form, bad, bad2)
					}
					for i := range p {
						if math.Float32bits(p[i]) != math.Float32bits(p2[i]) || math.Float32bits(m[i]) != math.Float32bits(m2[i]) ||
							math.Float32bits(v[i]) != math.Float32bits(v2[i]) {
							t.Fatalf("%s n=%d %+v: element %d: (%v %v %v), scalar (%v %v %v)", path.name, n, form, i, p[i], m[i], v[i], p2[i], m2[i], v2[i])
						}
					}
					if odd == 0 { // one infinite gradient, anywhere, is reported
						at := rng.IntN(n)
						g[at] = float32(math.Inf(-1))
						if !AdamUpdate(p, g, m, v, c) {
							t.Fatalf("%s n=%d: an infinite gradient at %d was not reported", path.name, n, at)
						}
					}
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

// resnet18CIFARSizes are the lengths of layers.ResNet18(3, 10)'s parameter tensors, in the order
// of its layers: the stem, four stages of two basic blocks (two 3×3 convolutions each, a 1×1
// downsampling convolution in the first block of stages 2–4), each convolution followed by a
// batch norm's scale and shift, and the 512→10 head (11.18 M weights).
func resnet18CIFARSizes() []int {
	s := []int{64 * 3 * 7 * 7, 64, 64}
	in := 64
	for stage, out := range []int{64, 128, 256, 512} {
		for block := 0; block < 2; block++ {
			s = append(s, out*in*9, out, out, out*out*9, out, out)
			if block == 0 && stage > 0 {
				s = append(s, out*in, out, out)
			}
			in = out
		}
	}
	return append(s, 10*512, 10)
}

// BenchmarkAdamResNet18 times one Adam step (PyTorch's form) over the CIFAR ResNet-18's
// parameter tensors, one AdamUpdate call per tensor as samplers.Adam makes them: 11.18 M
// float32 weights, 313 MB read or written a step, far more than the caches hold.
func BenchmarkAdamResNet18(b *testing.B) {
	var ps, gs, ms, vs [][]float32
	total := 0
	for _, n := range resnet18CIFARSizes() {
		p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range p {
			p[i], g[i], m[i], v[i] = 0.1, 1e-4, 1e-5, 1e-8
		}
		ps, gs, ms, vs = append(ps, p), append(gs, g), append(ms, m), append(vs, v)
		total += n
	}
	c := AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: 1e-3, Bc2: 0.5, Eps: 1e-8}
	b.SetBytes(int64(total) * 4 * 7)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for i := range ps {
			AdamUpdate(ps[i], gs[i], ms[i], vs[i], c)
		}
	}
}
