package graph

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestSgemmKernels compares the AVX2 kernels with a plain triple loop on awkward shapes,
// transposes, leading dimensions and betas.
func TestSgemmKernels(t *testing.T) {
	if !haveSgemmKernels {
		t.Skip("no AVX2/FMA")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {4, 24, 1}, {5, 25, 3}, {3, 7, 9}, {16, 784, 9}, {32, 196, 144}, {144, 196, 32}, {128, 10, 256}, {7, 33, 300}, {9, 50, 513}, {64, 1, 17}, {1, 100, 2}}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, beta := range []float32{0, 1, 0.5} {
					a, lda, b, ldb, c, ldc := gemmOperands[float32](rng, m, n, k, ta, tb)
					want := make([]float64, len(c))
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							s := 0.0
							for p := 0; p < k; p++ {
								var av, bv float32
								if ta {
									av = a[p*lda+i]
								} else {
									av = a[i*lda+p]
								}
								if tb {
									bv = b[j*ldb+p]
								} else {
									bv = b[p*ldb+j]
								}
								s += float64(av) * float64(bv)
							}
							want[i*ldc+j] = s + float64(beta)*float64(c[i*ldc+j])
						}
						for j := n; j < ldc; j++ {
							want[i*ldc+j] = float64(c[i*ldc+j])
						}
					}
					sgemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
					for i := range c {
						if d := math.Abs(float64(c[i]) - want[i]); d > 1e-4*(1+math.Sqrt(float64(k))) {
							t.Fatalf("m%d n%d k%d ta %v tb %v beta %v: element %d = %v, want %v", m, n, k, ta, tb, beta, i, c[i], want[i])
						}
					}
				}
			}
		}
	}
}

