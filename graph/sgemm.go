package graph

import (
	kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"
	"github.com/hyperflat/hyperflat/graph/internal/vec"
)

// sgemm is the float32 product of the AVX2/FMA kernels (graph/internal/sgemm); it reports false
// where the CPU lacks them.
func sgemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	if dotProducts(ta, tb, m, n, k) {
		// a few long dot products (a filter gradient of a first conv layer, say): rows of A
		// and B are both contiguous along k, so no transpose
		k8 := k &^ 7
		for i := 0; i < m; i++ {
			ar := a[i*lda:][:k]
			for j := 0; j < n; j++ {
				br := b[j*ldb:][:k]
				s := vec.DotF32(p32(ar), p32(br), k8)
				for p := k8; p < k; p++ {
					s += ar[p] * br[p]
				}
				if beta != 0 {
					s += beta * c[i*ldc+j]
				}
				c[i*ldc+j] = s
			}
		}
		return true
	}
	return kern.Gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

// dotProducts says whether sgemm computes op(a)·op(b) as separate dot products.
func dotProducts(ta, tb bool, m, n, k int) bool {
	return tb && !ta && haveVec && k >= 128 && m*n <= 1024
}

var haveSgemmKernels = kern.Available
