package graph

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestNonzerosAt: a Program told where its one-hot input is nonzero computes the loss, the
// weight gradient and its rows to the bit as one that scans the input (float32 and float64,
// with a promised entry that holds zero, −0 and a subnormal among the entries); the promise
// covers one run; a broken one shows in the results (so the promise is what the run read);
// bad promises are errors.
func TestNonzerosAt(t *testing.T) {
	const batch, in, out = 32, 700, 24
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		rng := rand.New(rand.NewPCG(21, 22))
		x, _, loss, grads := productLossOf(t, dt, batch, in, out, rng)
		promised, err := Compile(loss, grads[0])
		if err != nil {
			t.Fatal(err)
		}
		scanned, err := Compile(loss, grads[0])
		if err != nil {
			t.Fatal(err)
		}
		// a one-hot batch: three entries a row, some of them −0, 0 or subnormal
		oneHot := func() ([]float64, []int) {
			xs := make([]float64, batch*in)
			var at []int
			for r := 0; r < batch; r++ {
				cols := rng.Perm(in)[:3]
				slices.Sort(cols)
				for _, c := range cols {
					at = append(at, r*in+c)
					xs[r*in+c] = 0.5 + rng.Float64()
				}
			}
			xs[at[4]], xs[at[9]], xs[at[13]] = math.Copysign(0, -1), 0, 1e-310
			return xs, at
		}
		run := func(p *Program, xs []float64, at []int) ([]float64, []int32) {
			t.Helper()
			if err := p.Let(x, denseOf(dt, xs, batch, in)); err != nil {
				t.Fatal(err)
			}
			if at != nil {
				if err := p.NonzerosAt(x, at); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			vals, err := p.Flatten(loss, grads[0])
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := p.NonzeroRows(grads[0])
			return vals, slices.Clone(rows)
		}
		same := func(a, b []float64) bool {
			return slices.EqualFunc(a, b, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) })
		}
		for step := 0; step < 3; step++ {
			xs, at := oneHot()
			if step == 2 {
				at = nil // the promise of step 1 does not carry over
			}
			got, gotRows := run(promised, xs, at)
			want, wantRows := run(scanned, xs, nil)
			if !same(got, want) || !slices.Equal(gotRows, wantRows) || len(wantRows) == 0 {
				t.Fatalf("%v step %d: the promised run differs from the scanning one (rows %v, want %v)", dt, step, gotRows, wantRows)
			}
		}
		xs, at := oneHot()
		xs[5*in+in-1] += 1 // outside the promise
		if got, _ := run(promised, xs, at); same(got, func() []float64 { v, _ := run(scanned, xs, nil); return v }()) {
			t.Errorf("%v: a broken promise changed nothing: the run scanned the input", dt)
		}
		for name, bad := range map[string][]int{"decreasing": {5, 3}, "repeated": {3, 3}, "negative": {-1}, "past the end": {batch * in}} {
			if err := promised.NonzerosAt(x, bad); err == nil {
				t.Errorf("%v: %s offsets accepted", dt, name)
			}
		}
		if err := promised.NonzerosAt(loss, nil); err == nil {
			t.Errorf("%v: a promise about a computed node accepted", dt)
		}
		if err := promised.NonzerosAt(G.NewMatrix(G.NewGraph(), dt, G.WithShape(2, 2)), nil); err == nil {
			t.Errorf("%v: a promise about a node outside the program accepted", dt)
		}
	}
}

// denseOf is v (r×c) as a tensor of dt.
func denseOf(dt tensor.Dtype, v []float64, r, c int) *tensor.Dense {
	if dt == tensor.Float32 {
		f := make([]float32, len(v))
		for i, e := range v {
			f[i] = float32(e)
		}
		return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(slices.Clone(v)))
}
