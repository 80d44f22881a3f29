package graph

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkGemm64 times the float64 products of the OpenML MLP's step (batch 32, width 512).
func BenchmarkGemm64(b *testing.B) {
	for _, s := range []struct {
		ta, tb  bool
		m, n, k int
	}{{false, false, 32, 512, 512}, {false, true, 32, 512, 512}, {true, false, 512, 512, 32}} {
		a := make([]float64, s.m*s.k)
		bb := make([]float64, s.k*s.n)
		c := make([]float64, s.m*s.n)
		for i := range a {
			a[i] = float64(i%7) - 3
		}
		for i := range bb {
			bb[i] = float64(i%5) - 2
		}
		b.Run(fmt.Sprintf("%v%v_%dx%dx%d", s.ta, s.tb, s.m, s.n, s.k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				gemm(s.ta, s.tb, s.m, s.n, s.k, a, bb, c)
			}
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("serial_%v%v_%dx%dx%d", s.ta, s.tb, s.m, s.n, s.k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				gemmSerial(s.ta, s.tb, s.m, s.n, s.k, a, bb, 0, c)
			}
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
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
