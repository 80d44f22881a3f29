//go:build !openblas

package graph

// BLAS names the BLAS implementation matrix products use: gonum's pure-Go one by default, or
// OpenBLAS when built with -tags openblas.
const BLAS = "gonum"

// gemmThreadsItself: gonum's pure-Go gemm already splits large products across goroutines.
const gemmThreadsItself = true

// blasIsFast: gonum's float32 kernels are scalar, so float32 products always use this
// package's kernels where the CPU has them.
const blasIsFast = false

// blasCore is OpenBLAS's name for the kernels it chose (openblas_get_corename); "" here.
var blasCore string
