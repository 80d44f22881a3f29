package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// randomMatrix has r·c standard normal entries, each kept with probability fill, else zero.
func randomMatrix(rng *rand.Rand, r, c int, fill float64) []float64 {
	a := make([]float64, r*c)
	for i := range a {
		if rng.Float64() < fill {
			a[i] = rng.NormFloat64()
		}
	}
	return a
}

// refSparse is c = op(a)·b + beta·c with each output's terms added in increasing k, each by
// one float64 fused multiply-add, skipping zeros of op(a): what gemmSparse promises.
func refSparse(ta bool, m, n, k int, a, b []float64, beta float64, c []float64) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := 0.0
			if beta != 0 {
				acc = beta * c[i*n+j]
			}
			for p := 0; p < k; p++ {
				v := a[i*k+p]
				if ta {
					v = a[p*m+i]
				}
				if v != 0 {
					acc = math.FMA(v, b[p*n+j], acc)
				}
			}
			c[i*n+j] = acc
		}
	}
}

func TestGemmSparse(t *testing.T) {
	t.Run("kernels", testGemmSparse)
	t.Run("go", func(t *testing.T) {
		// the code path of CPUs without AVX2
		was := haveVec
		haveVec = false
		defer func() { haveVec = was }()
		testGemmSparse(t)
	})
}

func testGemmSparse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range []struct{ m, n, k int }{{37, 45, 300}, {300, 33, 40}, {16, 8, 1024}, {5, 1030, 64}} {
		for _, ta := range []bool{false, true} {
			for _, beta := range []float64{0, 1, 0.5} {
				name := fmt.Sprintf("%dx%dx%d/ta=%v/beta=%v", sh.m, sh.n, sh.k, ta, beta)
				a := randomMatrix(rng, sh.m, sh.k, 0.03)
				b := randomMatrix(rng, sh.k, sh.n, 1)
				c0 := randomMatrix(rng, sh.m, sh.n, 1)
				want := append([]float64(nil), c0...)
				refSparse(ta, sh.m, sh.n, sh.k, a, b, beta, want)

				got := append([]float64(nil), c0...)
				if !gemmSparse(ta, false, sh.m, sh.n, sh.k, a, b, beta, got, nil, nil, nil) {
					t.Fatalf("%s: a 3%%-full operand did not take the sparse path", name)
				}
				for i := range want {
					// float64: the same fused multiply-adds in the same order, bit for bit
					if got[i] != want[i] {
						t.Fatalf("%s float64: c[%d] = %v, want %v", name, i, got[i], want[i])
					}
				}

				a32, b32, c32 := to32(a), to32(b), to32(c0)
				if !gemmSparse(ta, false, sh.m, sh.n, sh.k, a32, b32, float32(beta), c32, nil, nil, nil) {
					t.Fatalf("%s: float32 did not take the sparse path", name)
				}
				for i := range want {
					if d := math.Abs(float64(c32[i]) - want[i]); d > 1e-5*(1+math.Abs(want[i])) {
						t.Fatalf("%s float32: c[%d] = %v, want %v", name, i, c32[i], want[i])
					}
				}

				// the dense path agrees (the same product summed in another order)
				dense := append([]float64(nil), c0...)
				t.Run(name+"/dense", func(t *testing.T) {
					setSwitch(t, "HYPERFLAT_SPARSE", "off")
					gemmAcc(ta, false, sh.m, sh.n, sh.k, a, b, beta, dense)
				})
				for i := range want {
					if d := math.Abs(dense[i] - want[i]); d > 1e-12*(1+math.Abs(want[i])) {
						t.Fatalf("%s: dense c[%d] = %v, sparse %v", name, i, dense[i], want[i])
					}
				}
			}
		}
	}
}

