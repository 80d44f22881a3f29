package sgemm

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// The kernels against a scalar model of gemm's walk, bit for bit: each element's sum over a
// panel of kc terms is one correctly rounded float32 fused multiply-add a term from zero, in
// order (Kern4x24, Kern1x8, KernRows4, Kern8x48Z), or, for the rows in blocks of four outside
// the wide columns (Kern4x8), the even and the odd terms in two such chains, then even + odd;
// then C + that sum. These tests run both instruction sets' walks on this CPU where it has
// AVX-512, and say so where it does not.

// fma32 is the float32 fused multiply-add x·y + z, rounded once. float64's FMA rounds the exact
// value to 53 bits first; that second rounding to float32 differs from a single one only where
// the 53-bit result lies exactly halfway between two float32s, which big.Float then settles.
func fma32(x, y, z float32) float32 {
	r := math.FMA(float64(x), float64(y), float64(z))
	f := float32(r)
	if math.IsInf(r, 0) || math.IsNaN(r) || float64(f) == r {
		return f
	}
	lo, hi := f, f
	if float64(f) < r {
		hi = math.Nextafter32(f, float32(math.Inf(1)))
	} else {
		lo = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	if !math.IsInf(float64(hi), 0) && !math.IsInf(float64(lo), 0) && (float64(lo)+float64(hi))/2 != r {
		return f
	}
	// exact: x·y has 48 significant bits, and the sum of it and z fits in a few hundred
	p := new(big.Float).SetPrec(2048).SetFloat64(float64(x))
	p.Mul(p, new(big.Float).SetPrec(2048).SetFloat64(float64(y)))
	p.Add(p, new(big.Float).SetPrec(2048).SetFloat64(float64(z)))
	g, _ := p.Float32()
	return g
}

func TestFMA32(t *testing.T) {
	ulp := func(e int) float64 { return math.Ldexp(1, e) }
	for _, c := range []struct {
		x, y, z, want float64
		why           string
	}{
		{1 + ulp(-23), 1 + ulp(-23), -ulp(-22), 1, "1 + 2^-46 rounds to 1"},
		{1 + ulp(-12), 1 + ulp(-12), -ulp(-11), 1, "1 + 2^-24 exactly halfway: ties to even"},
		// exactly 1 + 2^-24 + 2^-70: float64 rounds it to the halfway point 1 + 2^-24, which
		// float32 would then round to even (1); rounded once, it goes up
		{-ulp(-12) * (1 - ulp(-23)), ulp(-12) * (1 + ulp(-23)), 1 + ulp(-23), 1 + ulp(-23), "just above halfway"},
	} {
		if got := fma32(float32(c.x), float32(c.y), float32(c.z)); float64(got) != c.want {
			t.Errorf("%s: fma32 = %v, want %v", c.why, got, c.want)
		}
	}
	x, y, z := float32(-ulp(-12)*(1-ulp(-23))), float32(ulp(-12)*(1+ulp(-23))), float32(1+ulp(-23))
	if float32(math.FMA(float64(x), float64(y), float64(z))) != 1 {
		t.Error("the double-rounding case no longer double-rounds: it tests nothing")
	}
}

// scalarGemm is gemm's result as the scalar model computes it.
func scalarGemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	at := func(i, p int) float32 {
		if ta {
			return a[p*lda+i]
		}
		return a[i*lda+p]
	}
	bt := func(p, j int) float32 {
		if tb {
			return b[j*ldb+p]
		}
		return b[p*ldb+j]
	}
	if beta != 0 && beta != 1 {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				c[i*ldc+j] *= beta
			}
		}
		beta = 1
	}
	m4, nWide := m-m%4, n-n%24
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s float32
				if i < m4 && j >= nWide { // Kern4x8
					var even, odd float32
					for p := 0; p < kb; p += 2 {
						even = fma32(at(i, p0+p), bt(p0+p, j), even)
						if p+1 < kb {
							odd = fma32(at(i, p0+p+1), bt(p0+p+1, j), odd)
						}
					}
					s = even + odd
				} else {
					for p := 0; p < kb; p++ {
						s = fma32(at(i, p0+p), bt(p0+p, j), s)
					}
				}
				if p0 > 0 || beta == 1 {
					s = c[i*ldc+j] + s
				}
				c[i*ldc+j] = s
			}
		}
	}
}

