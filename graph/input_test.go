package graph

import (
	"context"
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestGorgoniaMergesEquallyNamedInputs pins the gorgonia behaviour NewInput exists for: a
// second NewTensor with an input's name, type and shape is that input, bound to the first
// value. If a gorgonia upgrade stops merging, this fails and NewInput's renaming can go.
func TestGorgoniaMergesEquallyNamedInputs(t *testing.T) {
	g := G.NewGraph()
	v1, v2 := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2})), tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{3, 4}))
	a := G.NewTensor(g, tensor.Float64, 1, G.WithShape(2), G.WithName("v"), G.WithValue(v1))
	b := G.NewTensor(g, tensor.Float64, 1, G.WithShape(2), G.WithName("v"), G.WithValue(v2))
	if a != b || b.Value() != G.Value(v1) {
		t.Fatalf("gorgonia no longer merges equally named inputs (same node %v, bound to the first value %v)", a == b, b.Value() == G.Value(v1))
	}
}

func TestNewInputNeverReturnsAnExistingNode(t *testing.T) {
	g := G.NewGraph()
	var nodes []*G.Node
	var vals []*tensor.Dense
	for k := 0; k < 3; k++ {
		v := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(make([]float64, 6)))
		n, err := NewInput(g, "v", v)
		if err != nil {
			t.Fatal(err)
		}
		nodes, vals = append(nodes, n), append(vals, v)
	}
	for k, n := range nodes {
		if n.Value() != G.Value(vals[k]) || n.Op() != nil || !n.Shape().Eq(tensor.Shape{2, 3}) || n.Dtype() != tensor.Float64 {
			t.Errorf("input %d: %s is not a %v input bound to its own value", k, n.Name(), tensor.Shape{2, 3})
		}
		for _, m := range nodes[:k] {
			if m == n || m.Name() == n.Name() {
				t.Errorf("inputs %s and %s: the same node or name", m.Name(), n.Name())
			}
		}
	}
	if nodes[0].Name() != "v" || nodes[2].Name() != "v#3" {
		t.Errorf("names %s, %s, %s; want v, v#2, v#3", nodes[0].Name(), nodes[1].Name(), nodes[2].Name())
	}
	f32 := tensor.New(tensor.WithShape(4), tensor.WithBacking(make([]float32, 4)))
	if n, err := NewInput(g, "w", f32); err != nil || n.Dtype() != tensor.Float32 {
		t.Errorf("float32 input: %v, %v", n, err)
	}
	if _, err := NewInput(nil, "v", vals[0]); err == nil {
		t.Error("NewInput on a nil graph: no error")
	}
	if _, err := NewInput(g, "v", nil); err == nil {
		t.Error("NewInput of a nil value: no error")
	}
}

// TestTwoHVPsOnOneLoss builds two Hessian-vector products on one loss, their directions
// made by NewInput under the same names, and checks each one's Hessian (column j is H·e_j),
// taken whole one after the other, against a fresh graph's, against central differences of
// the gradient, and for symmetry.
func TestTwoHVPsOnOneLoss(t *testing.T) {
	ctx := context.Background()
	vals := mlpValues(5)
	type hvp struct {
		prog *Program
		out  []*G.Node
		dirs []*tensor.Dense
	}
	build := func(m *mlp) hvp {
		var h hvp
		vs := make([]*G.Node, len(m.params))
		for i, p := range m.params {
			d := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(p.Shape()...))
			v, err := NewInput(m.g, fmt.Sprintf("dir%d", i), d)
			if err != nil {
				t.Fatal(err)
			}
			vs[i], h.dirs = v, append(h.dirs, d)
		}
		var err error
		if h.out, err = HVP(m.cost, m.params, vs); err != nil {
			t.Fatal(err)
		}
		if h.prog, err = Compile(h.out...); err != nil {
			t.Fatal(err)
		}
		return h
	}
	m := buildMLP(t, tensor.Float64, vals, true)
	first, second := build(m), build(m)
	exact := build(buildMLP(t, tensor.Float64, vals, true))
	n := 0
	for _, d := range exact.dirs {
		n += d.Shape().TotalSize()
	}
	hessian := func(h hvp) [][]float64 {
		cols := make([][]float64, n)
		e := make([]float64, n)
		for j := range cols {
			e[j] = 1
			if err := SetFlat(h.dirs, e); err != nil {
				t.Fatal(err)
			}
			e[j] = 0
			if err := h.prog.Run(ctx); err != nil {
				t.Fatal(err)
			}
			var err error
			if cols[j], err = h.prog.Flatten(h.out...); err != nil {
				t.Fatal(err)
			}
		}
		return cols
	}
	hx, h1, h2 := hessian(exact), hessian(first), hessian(second)

	// Central differences of the gradient on the shared graph.
	grads, err := Grad(m.cost, m.params...)
	if err != nil {
		t.Fatal(err)
	}
	gp, err := Compile(grads...)
	if err != nil {
		t.Fatal(err)
	}
	gradAt := func() []float64 {
		if err := gp.Run(ctx); err != nil {
			t.Fatal(err)
		}
		g, err := gp.Flatten(grads...)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	const step = 1e-5
	fd := make([][]float64, 0, n)
	for _, p := range m.params {
		d := p.Value().(*tensor.Dense).Float64s()
		for j := range d {
			orig := d[j]
			d[j] = orig + step
			plus := gradAt()
			d[j] = orig - step
			minus := gradAt()
			d[j] = orig
			col := make([]float64, n)
			for i := range col {
				col[i] = (plus[i] - minus[i]) / (2 * step)
			}
			fd = append(fd, col)
		}
	}
	for name, h := range map[string][][]float64{"first": h1, "second": h2} {
		worstExact, worstFD, worstAsym := 0.0, 0.0, 0.0
		for j := 0; j < n; j++ {
			for i := 0; i < n; i++ {
				worstExact = math.Max(worstExact, math.Abs(h[j][i]-hx[j][i]))
				worstFD = math.Max(worstFD, math.Abs(h[j][i]-fd[j][i])/math.Max(1, math.Abs(fd[j][i])))
				worstAsym = math.Max(worstAsym, math.Abs(h[j][i]-h[i][j]))
			}
		}
		if worstExact > 1e-12 || worstFD > 1e-6 || worstAsym > 1e-12 {
			t.Errorf("%s HVP's %d×%d Hessian: off a fresh graph's by %.3g, off finite differences by %.3g, asymmetric by %.3g", name, n, n, worstExact, worstFD, worstAsym)
		}
	}
}