func TestGemmSparseDeclines(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m, n, k := 64, 32, 256
	b := randomMatrix(rng, k, n, 1)
	c := make([]float64, m*n)
	for _, tc := range []struct {
		name string
		fill float64
		tb   bool
		n    int
	}{
		{"half zeros (a ReLU's output)", 0.5, false, n},
		{"1 in 12 nonzero", 1.0 / 12, false, n},
		{"transposed b", 0.01, true, n},
		{"too narrow", 0.01, false, 4},
	} {
		a := randomMatrix(rng, m, k, tc.fill)
		for i := range c {
			c[i] = 7
		}
		if gemmSparse(false, tc.tb, m, tc.n, k, a, b, 0, c[:m*tc.n], nil, nil, nil) {
			t.Errorf("%s: took the sparse path", tc.name)
		}
		for i, v := range c {
			if v != 7 {
				t.Fatalf("%s: declining changed c[%d] to %v", tc.name, i, v)
			}
		}
	}
	setSwitch(t, "HYPERFLAT_SPARSE", "off")
	if gemmSparse(false, false, m, n, k, randomMatrix(rng, m, k, 0.01), b, 0, c, nil, nil, nil) {
		t.Error("HYPERFLAT_SPARSE=off: took the sparse path")
	}
}

// The split of a large sparse product across goroutines leaves every bit as on one core.
func TestGemmSparseSplitIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m, n, k := 2000, 64, 1500
	a := to32(randomMatrix(rng, m, k, 0.01))
	b := to32(randomMatrix(rng, k, n, 1))
	var ref []float32
	for _, p := range []int{1, 2, 8} {
		c := make([]float32, m*n)
		withProcs(t, p, func() {
			if !gemmSparse(true, false, m, n, k, a, b, 0, c, nil, nil, nil) {
				t.Fatal("no sparse path")
			}
		})
		if ref == nil {
			ref = c
			continue
		}
		for i := range c {
			if c[i] != ref[i] {
				t.Fatalf("GOMAXPROCS %d: c[%d] = %v, on one core %v", p, i, c[i], ref[i])
			}
		}
	}
}

func to32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func withProcs(t *testing.T, p int, f func()) {
	t.Helper()
	old := runtime.GOMAXPROCS(p)
	defer runtime.GOMAXPROCS(old)
	f()
}

func TestFirstNonzero(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 0; n < 140; n++ {
		for trial := 0; trial < 20; trial++ {
			x := make([]float64, n)
			want := n
			if n > 0 && trial > 0 {
				want = rng.IntN(n + 1)
				for i := 0; i < want; i++ {
					if rng.IntN(3) == 0 {
						x[i] = math.Copysign(0, -1)
					}
				}
				if want < n {
					x[want] = [...]float64{1e-300, -2, math.NaN(), math.Inf(1)}[rng.IntN(4)]
					for i := want + 1; i < n; i++ {
						x[i] = rng.NormFloat64()
					}
				}
			}
			if got := firstNonzero(x); got != want {
				t.Fatalf("float64 n=%d: firstNonzero = %d, want %d (%v)", n, got, want, x)
			}
			x32 := to32(x)
			if want < n && x[want] == 1e-300 {
				x32[want] = 1e-40 // float32's subnormals are nonzero too
			}
			if got := firstNonzero(x32); got != want {
				t.Fatalf("float32 n=%d: firstNonzero = %d, want %d (%v)", n, got, want, x32)
			}
		}
	}
}

// BenchmarkGemmSparse times the first layer of the authors' OpenML MLP on vehicle (1,430
// one-hot columns, 18 nonzeros a row, batch 64, width 256): x·W and the weight gradient xᵀ·G,
// through the sparse path and, as dense_, with HYPERFLAT_SPARSE=off.
func BenchmarkGemmSparse(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const batch, d, width = 64, 1430, 256
	x := to32(randomMatrix(rng, batch, d, 18.0/d))
	w := to32(randomMatrix(rng, d, width, 1))
	g := to32(randomMatrix(rng, batch, width, 1))
	h := make([]float32, batch*width)
	dw := make([]float32, d*width)
	for _, path := range []string{"", "dense_"} {
		b.Run(path+"forward_64x256x1430", func(b *testing.B) {
			if path != "" {
				setSwitch(b, "HYPERFLAT_SPARSE", "off")
			}
			for i := 0; i < b.N; i++ {
				gemm(false, false, batch, width, d, x, w, h)
			}
		})
		b.Run(path+"weightgrad_1430x256x64", func(b *testing.B) {
			if path != "" {
				setSwitch(b, "HYPERFLAT_SPARSE", "off")
			}
			for i := 0; i < b.N; i++ {
				gemm(true, false, d, width, batch, x, g, dw)
			}
		})
	}
}

