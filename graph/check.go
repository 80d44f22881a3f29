package graph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Func builds a function of its input nodes on their graph, for the gradient checkers. Its
// result may have any shape: the checkers reduce it to a scalar with a fixed random weighting,
// so that every entry of the Jacobian takes part.
type Func func(inputs []*G.Node) (*G.Node, error)

// CheckOptions tunes GradCheck and GradGradCheck. The zero value is usable.
type CheckOptions struct {
	Step  float64 // finite-difference step h; 1e-4 when zero
	Tol   float64 // largest relative error that passes; 1e-5 when zero
	Floor float64 // relative errors are |a−n| / max(|a|, |n|, Floor); 1e-3 when zero
	Seed  uint64  // seeds the output weighting and the second-order directions
	// Wrt lists the inputs to differentiate with respect to; all when empty. The others are
	// held fixed (data, targets, masks).
	Wrt []int
}

func (o CheckOptions) withDefaults() CheckOptions {
	if o.Step == 0 {
		o.Step = 1e-4
	}
	if o.Tol == 0 {
		o.Tol = 1e-5
	}
	if o.Floor == 0 {
		o.Floor = 1e-3
	}
	return o
}

// CheckResult reports the worst disagreement between analytic and finite-difference
// derivatives.
type CheckResult struct {
	Order     int     // 1 for GradCheck, 2 for GradGradCheck
	MaxRelErr float64 // the largest relative error over all checked entries
	MaxAbsErr float64
	Worst     string // where MaxRelErr occurred: "input i[j]: analytic a, numeric n"
	Entries   int    // how many derivative entries were compared
	Passed    bool   // MaxRelErr ≤ Tol
}

func (r CheckResult) String() string {
	verdict := "FAIL"
	if r.Passed {
		verdict = "ok"
	}
	return fmt.Sprintf("order %d: %s, max rel err %.2e over %d entries (worst %s)", r.Order, verdict, r.MaxRelErr, r.Entries, r.Worst)
}

// GradCheck compares the first derivatives of f at inputs (float64 tensors) computed by Grad
// with central finite differences, like PyTorch's gradcheck.
func GradCheck(f Func, inputs []*tensor.Dense, opt CheckOptions) (CheckResult, error) {
	return check(f, inputs, opt, 1)
}

// GradGradCheck compares the second derivatives of f at inputs with central finite
// differences of its first derivatives, like PyTorch's gradgradcheck: for a fixed random
// direction v it checks ∇⟨∇c, v⟩ (a Hessian-vector product of the weighted output c, by
// double backpropagation through Grad) against differences of ⟨∇c, v⟩.
func GradGradCheck(f Func, inputs []*tensor.Dense, opt CheckOptions) (CheckResult, error) {
	return check(f, inputs, opt, 2)
}

func check(f Func, inputs []*tensor.Dense, opt CheckOptions, order int) (CheckResult, error) {
	opt = opt.withDefaults()
	res := CheckResult{Order: order}
	if f == nil {
		return res, fmt.Errorf("graph: a check of a nil function")
	}
	g := G.NewGraph()
	nodes := make([]*G.Node, len(inputs))
	for i, in := range inputs {
		if in == nil {
			return res, fmt.Errorf("graph: check input %d is nil", i)
		}
		if in.Dtype() != tensor.Float64 {
			return res, fmt.Errorf("graph: checks run in float64; input %d is %v", i, in.Dtype())
		}
		name := fmt.Sprintf("x%d", i)
		if len(in.Shape()) == 0 {
			v := G.NewF64(in.Float64s()[0])
			nodes[i] = G.NewScalar(g, tensor.Float64, G.WithName(name), G.WithValue(v))
			continue
		}
		c := in.Clone().(*tensor.Dense)
		nodes[i] = G.NewTensor(g, tensor.Float64, len(c.Shape()), G.WithShape(c.Shape()...), G.WithName(name), G.WithValue(c))
	}
	wrt := opt.Wrt
	if len(wrt) == 0 {
		for i := range inputs {
			wrt = append(wrt, i)
		}
	}
	wrtNodes := make([]*G.Node, len(wrt))
	for k, i := range wrt {
		if i < 0 || i >= len(inputs) {
			return res, fmt.Errorf("graph: Wrt index %d out of range", i)
		}
		wrtNodes[k] = nodes[i]
	}
	y, err := f(nodes)
	if err != nil {
		return res, fmt.Errorf("graph: building the checked function: %w", err)
	}
	return checkNodes(y, wrtNodes, opt, order)
}

// GradCheckNodes is GradCheck for a function already built: y's derivatives with respect to
// the input nodes wrt, which must be bound to float64 values (perturbed in place during the
// check and restored after).
func GradCheckNodes(y *G.Node, wrt []*G.Node, opt CheckOptions) (CheckResult, error) {
	return checkNodes(y, wrt, opt.withDefaults(), 1)
}

// GradGradCheckNodes is GradGradCheck for a function already built; see GradCheckNodes.
func GradGradCheckNodes(y *G.Node, wrt []*G.Node, opt CheckOptions) (CheckResult, error) {
	return checkNodes(y, wrt, opt.withDefaults(), 2)
}

