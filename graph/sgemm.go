package graph

import kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"

// sgemm is the float32 product of the AVX2/FMA kernels (graph/internal/sgemm); it reports false
// where the CPU lacks them.
func sgemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	return kern.Gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

var haveSgemmKernels = kern.Available
