package graph

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// TestNonzeroRows: a Program knows the rows of a weight gradient behind a one-hot batch (the
// inputs the batch has), the gradient is zero outside them, and it knows nothing after a run
// whose batch is dense, or of a node it did not compute through the sparse path.
func TestNonzeroRows(t *testing.T) {
	const batch, in, out = 16, 512, 16
	rng := rand.New(rand.NewPCG(1, 2))
	x, w, loss, grads := productLoss(t, batch, in, out, rng)
	p, err := Compile(loss, grads[0])
	if err != nil {
		t.Fatal(err)
	}
	run := func(xs []float64) []float64 {
		t.Helper()
		if err := p.Let(x, tensor.New(tensor.WithShape(batch, in), tensor.WithBacking(xs))); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		dw, err := p.Float64s(grads[0])
		if err != nil {
			t.Fatal(err)
		}
		return dw
	}
	for step := 0; step < 3; step++ {
		// two inputs set per row, as a one-hot encoding of two columns would
		xs := make([]float64, batch*in)
		var want []int32
		for r := 0; r < batch; r++ {
			for _, j := range []int{rng.IntN(in / 2), in/2 + rng.IntN(in/2)} {
				xs[r*in+j] = 1 + rng.Float64()
				want = append(want, int32(j))
			}
		}
		slices.Sort(want)
		want = slices.Compact(want)
		dw := run(xs)
		rows, ok := p.NonzeroRows(grads[0])
		if !ok || !slices.Equal(rows, want) {
			t.Fatalf("step %d: NonzeroRows = %v, %v; want the batch's inputs %v", step, rows, ok, want)
		}
		for i := 0; i < in; i++ {
			_, has := slices.BinarySearch(want, int32(i))
			for j := 0; j < out; j++ {
				if v := dw[i*out+j]; !has && v != 0 || has && (v == 0 || math.IsNaN(v)) {
					t.Fatalf("step %d: dW[%d,%d] = %v (row among the nonzero ones: %v)", step, i, j, v, has)
				}
			}
		}
	}
	dense := randomMatrix(rng, batch, in, 1)
	run(dense)
	if rows, ok := p.NonzeroRows(grads[0]); ok {
		t.Fatalf("after a dense batch: NonzeroRows = %v, true; want unknown", rows)
	}
	if _, ok := p.NonzeroRows(loss); ok {
		t.Fatal("NonzeroRows known for a sum")
	}
	if _, ok := p.NonzeroRows(w); ok {
		t.Fatal("NonzeroRows known for an input")
	}
}

// TestAdamUpdateRows: given the rows outside which the gradient is zero, the update leaves
// every weight and moment as AdamUpdate does, to the bit, for runs of rows and gaps around
// the zero block's length and the core split, and reports a non-finite result in a row it
// did not read the gradient of.
func TestAdamUpdateRows(t *testing.T) {
	testAdamRows[float32](t)
	testAdamRows[float64](t)
}

func testAdamRows[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := AdamCoeffs[T]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: T(1e-3 / (1 - math.Pow(0.9, 3))), Bc2: T(math.Sqrt(1 - math.Pow(0.999, 3))), Eps: 1e-8, WD: 1e-2, Hat: true}
	for _, sh := range []struct{ r, w int }{{1, 1}, {7, 3}, {100, 64}, {4, 3000}, {3000, 24}} {
		n := sh.r * sh.w
		for _, fill := range []float64{0, 0.05, 0.5, 1} {
			var rows []int32
			g := make([]T, n)
			for i := 0; i < sh.r; i++ {
				if rng.Float64() < fill {
					rows = append(rows, int32(i))
					for j := i * sh.w; j < (i+1)*sh.w; j++ {
						g[j] = T(rng.NormFloat64())
					}
				}
			}
			mk := func() []T {
				s := make([]T, n)
				for i := range s {
					s[i] = T(rng.NormFloat64())
				}
				return s
			}
			p, m, v := mk(), mk(), mk()
			for i := range v {
				v[i] *= v[i]
			}
			p2, m2, v2 := slices.Clone(p), slices.Clone(m), slices.Clone(v)
			bad, bad2 := AdamUpdateRows(p, g, m, v, sh.w, rows, c), AdamUpdate(p2, g, m2, v2, c)
			if bad || bad2 {
				t.Fatalf("%d×%d: non-finite reported on finite data", sh.r, sh.w)
			}
			for i := range p {
				if p[i] != p2[i] || m[i] != m2[i] || v[i] != v2[i] {
					t.Fatalf("%T %d×%d fill %v: element %d: (%v %v %v), dense (%v %v %v)", p[0], sh.r, sh.w, fill, i, p[i], m[i], v[i], p2[i], m2[i], v2[i])
				}
			}
			if len(rows) < sh.r {
				// a weight already infinite in a row without gradient terms stays so
				gap := 0
				for gap < len(rows) && rows[gap] == int32(gap) {
					gap++
				}
				p[gap*sh.w] = T(math.Inf(1))
				if !AdamUpdateRows(p, g, m, v, sh.w, rows, c) {
					t.Fatalf("%T %d×%d fill %v: a non-finite weight in row %d not reported", p[0], sh.r, sh.w, fill, gap)
				}
			}
		}
	}
}

