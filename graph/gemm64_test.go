package graph

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkGemm64 times the float64 products of the OpenML MLP's step (batch 32, width 512)
// and of a Bayesmark MLP's (breast cancer: batch 128, 30 features, 150 hidden units, 2
// classes): gemm as the graph runs it (graph's kernels in the pure-Go build), serially, and
// the build's BLAS alone (gonum, or OpenBLAS under the openblas tag), for comparison.
func BenchmarkGemm64(b *testing.B) {
	for _, s := range []struct {
		ta, tb  bool
		m, n, k int
	}{{false, false, 32, 512, 512}, {false, true, 32, 512, 512}, {true, false, 512, 512, 32},
		{false, false, 128, 150, 30}, {true, false, 30, 150, 128}, {false, false, 128, 2, 150}, {true, false, 150, 2, 128}, {false, true, 128, 150, 2}} {
		a := make([]float64, s.m*s.k)
		bb := make([]float64, s.k*s.n)
		c := make([]float64, s.m*s.n)
		for i := range a {
			a[i] = float64(i%7) - 3
		}
		for i := range bb {
			bb[i] = float64(i%5) - 2
		}
		lda, ldb := leadingDims(s.ta, s.tb, s.m, s.n, s.k)
		flops := 2 * float64(s.m*s.n*s.k)
		for _, path := range []string{"", "serial_", "blas_"} {
			b.Run(fmt.Sprintf("%s%v%v_%dx%dx%d", path, s.ta, s.tb, s.m, s.n, s.k), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					switch path {
					case "":
						gemm(s.ta, s.tb, s.m, s.n, s.k, a, bb, c)
					case "serial_":
						gemmSerial(s.ta, s.tb, s.m, s.n, s.k, a, bb, 0, c)
					default:
						gemmBLAS(s.ta, s.tb, s.m, s.n, s.k, a, lda, bb, ldb, 0, c, s.n)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// TestGemmDeterministicAcrossCores: a large product is split the same way on one core as on
// several, so its result does not depend on the cores (with OpenBLAS, whose rounding depends
// on a product's width, as with this package's kernels).
func TestGemmDeterministicAcrossCores(t *testing.T) {
	testGemmDet[float32](t)
	testGemmDet[float64](t)
}

func testGemmDet[T Float](t *testing.T) {
	for _, s := range []struct {
		ta, tb  bool
		m, n, k int
	}{{false, false, 128, 256, 784}, {true, false, 784, 256, 128}, {false, true, 128, 784, 256}, {false, true, 64, 576, 2450}, {true, true, 300, 40, 500}} {
		a := make([]T, s.m*s.k)
		bb := make([]T, s.k*s.n)
		for i := range a {
			a[i] = T(math.Sin(float64(i)))
		}
		for i := range bb {
			bb[i] = T(math.Cos(float64(3 * i)))
		}
		all := make([]T, s.m*s.n)
		one := make([]T, s.m*s.n)
		gemm(s.ta, s.tb, s.m, s.n, s.k, a, bb, all)
		done := Concurrent(64)
		gemm(s.ta, s.tb, s.m, s.n, s.k, a, bb, one)
		done()
		for i := range all {
			if all[i] != one[i] {
				t.Fatalf("%T %+v: element %d is %v on all cores, %v on one", all[0], s, i, all[i], one[i])
			}
		}
	}
}
