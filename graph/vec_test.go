package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// TestVecKernels compares the AVX2 elementwise kernels of every op in the tables that has
// them with its scalar loop, on every length up to 70 and a few long ones.
func TestVecKernels(t *testing.T) {
	if !haveVec {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	lens := []int{}
	for n := 0; n <= 70; n++ {
		lens = append(lens, n)
	}
	lens = append(lens, 1000, 4099)
	near := func(a, b float32) bool {
		if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) {
			return math.IsNaN(float64(a)) == math.IsNaN(float64(b))
		}
		return math.Abs(float64(a-b)) <= 1e-6*(1+math.Abs(float64(b)))
	}
	for _, n := range lens {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())+3
		}
		c := []float32{1.5}
		got, want := make([]float32, n), make([]float32, n)
		for k := range numBinary {
			d := &binaryF32[k]
			for _, st := range [][2]int{{1, 1}, {1, 0}, {0, 1}} {
				x, y := a, b
				if st[0] == 0 {
					x = c
				}
				if st[1] == 0 {
					y = c
				}
				d.apply(got, x, y, st[0], st[1])
				d.row(want, x, y, st[0], st[1])
				exact := d.affine == nil // the scalar kernels (Div) as the scalar loop, to the bit
				for i := range got {
					if exact && math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("binary %v %v n %d: [%d] = %v, want %v to the bit", k, st, n, i, got[i], want[i])
					}
					if !near(got[i], want[i]) {
						t.Fatalf("binary %v %v n %d: [%d] = %v, want %v", k, st, n, i, got[i], want[i])
					}
				}
			}
		}
		for k := range numUnary {
			d := &unaryF32[k]
			op := &unaryOp{kind: k, a: -1.5, b: 0.25}
			d.apply(op, got, a)
			d.fwd(op, want, a)
			for i := range got {
				if !near(got[i], want[i]) {
					t.Fatalf("unary %v n %d: [%d] = %v, want %v", k, n, i, got[i], want[i])
				}
			}
		}
		gateKernel(got, a, b)
		gateScalar(want, a, b)
		for i := range got {
			if !near(got[i], want[i]) {
				t.Fatalf("gate n %d: [%d] = %v, want %v", n, i, got[i], want[i])
			}
		}
		var ws float64
		for _, e := range a {
			ws += float64(e)
		}
		if s := sumSerial(a); math.Abs(float64(s)-ws) > 1e-4*(1+math.Sqrt(float64(n))) {
			t.Fatalf("sum n %d = %v, want %v", n, s, ws)
		}
	}
}

// TestPoolArgmaxVector compares the AVX2 2×2 argmax with the scalar one on planes with ties,
// NaNs and widths that leave tails.
func TestPoolArgmaxVector(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, hw := range [][2]int{{28, 28}, {14, 14}, {4, 34}, {6, 17}, {2, 16}} {
		h, w := hw[0], hw[1]
		win, err := newWindow([]int{2, 3, h, w}, 2, 2, Geometry{}, true)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 2*3*h*w)
		for i := range x {
			x[i] = float32(rng.IntN(4)) // many ties
			if rng.IntN(50) == 0 {
				x[i] = float32(math.NaN())
			}
		}
		op := &poolOp{base: base{dt: tensor.Float32, out: win.poolShape()}, w: win, kind: poolArgmax}
		got := make([]float32, win.poolShape().TotalSize())
		want := make([]float32, len(got))
		xv := denseF32(x, 2, 3, h, w)
		gv, err := poolArgmaxDo[float32](op, denseF32(got, win.poolShape()...), xv)
		if err != nil {
			t.Fatal(err)
		}
		haveVec = false
		wv, err := poolArgmaxDo[float32](op, denseF32(want, win.poolShape()...), xv)
		haveVec = vecAvailable()
		if err != nil {
			t.Fatal(err)
		}
		g, _ := Elements[float32](gv)
		wnt, _ := Elements[float32](wv)
		for i := range g {
			if g[i] != wnt[i] {
				t.Fatalf("%dx%d: window %d: index %v, want %v", h, w, i, g[i], wnt[i])
			}
		}
	}
}