// TestFirstNonFiniteRows finds what FirstNonFinite finds when the rows cover the entries.
func TestFirstNonFiniteRows(t *testing.T) {
	const r, w = 50, 40
	x := make([]float32, r*w)
	rows := []int32{3, 4, 5, 20, 49}
	if j := FirstNonFiniteRows(x, w, rows); j != -1 {
		t.Fatalf("%d on zeros", j)
	}
	for _, at := range []int{3 * w, 5*w + 7, 20*w + 39, 49*w + 1} {
		y := slices.Clone(x)
		y[at] = float32(math.NaN())
		y[min(at+w+1, len(y)-1)] = float32(math.Inf(1))
		if j, want := FirstNonFiniteRows(y, w, rows), FirstNonFinite(y); j != want || j != at {
			t.Fatalf("NaN at %d: FirstNonFiniteRows %d, FirstNonFinite %d", at, j, want)
		}
	}
}

// TestClearStream zeroes every byte of slices around the streaming threshold, at every
// alignment, and nothing outside them.
func TestClearStream(t *testing.T) {
	for _, n := range []int{0, 5, 1<<18 - 1, 1 << 18, 1<<18 + 37, 3<<18 + 5} {
		for off := 0; off < 9; off++ {
			buf := make([]float32, n+off+8)
			for i := range buf {
				buf[i] = 1
			}
			clearStream(buf[off : off+n])
			for i, v := range buf {
				if in := i >= off && i < off+n; in && v != 0 || !in && v != 1 {
					t.Fatalf("n=%d offset %d: element %d is %v", n, off, i, v)
				}
			}
		}
	}
	x := make([]float64, 1<<17+3)
	for i := range x {
		x[i] = math.NaN()
	}
	clearStream(x[1:])
	if !math.IsNaN(x[0]) || slices.ContainsFunc(x[1:], func(v float64) bool { return v != 0 }) {
		t.Fatal("float64: not cleared, or cleared outside")
	}
}

// TestAdamUpdateRowsAllocates nothing on tensors the cores do not split: it runs at every
// optimizer step.
func TestAdamUpdateRowsAllocatesNothing(t *testing.T) {
	const r, w = 500, 64
	p, g, m, v := make([]float32, r*w), make([]float32, r*w), make([]float32, r*w), make([]float32, r*w)
	rows := []int32{3, 4, 90, 91, 92, 400}
	c := AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: 1e-3, Bc2: 1, Eps: 1e-7, Hat: true}
	if n := testing.AllocsPerRun(20, func() {
		AdamUpdateRows(p, g, m, v, w, rows, c)
		FirstNonFiniteRows(g, w, rows)
	}); n != 0 {
		t.Errorf("%v allocations a step; want 0", n)
	}
}

// BenchmarkOneHotAdamStep is the per-step work on a one-hot first layer's weights outside the
// products, at kc1's shape under the AHSC authors' protocol (5,420 one-hot inputs, width 1,024,
// a batch of 32 rows of 21 inputs each): clearing the weight gradient, scanning it for NaN and
// the Adam update, the whole gradient as before ("whole") and through the batch's rows
// ("rows").
func BenchmarkOneHotAdamStep(b *testing.B) {
	const in, width = 5420, 1024
	rng := rand.New(rand.NewPCG(9, 10))
	var rows []int32
	for range 32 * 21 {
		rows = append(rows, int32(rng.IntN(in)))
	}
	slices.Sort(rows)
	rows = slices.Compact(rows)
	p, g, m, v := make([]float32, in*width), make([]float32, in*width), make([]float32, in*width), make([]float32, in*width)
	c := AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: 1e-3, Bc2: 1, Eps: 1e-7, Hat: true}
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			clear(g)
			if FirstNonFinite(g) >= 0 || AdamUpdate(p, g, m, v, c) {
				b.Fatal("non-finite")
			}
		}
	})
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			clearStream(g)
			if FirstNonFiniteRows(g, width, rows) >= 0 || AdamUpdateRows(p, g, m, v, width, rows, c) {
				b.Fatal("non-finite")
			}
		}
	})
}