// normals is n standard normal float32s.
func normals(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// gemmOperands draws standard normal operands of op(A) m×k, op(B) k×n and C m×n, stored
// row-major with leading dimensions larger than the rows (padding the kernels must not touch).
func gemmOperands[T float32 | float64](rng *rand.Rand, m, n, k int, ta, tb bool) (a []T, lda int, b []T, ldb int, c []T, ldc int) {
	const pad = 3
	ar, br := m, k
	lda, ldb, ldc = k+pad, n+pad, n+2
	if ta {
		ar, lda = k, m+pad
	}
	if tb {
		br, ldb = n, k+pad
	}
	a, b, c = make([]T, ar*lda), make([]T, br*ldb), make([]T, m*ldc)
	for _, x := range [][]T{a, b, c} {
		for i := range x {
			x[i] = T(rng.NormFloat64())
		}
	}
	return a, lda, b, ldb, c, ldc
}

// TestSgemmSpeed prints, for the products of the benchmark models, the best-of-rounds speed of
// the kernels here and of the BLAS in use (SGEMM_SPEED=1 to run).
func TestSgemmSpeed(t *testing.T) {
	if os.Getenv("SGEMM_SPEED") == "" {
		t.Skip("set SGEMM_SPEED=1")
	}
	type shape struct {
		name    string
		ta, tb  bool
		m, n, k int
	}
	shapes := []shape{
		{"mlp fwd1", false, false, 128, 256, 784}, {"mlp dW1", true, false, 784, 256, 128},
		{"mlp fwd2", false, false, 128, 256, 256}, {"mlp dW2", true, false, 256, 256, 128}, {"mlp dX2", false, true, 128, 256, 256},
		{"mlp fwd3", false, false, 128, 10, 256}, {"mlp dW3", true, false, 256, 10, 128}, {"mlp dX3", false, true, 128, 256, 10},
		{"conv1 fwd", false, false, 16, 784, 9}, {"conv1 dW", false, true, 16, 9, 784},
		{"conv2 fwd", false, false, 32, 196, 144}, {"conv2 dX", true, false, 144, 196, 32}, {"conv2 dW", false, true, 32, 144, 196},
		{"dense fwd", false, false, 64, 10, 1568}, {"dense dW", true, false, 1568, 10, 64}, {"dense dX", false, true, 64, 1568, 10},
		// ResNet-18's 3×3 convolutions at batch 50 on 28×28 inputs (7×7 to 1×1 maps), as the
		// batched path multiplies them: forward and input gradient in blocks of ~192 columns,
		// filter gradient over a block of images
		{"r18 7 fwd", false, false, 64, 196, 576}, {"r18 7 dX", true, false, 576, 196, 64}, {"r18 7 dW", false, true, 64, 576, 1225},
		{"r18 4 fwd", false, false, 128, 192, 1152}, {"r18 4 dW", false, true, 128, 1152, 800},
		{"r18 2 fwd", false, false, 256, 200, 2304}, {"r18 2 dX", true, false, 2304, 200, 256}, {"r18 2 dW", false, true, 256, 2304, 200},
		{"r18 1 fwd", false, false, 512, 50, 512}, {"r18 1 dW", false, true, 512, 512, 50},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range shapes {
		a := make([]float32, s.m*s.k)
		b := make([]float32, s.k*s.n)
		c := make([]float32, s.m*s.n)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		lda, ldb := leadingDims(s.ta, s.tb, s.m, s.n, s.k)
		flops := 2 * float64(s.m*s.n*s.k)
		reps := max(1, int(2e8/flops))
		best := [2]float64{math.Inf(1), math.Inf(1)}
		for r := 0; r < 7; r++ {
			for path := 0; path < 2; path++ {
				t0 := time.Now()
				for i := 0; i < reps; i++ {
					if path == 0 {
						sgemm(s.ta, s.tb, s.m, s.n, s.k, a, lda, b, ldb, 0, c, s.n)
					} else {
						gemmBLAS(s.ta, s.tb, s.m, s.n, s.k, a, lda, b, ldb, 0, c, s.n)
					}
				}
				best[path] = min(best[path], time.Since(t0).Seconds()/float64(reps))
			}
		}
		t.Logf("%-10s %4d×%4d×%4d  kernels %6.1f GFLOP/s  %s %6.1f GFLOP/s", s.name, s.m, s.n, s.k, flops/best[0]/1e9, BLAS, flops/best[1]/1e9)
	}
}

// TestIm2colSame compares the stride-1 fast path with the general layout.
func TestIm2colSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, g := range []struct{ h, w, kh, kw, ph, pw, pb, pr int }{
		{5, 5, 3, 3, 1, 1, 1, 1}, {4, 6, 2, 4, 0, 1, 1, 2}, {3, 3, 3, 3, 1, 1, 1, 1}, {2, 7, 5, 5, 2, 2, 2, 2}, {6, 4, 1, 1, 0, 0, 0, 0}, {1, 3, 3, 3, 1, 1, 1, 1},
	} {
		w := window{N: 1, C: 2, H: g.h, W: g.w, KH: g.kh, KW: g.kw, SH: 1, SW: 1, PH: g.ph, PW: g.pw, PB: g.pb, PR: g.pr}
		w.OH = (g.h+g.ph+g.pb-g.kh)/1 + 1
		w.OW = (g.w+g.pw+g.pr-g.kw)/1 + 1
		if w.OW != w.W {
			t.Fatalf("bad case %+v", g)
		}
		img := make([]float64, w.C*w.H*w.W)
		for i := range img {
			img[i] = rng.NormFloat64()
		}
		n := w.C * w.KH * w.KW * w.OH * w.OW
		got, want := make([]float64, n), make([]float64, n)
		for i := range got {
			got[i], want[i] = 99, 99
		}
		im2colImage(w, img, got)
		w2 := w
		w2.OW++ // defeat the fast path: compute the general layout of a wider output
		wide := make([]float64, w.C*w.KH*w.KW*w.OH*w2.OW)
		w2.PR++
		im2colImage(w2, img, wide)
		for r := 0; r < w.C*w.KH*w.KW; r++ {
			for oh := 0; oh < w.OH; oh++ {
				copy(want[(r*w.OH+oh)*w.OW:][:w.OW], wide[(r*w.OH+oh)*w2.OW:][:w.OW])
			}
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%+v: element %d = %v, want %v", g, i, got[i], want[i])
			}
		}
	}
}

// TestCol2imSame compares the stride-1 fast path of col2im with the general one.
func TestCol2imSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, g := range []struct{ h, w, kh, kw, ph, pw, pb, pr int }{
		{5, 5, 3, 3, 1, 1, 1, 1}, {4, 6, 2, 4, 0, 1, 1, 2}, {3, 3, 3, 3, 1, 1, 1, 1}, {2, 7, 5, 5, 2, 2, 2, 2}, {6, 4, 1, 1, 0, 0, 0, 0}, {1, 3, 3, 3, 1, 1, 1, 1},
	} {
		w := window{N: 1, C: 2, H: g.h, W: g.w, KH: g.kh, KW: g.kw, SH: 1, SW: 1, PH: g.ph, PW: g.pw, PB: g.pb, PR: g.pr}
		w.OH = g.h + g.ph + g.pb - g.kh + 1
		w.OW = g.w + g.pw + g.pr - g.kw + 1
		n := w.C * w.KH * w.KW * w.OH * w.OW
		cols := make([]float32, n)
		for i := range cols {
			cols[i] = float32(rng.NormFloat64())
		}
		// general path: the same columns inside a layout one column wider (extra right pad)
		w2 := w
		w2.OW++
		w2.PR++
		wide := make([]float32, w.C*w.KH*w.KW*w.OH*w2.OW)
		for r := 0; r < w.C*w.KH*w.KW; r++ {
			for oh := 0; oh < w.OH; oh++ {
				copy(wide[(r*w.OH+oh)*w2.OW:][:w.OW], cols[(r*w.OH+oh)*w.OW:][:w.OW])
			}
		}
		want := make([]float32, w.C*w.H*w.W)
		col2imImage(w2, wide, want)
		got := make([]float32, len(want))
		col2imImage(w, append([]float32(nil), cols...), got)
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-5 {
				t.Fatalf("%+v: element %d = %v, want %v", g, i, got[i], want[i])
			}
		}
	}
}