func checkNodes(y *G.Node, wrtNodes []*G.Node, opt CheckOptions, order int) (CheckResult, error) {
	res := CheckResult{Order: order}
	if y == nil {
		return res, fmt.Errorf("graph: a check of a nil node")
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15^uint64(order)))
	g := y.Graph()
	data := make([][]float64, len(wrtNodes))
	for k, n := range wrtNodes {
		switch {
		case n == nil:
			return res, fmt.Errorf("graph: a check with respect to a nil node")
		case n.Graph() != g:
			return res, fmt.Errorf("graph: a check with respect to %s, a node of another graph", n.Name())
		}
		if n.Op() != nil {
			return res, fmt.Errorf("graph: checks differentiate input nodes; %s is computed", n.Name())
		}
		v := n.Value()
		if v == nil || v.Dtype() != tensor.Float64 {
			return res, fmt.Errorf("graph: checks run in float64; input %s is bound to %v", n.Name(), v)
		}
		var err error
		if data[k], err = Elements[float64](v); err != nil {
			return res, err
		}
	}
	// Node names must be new to the graph: gorgonia merges input nodes of equal names.
	tag := len(g.AllNodes())
	cost, err := weighted(g, y, rng, fmt.Sprintf("check.w.%d", tag))
	if err != nil {
		return res, err
	}
	// target is the scalar whose gradient is checked: the weighted output (order 1), or
	// ⟨∇cost, v⟩ for random directions v (order 2).
	target := cost
	if order == 2 {
		grads, err := Grad(cost, wrtNodes...)
		if err != nil {
			return res, err
		}
		dirs := make([]*G.Node, len(grads))
		for k, gn := range grads {
			if dirs[k], err = randomInput(g, gn.Shape(), rng, fmt.Sprintf("check.v%d.%d", k, tag)); err != nil {
				return res, err
			}
		}
		if target, err = Dot(grads, dirs); err != nil {
			return res, err
		}
	}
	analytic, err := Grad(target, wrtNodes...)
	if err != nil {
		return res, err
	}
	prog, err := Compile(append([]*G.Node{target}, analytic...)...)
	if err != nil {
		return res, err
	}
	ctx := context.Background()
	if err := prog.Run(ctx); err != nil {
		return res, err
	}
	want := make([][]float64, len(analytic))
	for k, a := range analytic {
		if want[k], err = prog.Float64s(a); err != nil {
			return res, err
		}
	}
	eval := func() (float64, error) {
		if err := prog.Run(ctx); err != nil {
			return 0, err
		}
		return prog.Scalar(target)
	}
	for k := range wrtNodes {
		x := data[k]
		for j := range x {
			num, err := derivative(x, j, opt.Step, eval)
			if err != nil {
				return res, err
			}
			a := want[k][j]
			abs := math.Abs(a - num)
			rel := abs / math.Max(math.Max(math.Abs(a), math.Abs(num)), opt.Floor)
			if math.IsNaN(rel) {
				rel = math.Inf(1)
			}
			res.Entries++
			res.MaxAbsErr = math.Max(res.MaxAbsErr, abs)
			if rel > res.MaxRelErr || res.Worst == "" {
				res.MaxRelErr = rel
				res.Worst = fmt.Sprintf("%s[%d]: analytic %.10g, numeric %.10g", wrtNodes[k].Name(), j, a, num)
			}
		}
	}
	res.Passed = res.MaxRelErr <= opt.Tol
	return res, nil
}

// derivative estimates ∂f/∂x[j] with the five-point central stencil
// (8(f(x+h)−f(x−h)) − (f(x+2h)−f(x−2h))) / 12h, whose error is O(h⁴): accurate enough to check
// second derivatives of large graphs to 1e-5 in float64, where the two-point stencil is not.
func derivative(x []float64, j int, h float64, f func() (float64, error)) (float64, error) {
	orig := x[j]
	defer func() { x[j] = orig }()
	var v [4]float64
	for k, d := range [4]float64{h, -h, 2 * h, -2 * h} {
		x[j] = orig + d
		var err error
		if v[k], err = f(); err != nil {
			return 0, err
		}
	}
	return (8*(v[0]-v[1]) - (v[2] - v[3])) / (12 * h), nil
}

// weighted reduces y to the scalar Σ w ⊙ y with fixed random weights w (y itself if scalar).
func weighted(g *G.ExprGraph, y *G.Node, rng *rand.Rand, name string) (*G.Node, error) {
	if y.Shape().TotalSize() == 1 && len(y.Shape()) == 0 {
		return y, nil
	}
	w, err := randomInput(g, y.Shape(), rng, name)
	if err != nil {
		return nil, err
	}
	p, err := Mul(y, w)
	if err != nil {
		return nil, err
	}
	return Sum(p)
}

// randomInput adds an input node of the given shape holding N(0,1) draws.
func randomInput(g *G.ExprGraph, s tensor.Shape, rng *rand.Rand, name string) (*G.Node, error) {
	n := s.TotalSize()
	d := make([]float64, n)
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	if len(s) == 0 {
		node := G.NewScalar(g, tensor.Float64, G.WithName(name))
		return node, G.Let(node, d[0])
	}
	v := tensor.New(tensor.WithShape(s.Clone()...), tensor.WithBacking(d))
	return G.NewTensor(g, tensor.Float64, len(s), G.WithShape(s.Clone()...), G.WithName(name), G.WithValue(v)), nil
}
