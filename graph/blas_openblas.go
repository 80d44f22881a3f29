//go:build openblas

package graph

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int);
// int openblas_get_num_threads(void);
// char* openblas_get_corename(void);
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// Under the openblas build tag every matrix product, ours and gorgonia's, goes through
// OpenBLAS (Debian: apt-get install libopenblas-dev), about 5× faster than gonum's pure-Go
// BLAS on this project's machines. OPENBLAS_CORETYPE=SkylakeX selects its AVX-512 kernels on
// CPUs that have them but that OpenBLAS 0.3.21 does not recognise.
//
// OpenBLAS runs single-threaded: its own thread pool spins in sched_yield whenever Go code runs
// between products (a quarter of a small CNN's step), and competes with the goroutines of
// parallel workers. Large products are split across cores by gemm instead, and convolutions
// split over images.
func init() {
	C.openblas_set_num_threads(1)
	blasCore = C.GoString(C.openblas_get_corename())
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
	G.Use(netlib.Implementation{})
}

// BLAS names the BLAS implementation matrix products use.
const BLAS = "openblas"

// gemmThreadsItself is false: OpenBLAS is single-threaded here and gemm splits products.
const gemmThreadsItself = false

const blasIsFast = true

// blasCore is OpenBLAS's name for the kernels it chose for this CPU (openblas_get_corename),
// set at start-up.
var blasCore string