func TestCountNonzero(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for n := 0; n < 3000; n += 1 + rng.IntN(40) {
		x := make([]float64, n)
		want := 0
		for i := range x {
			switch rng.IntN(5) {
			case 0:
				x[i] = math.Copysign(0, -1)
			case 1:
				x[i] = math.NaN()
				want++
			case 2:
				x[i] = rng.NormFloat64()
				want++
			}
		}
		x32 := to32(x)
		for _, got := range []int{countNonzero(x), countNonzero(x32)} {
			if got != want {
				t.Fatalf("n=%d: countNonzero = %d, want %d", n, got, want)
			}
		}
		if want > 0 && (fewNonzeros(x, want-1) || !fewNonzeros(x, want) || fewNonzeros(x32, want-1) || !fewNonzeros(x32, want)) {
			t.Fatalf("n=%d: fewNonzeros disagrees with the count %d", n, want)
		}
	}
}

// gemmSparse takes op(a) exactly when at most 1 in sparseMaxFill of its entries is nonzero,
// whichever way it finds out: an operand dense at its head and empty after, one sparse at its
// head and dense after, and the limit itself and one past it, in both orientations.
func TestGemmSparseDecisionIsTheCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	m, n, k := 64, 16, 512 // 32,768 entries: the limit is 2,048 nonzeros
	limit := m * k / sparseMaxFill
	b := randomMatrix(rng, k, n, 1)
	fill := func(a []float64, lo, hi, count int) {
		for _, i := range rng.Perm(hi - lo)[:count] {
			a[lo+i] = rng.NormFloat64()
		}
	}
	for _, tc := range []struct {
		name string
		make func(a []float64)
	}{
		{"dense head, empty after", func(a []float64) { fill(a, 0, 1500, 1500) }},
		{"dense head, limit in all", func(a []float64) { fill(a, 0, 1024, 1024); fill(a, 1024, len(a), limit-1024) }},
		{"dense head, one past the limit", func(a []float64) { fill(a, 0, 1024, 1024); fill(a, 1024, len(a), limit-1023) }},
		{"sparse head, dense tail", func(a []float64) { fill(a, len(a)-4000, len(a), 4000) }},
		{"the limit, spread", func(a []float64) { fill(a, 0, len(a), limit) }},
		{"one past the limit, spread", func(a []float64) { fill(a, 0, len(a), limit+1) }},
		{"one past the limit in the last row", func(a []float64) { fill(a, 0, len(a)-k, limit); fill(a, len(a)-k, len(a), 1) }},
	} {
		a := make([]float64, m*k)
		tc.make(a)
		want := countNonzero(a) <= limit
		for _, ta := range []bool{false, true} {
			c := make([]float64, m*n)
			got := gemmSparse(ta, false, m, n, k, a, b, 0, c, nil, nil, nil)
			if got != want {
				t.Errorf("%s, ta=%v: sparse path %v with %d nonzeros (limit %d)", tc.name, ta, got, countNonzero(a), limit)
			}
			if got {
				ref := make([]float64, m*n)
				refSparse(ta, m, n, k, a, b, 0, ref)
				for i := range ref {
					if c[i] != ref[i] {
						t.Fatalf("%s, ta=%v: c[%d] = %v, want %v", tc.name, ta, i, c[i], ref[i])
					}
				}
			} else {
				for i, v := range c {
					if v != 0 {
						t.Fatalf("%s, ta=%v: declining changed c[%d] to %v", tc.name, ta, i, v)
					}
				}
			}
		}
	}
}

