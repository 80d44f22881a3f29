package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// calls is how many ops a profiled run executed.
func calls(p *Program) int {
	n := 0
	for _, t := range p.OpTimes() {
		n += t.Calls
	}
	return n
}

// TestRunChangedHVP runs a Hessian-vector product program in one direction, then in others
// written into the same direction tensors, by RunChanged: each must give the bits a fresh
// program's Run gives, while executing fewer ops than a full run.
func TestRunChangedHVP(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			m := buildMLP(t, dt, mlpValues(5), false)
			rng := rand.New(rand.NewPCG(5, 1))
			vs := make([]*G.Node, len(m.params))
			vals := make([]*tensor.Dense, len(m.params))
			for i, p := range m.params {
				vals[i] = tensor.New(tensor.Of(dt), tensor.WithShape(p.Shape()...))
				vs[i] = G.NewTensor(m.g, dt, len(p.Shape()), G.WithShape(p.Shape()...), G.WithName(fmt.Sprintf("v%d", i)), G.WithValue(vals[i]))
			}
			hv, err := HVP(m.cost, m.params, vs)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := Compile(hv...)
			if err != nil {
				t.Fatal(err)
			}
			prog.Profile(true)
			ctx := context.Background()
			var prev []float64
			for it := range 3 {
				flat := make([]float64, 0)
				for _, v := range vals {
					for range v.Shape().TotalSize() {
						flat = append(flat, rng.NormFloat64())
					}
				}
				if err := SetFlat(vals, flat); err != nil {
					t.Fatal(err)
				}
				before := calls(prog)
				if err := prog.RunChanged(ctx, vs...); err != nil {
					t.Fatal(err)
				}
				ran := calls(prog) - before
				got, err := prog.Flatten(hv...)
				if err != nil {
					t.Fatal(err)
				}
				fresh, err := Compile(hv...)
				if err != nil {
					t.Fatal(err)
				}
				fresh.Profile(true)
				if err := fresh.Run(ctx); err != nil {
					t.Fatal(err)
				}
				want, err := fresh.Flatten(hv...)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("run %d: RunChanged gave %v, Run %v", it, got[:4], want[:4])
				}
				if slices.Equal(got, prev) {
					t.Fatalf("run %d: the same product as in the previous direction", it)
				}
				prev = got
				full := calls(fresh)
				if it == 0 && ran != full {
					t.Errorf("the first run executed %d ops; a full run %d", ran, full)
				}
				if it > 0 && ran >= full {
					t.Errorf("run %d: RunChanged executed %d ops, as many as a full run (%d)", it, ran, full)
				}
			}
		})
	}
}

func TestRunChangedErrors(t *testing.T) {
	m := buildMLP(t, tensor.Float64, mlpValues(6), false)
	prog, err := Compile(m.cost)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	other := G.NewScalar(G.NewGraph(), tensor.Float64, G.WithName("other"))
	for name, nodes := range map[string][]*G.Node{"cost (not an input)": {m.cost}, "nil": {nil}, "not in the program": {other}} {
		if err := prog.RunChanged(ctx, nodes...); err == nil {
			t.Errorf("RunChanged of %s: no error", name)
		}
	}
	var nilProg *Program
	if err := nilProg.RunChanged(ctx, m.x); err == nil {
		t.Error("RunChanged of a nil program: no error")
	}
}

// TestRunChangedAfterCancel: a run cancelled part-way leaves nodes uncomputed, so the next
// RunChanged must run them all.
func TestRunChangedAfterCancel(t *testing.T) {
	m := buildMLP(t, tensor.Float64, mlpValues(7), false)
	grads, err := Grad(m.cost, m.params...)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Compile(grads...)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := prog.Run(cancelled); err == nil {
		t.Fatal("a cancelled run: no error")
	}
	prog.Profile(true)
	if err := prog.RunChanged(context.Background(), m.x); err != nil {
		t.Fatal(err)
	}
	ran := calls(prog)
	fresh, err := Compile(grads...)
	if err != nil {
		t.Fatal(err)
	}
	fresh.Profile(true)
	if err := fresh.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ran != calls(fresh) {
		t.Errorf("RunChanged after a cancelled run executed %d ops; a full run %d", ran, calls(fresh))
	}
}

