package graph

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestFilterMemo: with the run's memo of gathered filter taps, a Program computes the bits it
// computes gathering in every op — on a 1×1 map (one live tap) with a filter bank of its own,
// and on a 1×1 and a strided 2×2 map (four taps) sharing one, over runs between which the
// filters change in place — and the memo holds the run's taps after each run.
func TestFilterMemo(t *testing.T) {
	defer func() { filterMemoOn = true }()
	const n, c, f = 3, 5, 7
	var got [2][][]float32
	for i, on := range []bool{true, false} {
		filterMemoOn = on
		rng := rand.New(rand.NewPCG(8, 1))
		g := G.NewGraph()
		x1 := G.NewTensor(g, tensor.Float32, 4, G.WithShape(n, c, 1, 1), G.WithName("x1"),
			G.WithValue(asDense[float32](randSlice(rng, n*c), tensor.Shape{n, c, 1, 1})))
		x2 := G.NewTensor(g, tensor.Float32, 4, G.WithShape(n, c, 2, 2), G.WithName("x2"),
			G.WithValue(asDense[float32](randSlice(rng, n*c*4), tensor.Shape{n, c, 2, 2})))
		wv := asDense[float32](randSlice(rng, f*c*9), tensor.Shape{f, c, 3, 3})
		w := G.NewTensor(g, tensor.Float32, 4, G.WithShape(f, c, 3, 3), G.WithName("w"), G.WithValue(wv))
		y1, err := Conv2d(x1, w, Geometry{PadH: 1, PadW: 1})
		if err != nil {
			t.Fatal(err)
		}
		y2, err := Conv2d(x2, w, Geometry{PadH: 1, PadW: 1, StrideH: 2, StrideW: 2})
		if err != nil {
			t.Fatal(err)
		}
		w3v := asDense[float32](randSlice(rng, f*c*9), tensor.Shape{f, c, 3, 3})
		w3 := G.NewTensor(g, tensor.Float32, 4, G.WithShape(f, c, 3, 3), G.WithName("w3"), G.WithValue(w3v))
		y3, err := Conv2d(x1, w3, Geometry{PadH: 1, PadW: 1})
		if err != nil {
			t.Fatal(err)
		}
		ys := []*G.Node{y1, y2, y3}
		for _, y := range ys {
			if op := y.Op().(*convOp); !op.gathersFilters() {
				t.Fatalf("%v with taps %v does not gather its filters", op, op.taps)
			}
		}
		var cost *G.Node
		for _, y := range ys {
			sq, err := Square(y)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Sum(sq)
			if err != nil {
				t.Fatal(err)
			}
			if cost == nil {
				cost = s
			} else if cost, err = Add(cost, s); err != nil {
				t.Fatal(err)
			}
		}
		gs, err := Grad(cost, x1, x2, w, w3)
		if err != nil {
			t.Fatal(err)
		}
		outs := append(ys, gs...)
		p, err := Compile(outs...)
		if err != nil {
			t.Fatal(err)
		}
		for run := 0; run < 3; run++ {
			if run > 0 { // the optimizer's in-place update between runs
				for _, d := range [][]float32{wv.Data().([]float32), w3v.Data().([]float32)} {
					for j := range d {
						d[j] = d[j]*0.5 + float32(run)
					}
				}
			}
			if err := p.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if on && (p.filters == nil || p.filters[p.index[w]].run != p.runs || p.filters[p.index[w3]].run != p.runs) {
				t.Errorf("run %d: the memos of w and w3 do not hold this run's taps", run)
			}
			for _, o := range outs {
				v, err := p.Value(o)
				if err != nil {
					t.Fatal(err)
				}
				got[i] = append(got[i], append([]float32(nil), v.Data().([]float32)...))
			}
		}
	}
	for k := range got[1] {
		for j, want := range got[1][k] {
			if e := got[0][k][j]; math.Float32bits(e) != math.Float32bits(want) {
				t.Fatalf("output %d (run %d) element %d: %v with the memo, %v without", k%(len(got[1])/3), k/(len(got[1])/3), j, e, want)
			}
		}
	}
}