// TestOperandMemo checks that a product reading a left operand that an earlier product of the
// same run compressed (the forward X·W, then the weight gradient Xᵀ·dY) gives, from the memo,
// exactly what compressing X again gives: rows, support and bits, for a one-hot-like X, a
// dense one, and a memo from another run or of another shape (which must not be used).
func TestOperandMemo(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const batch, feats, width = 32, 700, 24
	for _, fill := range []float64{0.02, 0.5} {
		x := randomMatrix(rng, batch, feats, fill)
		w, dy := randomMatrix(rng, feats, width, 1), randomMatrix(rng, batch, width, 1)
		memo := &operandMemo{now: 7}
		fwd, fwd0 := make([]float64, batch*width), make([]float64, batch*width)
		var sup, sup0 []int32
		took := gemmSparse(false, false, batch, width, feats, x, w, 0, fwd, &sup, nil, memo)
		took0 := gemmSparse(false, false, batch, width, feats, x, w, 0, fwd0, &sup0, nil, nil)
		if took != took0 || took != (fill < 0.05) || memo.run != 7 || memo.dense == took {
			t.Fatalf("fill %v: forward took %v (without memo %v), memo %+v", fill, took, took0, memo)
		}
		for _, now := range []int{7, 8} { // this run's memo, then a stale one
			memo.now = now
			grad, grad0 := make([]float64, feats*width), make([]float64, feats*width)
			sup, sup0 = sup[:0], sup0[:0]
			took = gemmSparse(true, false, feats, width, batch, x, dy, 0, grad, &sup, nil, memo)
			took0 = gemmSparse(true, false, feats, width, batch, x, dy, 0, grad0, &sup0, nil, nil)
			if took != took0 || !slices.Equal(sup, sup0) {
				t.Fatalf("fill %v run %d: gradient took %v (without memo %v), support %d rows (%d)", fill, now, took, took0, len(sup), len(sup0))
			}
			for i := range grad {
				if math.Float64bits(grad[i]) != math.Float64bits(grad0[i]) {
					t.Fatalf("fill %v run %d: gradient element %d = %v from the memo, %v compressed", fill, now, i, grad[i], grad0[i])
				}
			}
		}
		if s, known := (&operandMemo{now: 3, run: 3, rows: feats, cols: batch}).rowsOf(true, feats, batch, 1<<20); known || s != nil {
			t.Error("an empty memo of the right shape was used")
		}
		if _, known := memo.rowsOf(false, batch, feats+1, 1<<20); known {
			t.Error("a memo of another shape was used")
		}
	}
}

// TestTransposeIntoCompact: the transpose of a compressed batch lists exactly the columns with
// entries, each with the rows of its entries in order (what compressing the transposed
// operand gives, less its empty rows), reusing one result for operands of other widths and
// leaving its scratch zero.
func TestTransposeIntoCompact(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var tr sparseRows[float64]
	for _, shape := range []struct{ rows, cols int }{{16, 900}, {8, 300}, {32, 2000}, {4, 50}} {
		a := randomMatrix(rng, shape.rows, shape.cols, 0.01)
		a[len(a)-1] = 1 // an entry in the last column
		var s, want sparseRows[float64]
		if !s.compress(false, shape.rows, shape.cols, a, len(a)) || !want.compress(true, shape.cols, shape.rows, a, len(a)) {
			t.Fatal("compress declined")
		}
		s.transposeInto(&tr, shape.cols)
		var rows []int32
		for i := 0; i < shape.cols; i++ {
			if want.ptr[i+1] > want.ptr[i] {
				rows = append(rows, int32(i))
			}
		}
		if !tr.compact || !slices.Equal(tr.rows, rows) || len(tr.ptr) != len(rows)+1 {
			t.Fatalf("%v: rows %v, want %v", shape, tr.rows, rows)
		}
		for q, i := range tr.rows {
			got, gotV := tr.idx[tr.ptr[q]:tr.ptr[q+1]], tr.val[tr.ptr[q]:tr.ptr[q+1]]
			w, wV := want.idx[want.ptr[i]:want.ptr[i+1]], want.val[want.ptr[i]:want.ptr[i+1]]
			if !slices.Equal(got, w) || !slices.Equal(gotV, wV) {
				t.Fatalf("%v: column %d holds rows %v, want %v", shape, i, got, w)
			}
		}
		if j := slices.IndexFunc(tr.slot, func(v int32) bool { return v != 0 }); j >= 0 {
			t.Fatalf("%v: scratch left %d at %d", shape, tr.slot[j], j)
		}
	}
}