// TestRunFor: a program of Hessian-vector products that also outputs the gradient computes
// the gradient alone by RunFor, with the bits of a gradient program's Run and fewer ops than
// a full run, again after new parameters; the next RunChanged then runs every node and
// gives the products of a fresh program.
func TestRunFor(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			m := buildMLP(t, dt, mlpValues(8), false)
			rng := rand.New(rand.NewPCG(8, 1))
			vs := make([]*G.Node, len(m.params))
			vals := make([]*tensor.Dense, len(m.params))
			flat := make([]float64, 0)
			for i, p := range m.params {
				vals[i] = tensor.New(tensor.Of(dt), tensor.WithShape(p.Shape()...))
				vs[i] = G.NewTensor(m.g, dt, len(p.Shape()), G.WithShape(p.Shape()...), G.WithName(fmt.Sprintf("v%d", i)), G.WithValue(vals[i]))
				for range p.Shape().TotalSize() {
					flat = append(flat, rng.NormFloat64())
				}
			}
			if err := SetFlat(vals, flat); err != nil {
				t.Fatal(err)
			}
			grads, err := Grad(m.cost, m.params...)
			if err != nil {
				t.Fatal(err)
			}
			hv, err := HVP(m.cost, m.params, vs)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			prog, err := Compile(append(slices.Clone(hv), grads...)...)
			if err != nil {
				t.Fatal(err)
			}
			prog.Profile(true)
			fullOps := func() int {
				p, err := Compile(append(slices.Clone(hv), grads...)...)
				if err != nil {
					t.Fatal(err)
				}
				p.Profile(true)
				if err := p.Run(ctx); err != nil {
					t.Fatal(err)
				}
				return calls(p)
			}
			want := func(nodes []*G.Node) []float64 {
				p, err := Compile(nodes...)
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Run(ctx); err != nil {
					t.Fatal(err)
				}
				f, err := p.Flatten(nodes...)
				if err != nil {
					t.Fatal(err)
				}
				return f
			}
			var prev []float64
			for round := range 2 {
				if round == 1 { // new parameters: the forward pass must be computed again
					for _, p := range m.params {
						d := p.Value().(*tensor.Dense)
						switch x := d.Data().(type) {
						case []float64:
							for i := range x {
								x[i] *= 1.25
							}
						case []float32:
							for i := range x {
								x[i] *= 1.25
							}
						}
					}
				}
				before := calls(prog)
				if err := prog.RunFor(ctx, grads...); err != nil {
					t.Fatal(err)
				}
				ran := calls(prog) - before
				got, err := prog.Flatten(grads...)
				if err != nil {
					t.Fatal(err)
				}
				if w := want(grads); !slices.Equal(got, w) || slices.Equal(got, prev) {
					t.Fatalf("round %d: RunFor's gradient %v, a gradient program's %v (previous %v)", round, got[:3], w[:3], prev)
				}
				prev = got
				if full := fullOps(); ran >= full {
					t.Errorf("round %d: RunFor executed %d ops, a full run %d", round, ran, full)
				}
				before = calls(prog)
				if err := prog.RunChanged(ctx, vs...); err != nil {
					t.Fatal(err)
				}
				if ran, full := calls(prog)-before, fullOps(); ran != full {
					t.Errorf("round %d: RunChanged after RunFor executed %d ops; a full run %d", round, ran, full)
				}
				h, err := prog.Flatten(hv...)
				if err != nil {
					t.Fatal(err)
				}
				if w := want(hv); !slices.Equal(h, w) {
					t.Fatalf("round %d: products %v after RunFor, a fresh program's %v", round, h[:3], w[:3])
				}
			}
			other := G.NewScalar(G.NewGraph(), dt, G.WithName("other"))
			for name, nodes := range map[string][]*G.Node{"no node": nil, "nil": {nil}, "not in the program": {other}} {
				if err := prog.RunFor(ctx, nodes...); err == nil {
					t.Errorf("RunFor of %s: no error", name)
				}
			}
			var nilProg *Program
			if err := nilProg.RunFor(ctx, grads...); err == nil {
				t.Error("RunFor of a nil program: no error")
			}
		})
	}
}
