//go:build openblas

package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmZenNT: gemmZenNT gives OpenBLAS's own bits for dY·Wᵀ with four rows of dY, on the
// layer shapes the experiments have (widths 16 to 1,024 on either side) and others (rows of W
// not a multiple of 4, panels of 8 and 2,048 deep, operands with padding between rows, as a
// product's pieces have them), with zeros of both signs, subnormals and a wide range of
// magnitudes; it declines inner dimensions whose panels its kernel does not cover.
func TestGemmZenNT(t *testing.T) {
	if !zenOrder() {
		t.Skipf("OpenBLAS chose its %q kernels; gemmZenNT reproduces only Zen's", blasCore)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	draw := func(n int) []float32 { return someFloat32s(rng, n) }
	ns := []int{1, 8, 15, 16, 17, 24, 32, 40, 64, 100, 104, 120, 128, 200, 256, 512, 1000, 1016, 1024}
	ks := []int{8, 16, 64, 128, 256, 512, 1024, 2048, 1040, 704, 656}
	for _, n := range ns {
		for _, k := range ks {
			for _, pad := range []int{0, 3} {
				lda, ldb, ldc := k+pad, k+2*pad, n+pad
				a, b := draw(4*lda), draw(n*ldb)
				want, got := draw(4*ldc), make([]float32, 4*ldc)
				copy(got, want)
				gemmBLAS(false, true, 4, n, k, a, lda, b, ldb, 0, want, ldc)
				var stack [8]int
				_, covered := zenPanels(k, stack[:0])
				covered = covered && n >= zenMinRows && n%8 == 0
				if ok := gemmZenNT(n, k, a, lda, b, ldb, got, ldc); ok != covered {
					t.Fatalf("n=%d k=%d: gemmZenNT reports %v, want %v", n, k, ok, covered)
				}
				if !covered {
					continue
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("n=%d k=%d pad=%d: entry %d (row %d) is %v, OpenBLAS's %v", n, k, pad, i, i/ldc, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestZenPanels pins the driver's blocking: 320 at a time while 640 are left, then halves.
func TestZenPanels(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want string
		ok   bool
	}{
		{64, "[64]", true}, {320, "[320]", true}, {512, "[256 256]", true},
		{1024, "[320 320 192 192]", true}, {2048, "[320 320 320 320 320 224 224]", true},
		{100, "[]", false}, {700, "[320]", false},
	} {
		got, ok := zenPanels(tc.k, nil)
		if fmt.Sprint(got) != tc.want || ok != tc.ok {
			t.Errorf("zenPanels(%d) = %v, %v; want %s, %v", tc.k, got, ok, tc.want, tc.ok)
		}
	}
}

// BenchmarkGemmZenNT times dY·Wᵀ for a batch of four (W 1,024 × 1,024) through OpenBLAS and
// through gemmZenNT.
func BenchmarkGemmZenNT(b *testing.B) {
	if !zenOrder() {
		b.Skipf("OpenBLAS chose its %q kernels", blasCore)
	}
	const n, k = 1024, 1024
	rng := rand.New(rand.NewPCG(1, 2))
	a, w, c := make([]float32, 4*k), make([]float32, n*k), make([]float32, 4*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	b.Run("openblas", func(b *testing.B) {
		for range b.N {
			gemmBLAS(false, true, 4, n, k, a, k, w, k, 0, c, n)
		}
	})
	b.Run("zen", func(b *testing.B) {
		for range b.N {
			gemmZenNT(n, k, a, k, w, k, c, n)
		}
	})
}
