package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNarrowTransposedSameBits checks that Aᵀ·B of at most 4 columns through KernNarrowTZ
// gives exactly the products of the walk without it (Kern8x16ZN's blocks, and the AVX2
// walk's), on row counts around the kernel's 16 and the walk's blocks of 8 and 4, depths
// around the panels of kc (odd ones included), B transposed or not, and betas 0, 1 and 0.5.
func TestNarrowTransposedSameBits(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512: KernNarrowTZ is not used")
	}
	direct := kernels32z
	direct.narrowT = nil
	rng := rand.New(rand.NewPCG(9, 10))
	for _, m := range []int{15, 16, 17, 24, 31, 45, 100, 1024} {
		for n := 1; n <= 5; n++ {
			for _, k := range []int{1, 2, 31, 33, 256, 257, 600} {
				for _, tb := range []bool{false, true} {
					for _, beta := range []float32{0, 1, 0.5} {
						a, lda, b, ldb, c, ldc := operands[float32](rng, m, n, k, true, tb)
						got := append([]float32(nil), c...)
						gemm(kernels32z, &bufs32, true, tb, m, n, k, a, lda, b, ldb, beta, got, ldc)
						for _, ks := range []kernelSet{direct, kernels32} {
							want := append([]float32(nil), c...)
							gemm(ks, &bufs32, true, tb, m, n, k, a, lda, b, ldb, beta, want, ldc)
							for i := range got {
								if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
									t.Fatalf("m%d n%d k%d tb %v beta %v: element %d = %v, the walk without KernNarrowTZ gives %v", m, n, k, tb, beta, i, got[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkNarrowTransposed weighs KernNarrowTZ against the walk's Kern8x16ZN blocks on a
// last layer's weight gradient, 1,024 × 2 over 256 rows (2.2 to 2.8 times as fast on a loaded
// Zen 5): `go test -bench NarrowTransposed ./graph/internal/sgemm`.
func BenchmarkNarrowTransposed(b *testing.B) {
	if !HasAVX512 {
		b.Skip("no AVX-512: KernNarrowTZ is not used")
	}
	direct := kernels32z
	direct.narrowT = nil
	const m, n, k = 1024, 2, 256
	rng := rand.New(rand.NewPCG(11, 12))
	a, lda, bm, ldb, c, ldc := operands[float32](rng, m, n, k, true, false)
	for _, v := range []struct {
		name string
		ks   kernelSet
	}{{"walk", direct}, {"narrow", kernels32z}} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				gemm(v.ks, &bufs32, true, false, m, n, k, a, lda, bm, ldb, 0, c, ldc)
			}
		})
	}
}
