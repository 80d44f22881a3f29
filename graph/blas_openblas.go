//go:build openblas

package graph

// #cgo LDFLAGS: -lopenblas
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
func init() {
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
	G.Use(netlib.Implementation{})
}

// BLAS names the BLAS implementation matrix products use.
const BLAS = "openblas"