// TestKernelsWholeSameBits checks that a product gemmSupport computes in one call on one core
// (kernelsWhole) equals, to the bit, the same product computed in the pieces it is split into
// on several, and that kernelsWhole refuses the shapes where a piece would take another path.
func TestKernelsWholeSameBits(t *testing.T) {
	if !haveSgemmKernels {
		t.Skip("no AVX2/FMA")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range []struct {
		ta, tb  bool
		m, n, k int
	}{
		{false, false, 4, 1024, 1024}, {false, false, 3, 1000, 700}, {false, false, 16, 300, 500},
		{true, false, 1024, 1024, 4}, {true, false, 999, 130, 40}, {false, true, 4, 1024, 1024},
		{false, true, 4, 100, 3000}, {false, false, 2, 100, 6000}, {true, true, 70, 50, 400},
	} {
		a, b := normals(rng, s.m*s.k), normals(rng, s.k*s.n) // contiguous, as gemmSupport takes them
		lda, ldb := leadingDims(s.ta, s.tb, s.m, s.n, s.k)
		if !kernelsWhole[float32](s.ta, s.tb, s.m, s.n, s.k) || s.m*s.n*s.k < gemmSplitFlops {
			t.Logf("%+v: split (or small) on one core too", s)
			continue
		}
		got := make([]float32, s.m*s.n)
		gemmSupport(s.ta, s.tb, s.m, s.n, s.k, a, b, 0, got, nil, nil, nil)
		want := make([]float32, s.m*s.n)
		_, _, pieces := pieceBounds(s.n, pieceCols, 0) // as gemmSupport splits: rows when m ≥ n, else columns
		if s.m >= s.n {
			_, _, pieces = pieceBounds(s.m, 8, 0)
		}
		for q := range pieces {
			if s.m >= s.n {
				r0, r1, _ := pieceBounds(s.m, 8, q)
				ao := r0 * s.k
				if s.ta {
					ao = r0
				}
				gemmLD(s.ta, s.tb, r1-r0, s.n, s.k, a[ao:], lda, b, ldb, 0, want[r0*s.n:], s.n)
			} else {
				c0, c1, _ := pieceBounds(s.n, pieceCols, q)
				bo := c0
				if s.tb {
					bo = c0 * s.k
				}
				gemmLD(s.ta, s.tb, s.m, c1-c0, s.k, a, lda, b[bo:], ldb, 0, want[c0:], s.n)
			}
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: element %d = %v whole, %v in pieces", s, i, got[i], want[i])
			}
		}
	}
	for _, s := range [][3]int{{4, 100, 3000}, {2, 100, 6000}} { // a piece of 4 columns: the BLAS
		if blasIsFast && kernelsWhole[float32](false, false, s[0], s[1], s[2]) {
			t.Errorf("%v: kernelsWhole, though its last piece goes to the BLAS", s)
		}
	}
	if kernelsWhole[float32](false, true, 4, 1024, 1024) { // pieces: dot products, or the BLAS
		t.Error("4×1024×1024 with B transposed: kernelsWhole")
	}
}

// TestPieceColsSameBits: splitting a product by columns in pieces of 48 (pieceCols on an
// AVX-512 CPU) rather than 24 gives the same bits on the CIFAR ResNet-18's filter gradients
// (m filters × n = channels·taps over k = batch·pixels, B transposed), where each piece's
// columns take the kernels, or the BLAS, either way: the kernels sum in the same order at
// every width.
func TestPieceColsSameBits(t *testing.T) {
	if !haveSgemmKernels {
		t.Skip("no AVX2/FMA")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(c int) { pieceCols = c }(pieceCols)
	rng := rand.New(rand.NewPCG(53, 48))
	for _, s := range [][3]int{{64, 147, 12800}, {64, 576, 3200}, {128, 576, 800}, {128, 1152, 800}, {256, 1152, 200}, {256, 2304, 200}, {40, 1000, 300}} {
		m, n, k := s[0], s[1], s[2]
		a, b := normals(rng, m*k), normals(rng, n*k)
		var got [2][]float32
		for i, w := range []int{24, 48} {
			pieceCols = w
			got[i] = make([]float32, m*n)
			gemmSupport(false, true, m, n, k, a, b, 0, got[i], nil, nil, nil)
		}
		for i := range got[0] {
			if math.Float32bits(got[0][i]) != math.Float32bits(got[1][i]) {
				t.Fatalf("%v: element %d = %v in pieces of 24 columns, %v of 48", s, i, got[0][i], got[1][i])
			}
		}
	}
}
