package graph

import kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"

// Kernels names what computes this process's float32 matrix products and convolutions, for
// benchmark reports: graph's own kernels' vector extension, chosen at start-up from CPUID
// ("avx512", "avx2+fma", or "none" where the CPU has neither and the BLAS computes them all;
// HYPERFLAT_SIMD=avx2 forces the second), and the BLAS with, under the openblas build,
// OpenBLAS's name for the kernels it chose (openblas_get_corename: OPENBLAS_CORETYPE, where
// set, decides it), which computes the products graph's kernels leave to it.
func Kernels() (ext, blas string) {
	blas = BLAS
	if blasCore != "" {
		blas += " " + blasCore
	}
	return kern.Extension(), blas
}