// TestPoolArgmaxRowVector compares the gathering argmax (vec.ArgMaxRowF32) with the scalar
// loop on every window the 2×2 kernel does not take: kernels 1–4, strides 1–3, padding up to
// half the window (with the odd extra row and column), planes 1–19 a side, with ties, NaNs
// (first in a window too), infinities, signed zeros and subnormals.
func TestPoolArgmaxRowVector(t *testing.T) {
	if !vecAvailable() {
		t.Skip("this CPU lacks AVX2/FMA: no vector argmax to compare")
	}
	rng := rand.New(rand.NewPCG(9, 11))
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0,
		float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-40}
	tried := 0
	for tried < 400 {
		k, s := 1+rng.IntN(4), 1+rng.IntN(3)
		h, w := 1+rng.IntN(19), 1+rng.IntN(19)
		g := Geometry{StrideH: s, StrideW: 1 + rng.IntN(3), PadH: rng.IntN(k/2 + 1), PadW: rng.IntN(k/2 + 1)}
		if 2*(g.PadH+1) <= k {
			g.ExtraBottom = rng.IntN(2)
		}
		if 2*(g.PadW+1) <= k {
			g.ExtraRight = rng.IntN(2)
		}
		win, err := newWindow([]int{2, 3, h, w}, k, k, g, true)
		if err != nil {
			continue
		}
		tried++
		x := make([]float32, 2*3*h*w)
		for i := range x {
			switch r := rng.IntN(40); {
			case r < 3:
				x[i] = specials[rng.IntN(len(specials))]
			case r < 30:
				x[i] = float32(rng.IntN(4) - 2) // many ties
			default:
				x[i] = float32(rng.NormFloat64())
			}
		}
		if rng.IntN(2) == 0 {
			x[0] = float32(math.NaN()) // the first window's first element
		}
		op := &poolOp{base: base{dt: tensor.Float32, out: win.poolShape()}, w: win, kind: poolArgmax}
		xv := denseF32(x, 2, 3, h, w)
		gv, err := poolArgmaxDo[float32](op, nil, xv)
		if err != nil {
			t.Fatal(err)
		}
		haveVec = false
		wv, err := poolArgmaxDo[float32](op, nil, xv)
		haveVec = vecAvailable()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := Elements[float32](gv)
		want, _ := Elements[float32](wv)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: window %d: index %v, want %v", win, i, got[i], want[i])
			}
		}
	}
}

func denseF32(d []float32, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}

// TestFill checks fill (vec.FillF32 for runs of 16 or more) on every length to 70 with
// values whose bits must survive (a NaN payload, −0, a subnormal), and that it writes nothing
// past the run.
func TestFill(t *testing.T) {
	for _, v := range []float32{math.Float32frombits(0x7fc01234), float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, 3.5} {
		for n := 0; n <= 70; n++ {
			buf := make([]float32, n+9)
			for i := range buf {
				buf[i] = 7
			}
			fill(buf[:n], v)
			for i, e := range buf {
				want := float32(7)
				if i < n {
					want = v
				}
				if math.Float32bits(e) != math.Float32bits(want) {
					t.Fatalf("fill of %d with %v: element %d is %v", n, v, i, e)
				}
			}
		}
	}
}

// TestExpandPatternChannels compares expandPattern's per-channel path (a channel's value over
// its map, image after image) with the pattern's definition (offset) on maps of 1 to 20
// elements, 1 to 9 channels and every block [s, e) boundary, in both element types.
func TestExpandPatternChannels(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 7))
	for range 300 {
		n, c, run := 1+rng.IntN(4), 1+rng.IntN(9), 1+rng.IntN(20)
		l := leafPattern{run: run, outer: []int{n, c}, strides: []int{0, 1 + rng.IntN(2)}}
		src := make([]float32, c*l.strides[1])
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		total := n * c * run
		s := rng.IntN(total)
		e := s + 1 + rng.IntN(total-s)
		got := make([]float32, e-s)
		expandPattern(&l, src, s, e, got)
		got64 := make([]float64, e-s)
		src64 := make([]float64, len(src))
		for i, v := range src {
			src64[i] = float64(v)
		}
		expandPattern(&l, src64, s, e, got64)
		for i := s; i < e; i++ {
			want := src[l.offset(i)]
			if math.Float32bits(got[i-s]) != math.Float32bits(want) || got64[i-s] != float64(want) {
				t.Fatalf("%+v [%d, %d): element %d is %v (%v), want %v", l, s, e, i, got[i-s], got64[i-s], want)
			}
		}
	}
}

// BenchmarkExpandPatternChannels expands a per-channel operand of 50×256×2×2 (runs of 4) and
// 50×512×1×1 (runs of 1) in fused kernels' 256-element blocks.
func BenchmarkExpandPatternChannels(b *testing.B) {
	for _, s := range [][3]int{{50, 256, 4}, {50, 512, 1}, {50, 64, 64}} {
		l := leafPattern{run: s[2], outer: []int{s[0], s[1]}, strides: []int{0, 1}}
		src := make([]float32, s[1])
		dst := make([]float32, 256)
		total := s[0] * s[1] * s[2]
		b.Run(fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
			for range b.N {
				for i := 0; i < total; i += 256 {
					expandPattern(&l, src, i, min(i+256, total), dst)
				}
			}
		})
	}
}
