package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"
)

// TestDgemmKernels compares the float64 AVX2/FMA kernels bit for bit with a scalar reference
// that sums in their order (a fused multiply-add chain over each panel of 256 products, each
// panel's sum then added to C), on awkward shapes, transposes, leading dimensions and betas,
// and within rounding with a plain triple loop.
func TestDgemmKernels(t *testing.T) {
	if !haveSgemmKernels {
		t.Skip("no AVX2/FMA: the float64 products use the BLAS")
	}
	const kc = 256 // the kernels' panel depth
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := [][3]int{{1, 1, 1}, {4, 12, 1}, {4, 4, 2}, {5, 13, 3}, {3, 7, 9}, {8, 30, 64}, {30, 512, 32}, {32, 30, 512}, {7, 33, 300}, {9, 50, 513}, {64, 1, 17}, {1, 100, 2}, {6, 3, 0}}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, beta := range []float64{0, 1, 0.5} {
					a, lda, b, ldb, c, ldc := gemmOperands[float64](rng, m, n, k, ta, tb)
					at := func(i, p int) float64 {
						if ta {
							return a[p*lda+i]
						}
						return a[i*lda+p]
					}
					bt := func(p, j int) float64 {
						if tb {
							return b[j*ldb+p]
						}
						return b[p*ldb+j]
					}
					exact, plain := make([]float64, len(c)), make([]float64, len(c))
					copy(exact, c)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							old := c[i*ldc+j]
							v := beta * old
							if beta == 1 {
								v = old
							}
							sum := 0.0
							for p0 := 0; p0 < k; p0 += kc {
								panel := 0.0
								for p := p0; p < min(k, p0+kc); p++ {
									panel = math.FMA(at(i, p), bt(p, j), panel)
									sum += at(i, p) * bt(p, j)
								}
								if p0 == 0 && beta == 0 {
									v = panel
								} else {
									v += panel
								}
							}
							if k == 0 && beta == 0 {
								v = 0
							}
							exact[i*ldc+j] = v
							plain[i*ldc+j] = sum + beta*old
						}
					}
					if !kern.DGemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc) {
						t.Fatal("DGemm reported no kernels")
					}
					for i := range c {
						if math.Float64bits(c[i]) != math.Float64bits(exact[i]) {
							t.Fatalf("m%d n%d k%d ta %v tb %v beta %v: element %d = %v, want %v bit for bit", m, n, k, ta, tb, beta, i, c[i], exact[i])
						}
						if i%ldc < n {
							if d := math.Abs(c[i] - plain[i]); d > 1e-12*(1+float64(k)) {
								t.Fatalf("m%d n%d k%d: element %d = %v, triple loop %v", m, n, k, i, c[i], plain[i])
							}
						}
					}
				}
			}
		}
	}
}