// scalarShapes are awkward shapes for both walks: rows around the 4- and 8-row blocks (and
// the ≤ 8 rows that stream B), columns around 8, 16, 24 and 48, single rows and columns, and
// depths around the panels of kc.
var scalarShapes = func() (s [][3]int) {
	for _, m := range []int{1, 3, 4, 8, 9, 17} {
		for _, n := range []int{1, 7, 16, 17, 24, 47, 48, 97} {
			for _, k := range []int{1, 3, 31, 257} {
				s = append(s, [3]int{m, n, k})
			}
		}
	}
	return append(s, [3]int{16, 100, 513}, [3]int{40, 144, 64}, [3]int{64, 1, 300}, [3]int{1, 200, 300})
}()

func checkScalar(t *testing.T, ks kernelSet) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range scalarShapes {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, beta := range []float32{0, 1, 0.5} {
					a, lda, b, ldb, c, ldc := operands[float32](rng, m, n, k, ta, tb)
					want := append([]float32(nil), c...)
					scalarGemm(ta, tb, m, n, k, a, lda, b, ldb, beta, want, ldc)
					got := append([]float32(nil), c...)
					gemm(ks, &bufs32, ta, tb, m, n, k, a, lda, b, ldb, beta, got, ldc)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("m%d n%d k%d ta %v tb %v beta %v: element (%d, %d) = %v, the scalar model gives %v",
								m, n, k, ta, tb, beta, i/ldc, i%ldc, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

func TestAVX2KernelsScalar(t *testing.T) {
	if !Available {
		t.Skip("this CPU lacks AVX2 and FMA: the AVX2 kernels cannot run here")
	}
	checkScalar(t, kernels32)
}

func TestAVX512KernelsScalar(t *testing.T) {
	if !HasAVX512 {
		t.Skip("this CPU (or its operating system) lacks AVX512F: the AVX-512 kernel cannot run here; the AVX2 kernels are tested by TestAVX2KernelsScalar")
	}
	checkScalar(t, kernels32z)
}

// TestKern8x48Z checks the kernel alone, bit for bit, on depths 0 to 40 and 256, both strides
// of A, padded leading dimensions and acc on and off.
func TestKern8x48Z(t *testing.T) {
	if !HasAVX512 {
		t.Skip("this CPU (or its operating system) lacks AVX512F: the AVX-512 kernel cannot run here")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, k := range append([]int{0, 1, 2, 3, 15, 16, 17, 40}, 256) {
		for _, ta := range []bool{false, true} {
			for _, acc := range []int{0, 1} {
				a, lda, b, ldb, c, ldc := operands[float32](rng, 8, 48, k, ta, false)
				want := append([]float32(nil), c...)
				for i := 0; i < 8; i++ {
					for j := 0; j < 48; j++ {
						var s float32
						for p := 0; p < k; p++ {
							var av float32
							if ta {
								av = a[p*lda+i]
							} else {
								av = a[i*lda+p]
							}
							s = fma32(av, b[p*ldb+j], s)
						}
						if acc != 0 {
							s = c[i*ldc+j] + s
						}
						want[i*ldc+j] = s
					}
				}
				ars, acs := lda*4, 4
				if ta {
					ars, acs = 4, lda*4
				}
				var ap, bp unsafe.Pointer
				if len(a) > 0 {
					ap = unsafe.Pointer(&a[0])
				}
				if len(b) > 0 {
					bp = unsafe.Pointer(&b[0])
				}
				Kern8x48Z(k, ap, ars, acs, bp, ldb*4, unsafe.Pointer(&c[0]), ldc*4, acc)
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
						t.Fatalf("k%d ta %v acc %d: element (%d, %d) = %v, want %v", k, ta, acc, i/ldc, i%ldc, c[i], want[i])
					}
				}
			}
		}
	}
}

// BenchmarkConvProducts times the products of ResNet-18's 3×3 convolutions on 28×28 inputs as
// graph's batched path calls them (a block of 192 columns: four 7×7 images, twelve 4×4, …):
// the forward W·cols and the input gradient Wᵀ·G, on the AVX2 kernels and with the AVX-512
// one.
func BenchmarkConvProducts(b *testing.B) {
	if !Available {
		b.Skip("no AVX2/FMA")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	sets := []struct {
		name string
		ks   kernelSet
	}{{"avx2", kernels32}}
	if HasAVX512 {
		sets = append(sets, struct {
			name string
			ks   kernelSet
		}{"avx512", kernels32z})
	}
	for _, f := range []int{64, 128, 256, 512} {
		const n = 192
		ckk := 9 * f
		w := make([]float32, f*ckk)
		cols := make([]float32, ckk*n)
		out := make([]float32, max(f, ckk)*n)
		for _, x := range [][]float32{w, cols, out} {
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
		}
		for _, s := range sets {
			b.Run(fmt.Sprintf("fwd-f%d/%s", f, s.name), func(b *testing.B) {
				b.SetBytes(int64(2 * f * n * ckk)) // flops, reported as MB/s = MFLOP/s
				for range b.N {
					gemm(s.ks, &bufs32, false, false, f, n, ckk, w, ckk, cols, n, 0, out, n)
				}
			})
			b.Run(fmt.Sprintf("backx-f%d/%s", f, s.name), func(b *testing.B) {
				b.SetBytes(int64(2 * f * n * ckk))
				for range b.N {
					gemm(s.ks, &bufs32, true, false, ckk, n, f, w, ckk, cols, n, 0, out, n)
				}
			})
		}
	}
}

// BenchmarkBigWalks times the two walks of C, with the AVX-512 blocks and without, on
// products whose panel of A outgrows the second-level cache.
func BenchmarkBigWalks(b *testing.B) {
	if !HasAVX512 {
		b.Skip("this CPU lacks AVX512F")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, s := range [][4]int{{2304, 200, 256, 1}, {2304, 200, 256, 0}, {4608, 100, 512, 1}, {576, 196, 64, 1}} {
		m, n, k, ta := s[0], s[1], s[2], s[3] == 1
		a, lda, bb, ldb, c, ldc := operands[float32](rng, m, n, k, ta, false)
		strips, strips2 := kernels32z, kernels32
		strips.tallAPanelBytes, strips2.tallAPanelBytes = 0, 0
		for _, v := range []struct {
			name string
			ks   kernelSet
		}{{"strips", strips}, {"chosen", kernels32z}, {"avx2-strips", strips2}, {"avx2-chosen", kernels32}} {
			b.Run(fmt.Sprintf("%dx%dx%d-ta%v/%s", m, n, k, ta, v.name), func(b *testing.B) {
				b.SetBytes(int64(2 * m * n * k))
				for range b.N {
					gemm(v.ks, &bufs32, ta, false, m, n, k, a, lda, bb, ldb, 0, c, ldc)
				}
			})
		}
	}
}

func TestTranspose8x8(t *testing.T) {
	if !Available {
		t.Skip("this CPU lacks AVX2")
	}
	const lds, ldd = 11, 13
	src := make([]float32, 8*lds)
	for i := range src {
		src[i] = float32(i)
	}
	dst := make([]float32, 8*ldd)
	for i := range dst {
		dst[i] = -1
	}
	Transpose8x8(unsafe.Pointer(&src[0]), lds*4, unsafe.Pointer(&dst[0]), ldd*4)
	for j := 0; j < 8; j++ {
		for i := 0; i < ldd; i++ {
			want := float32(-1)
			if i < 8 {
				want = src[i*lds+j]
			}
			if dst[j*ldd+i] != want {
				t.Fatalf("dst[%d][%d] = %v, want %v", j, i, dst[j*ldd+i], want)
			}
		}
	}
}
