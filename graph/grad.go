package graph

import (
	"fmt"
	"reflect"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Grad returns the derivative of the scalar cost with respect to each node of wrt, as new
// nodes of cost's graph. It is re-entrant: it keeps every adjoint in a map of its own (unlike
// gorgonia.Grad, which caches derivatives on the nodes and so gets grad-of-grad wrong), so it
// may be called any number of times on one graph, with respect to any nodes (parameters,
// hyperparameters, intermediate nodes), and on its own results, to any order.
//
// A node of wrt that cost does not depend on gets a zero gradient.
func Grad(cost *G.Node, wrt ...*G.Node) ([]*G.Node, error) {
	if cost == nil {
		return nil, fmt.Errorf("graph: Grad of a nil cost")
	}
	if n := cost.Shape().TotalSize(); n != 1 {
		return nil, fmt.Errorf("graph: Grad of a cost of shape %v; want a scalar (use VJP for other outputs)", shapeString(cost.Shape()))
	}
	seed, err := unitSeed(cost)
	if err != nil {
		return nil, err
	}
	return VJP([]*G.Node{cost}, []*G.Node{seed}, wrt...)
}

// unitSeed is the constant 1 of cost's dtype, shared by every Grad on the graph: with the same seed,
// the VJPs of a common subexpression of two costs (a loss and the loss plus a penalty, say) are
// the same nodes, which gorgonia's hash-consing merges, so a program computing both gradients
// computes that part once.
func unitSeed(cost *G.Node) (n *G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("graph: seeding Grad: %v", r)
		}
	}()
	var v any
	switch cost.Dtype() {
	case tensor.Float64:
		v = float64(1)
	case tensor.Float32:
		v = float32(1)
	default:
		return nil, fmt.Errorf("graph: Grad of a %v cost", cost.Dtype())
	}
	c := G.NewConstant(v, G.WithName("hyperflat.one."+cost.Dtype().String()))
	return cost.Graph().AddNode(c), nil
}

// VJP returns the vector-Jacobian product Σ_k cotangents[k]ᵀ · ∂outputs[k]/∂w for each node w
// of wrt. Each cotangent has its output's shape and may be any node, including one that
// depends on wrt; the result is differentiable again.
func VJP(outputs, cotangents []*G.Node, wrt ...*G.Node) (grads []*G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			grads, err = nil, fmt.Errorf("graph: differentiation failed: %v", r)
		}
	}()
	if len(outputs) != len(cotangents) {
		return nil, fmt.Errorf("graph: VJP of %d outputs with %d cotangents", len(outputs), len(cotangents))
	}
	for k, o := range outputs {
		c := cotangents[k]
		if o == nil || c == nil {
			return nil, fmt.Errorf("graph: VJP with a nil output or cotangent")
		}
		if !o.Shape().Eq(c.Shape()) && o.Shape().TotalSize() != c.Shape().TotalSize() {
			return nil, fmt.Errorf("graph: cotangent of shape %v for output of shape %v", shapeString(c.Shape()), shapeString(o.Shape()))
		}
		if o.Graph() != c.Graph() {
			return nil, fmt.Errorf("graph: cotangent %s is on another graph than output %s", c.Name(), o.Name())
		}
	}
	for _, w := range wrt {
		if w == nil {
			return nil, fmt.Errorf("graph: VJP with respect to a nil node")
		}
		// A node of another graph is never reached from the outputs: its gradient would be a
		// silent zero, not the derivative the caller meant.
		if len(outputs) > 0 && w.Graph() != outputs[0].Graph() {
			return nil, fmt.Errorf("graph: differentiating with respect to %s, a node of another graph than the output %s", w.Name(), outputs[0].Name())
		}
	}

	order := topoSort(outputs)
	kids := make(map[*G.Node][]*G.Node, len(order))
	for _, n := range order {
		kids[n] = children(n)
	}
	// live: the nodes through which some node of wrt reaches an output.
	live := make(map[*G.Node]bool, len(order))
	for _, w := range wrt {
		live[w] = true
	}
	for _, n := range order {
		if live[n] {
			continue
		}
		for _, c := range kids[n] {
			if live[c] {
				live[n] = true
				break
			}
		}
	}

	pending := make(map[*G.Node][]*G.Node)
	for k, o := range outputs {
		if live[o] {
			c := cotangents[k]
			if !c.Shape().Eq(o.Shape()) {
				if c, err = Reshape(c, o.Shape()...); err != nil {
					return nil, err
				}
			}
			pending[o] = append(pending[o], c)
		}
	}
	total := make(map[*G.Node]*G.Node)
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		parts := pending[n]
		if !live[n] || len(parts) == 0 {
			continue
		}
		delete(pending, n)
		adj, err := addAll(parts, n)
		if err != nil {
			return nil, err
		}
		total[n] = adj
		ks := kids[n]
		need := make([]bool, len(ks))
		any := false
		for j, c := range ks {
			need[j] = live[c]
			any = any || need[j]
		}
		if !any {
			continue
		}
		gs, err := vjpOf(n, ks, adj, need)
		if err != nil {
			return nil, err
		}
		for j, c := range ks {
			if need[j] && j < len(gs) && gs[j] != nil {
				pending[c] = append(pending[c], gs[j])
			}
		}
	}
	grads = make([]*G.Node, len(wrt))
	for k, w := range wrt {
		if g, ok := total[w]; ok {
			grads[k] = g
			continue
		}
		if grads[k], err = fillLike(w, 0); err != nil {
			return nil, err
		}
	}
	return grads, nil
}

// addAll sums the adjoint contributions to node n.
func addAll(parts []*G.Node, n *G.Node) (*G.Node, error) {
	want := n.Shape()
	var sum *G.Node
	for _, p := range parts {
		if !p.Shape().Eq(want) {
			if p.Shape().TotalSize() != want.TotalSize() {
				return nil, fmt.Errorf("graph: adjoint of shape %v for node %s of shape %v", shapeString(p.Shape()), n.Name(), shapeString(want))
			}
			var err error
			if p, err = Reshape(p, want...); err != nil {
				return nil, err
			}
		}
		if sum == nil {
			sum = p
			continue
		}
		var err error
		if sum, err = Add(sum, p); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// brokenGorgoniaOps are gorgonia v0.9.18 ops whose symbolic derivatives are wrong, panic, or
// cannot be differentiated again; Grad refuses them and names the replacement.
var brokenGorgoniaOps = map[string]string{
	"softmaxOp":       "graph.Softmax / graph.LogSoftmax",
	"softmaxDiffOp":   "graph.Softmax / graph.LogSoftmax",
	"sliceOp":         "graph.Slice",
	"sliceIncrOp":     "graph.Slice",
	"im2colOp":        "graph.Im2Col / graph.Conv2d",
	"col2imOp":        "graph.Col2Im / graph.Conv2d",
	"maxPoolOp":       "graph.MaxPool2d",
	"maxPoolDiffOp":   "graph.MaxPool2d",
	"avgPoolOp":       "graph.AvgPool2d",
	"avgPoolDiffOp":   "graph.AvgPool2d",
	"BatchNormOp":     "graph.BatchNorm",
	"batchnormDiffOp": "graph.BatchNorm",
	"dropoutOp":       "graph.Dropout",
	"dropoutDiffOp":   "graph.Dropout",
}

func opTypeName(op G.Op) string {
	t := reflect.TypeOf(op)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// vjpOf computes the adjoints of node n's children.
func vjpOf(n *G.Node, ks []*G.Node, adj *G.Node, need []bool) (out []*G.Node, err error) {
	op := n.Op()
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("graph: differentiating %v: %v", op, r)
		}
	}()
	switch o := op.(type) {
	case Differentiable:
		return o.VJP(ks, n, adj, need)
	case nil:
		return nil, nil
	}
	name := opTypeName(op)
	if use, bad := brokenGorgoniaOps[name]; bad {
		return nil, fmt.Errorf("graph: gorgonia's %v (%s) has wrong or non-re-differentiable derivatives in v0.9.18; use %s", op, name, use)
	}
	switch name {
	case "reshapeOp": // gorgonia's gradient of a scalar reshape has the wrong type
		r, err := Reshape(adj, ks[0].Shape()...)
		return []*G.Node{r}, err
	case "linAlgBinOp":
		if strings.Contains(op.String(), "⊗") || len(ks[0].Shape()) != 2 || len(ks[1].Shape()) != 2 {
			return nil, fmt.Errorf("graph: gorgonia's %v on shapes %v, %v has a wrong gradient in v0.9.18 (outer product); use graph.MatMul on 2-D nodes", op, shapeString(ks[0].Shape()), shapeString(ks[1].Shape()))
		}
	}
	sd, ok := op.(G.SDOp)
	if !ok {
		return nil, fmt.Errorf("graph: op %v (%s) is not differentiable", op, name)
	}
	diff := sd.DiffWRT(len(ks))
	for j := range need {
		if need[j] && j < len(diff) && !diff[j] {
			need[j] = false
		}
	}
	gs, err := sd.SymDiff(G.Nodes(ks), n, adj)
	if err != nil {
		return nil, fmt.Errorf("graph: gorgonia's SymDiff of %v: %w", op, err)
	}
	out = make([]*G.Node, len(ks))
	for j := range ks {
		if need[j] && j < len(gs) {
			out[j] = gs[j]
		}
	}
	return out, nil
}

// HVP returns the Hessian-vector product H·v of the scalar f with respect to params, by double
// backpropagation: the gradient of Σ_i ⟨∇_{params[i]} f, vs[i]⟩. Each vs[i] has the shape of
// params[i] and may be any node (a fixed direction is an input node).
func HVP(f *G.Node, params, vs []*G.Node) ([]*G.Node, error) {
	dot, err := gradDot(f, params, vs)
	if err != nil {
		return nil, err
	}
	return Grad(dot, params...)
}

// MixedVJP returns ∂/∂λ ⟨∇_θ f, v⟩ for every node λ of hypers: the mixed second derivative
// (∂²f/∂λ∂θ)ᵀ·v that implicit and unrolled hypergradients need, with θ = params, v = vs.
func MixedVJP(f *G.Node, params, vs, hypers []*G.Node) ([]*G.Node, error) {
	dot, err := gradDot(f, params, vs)
	if err != nil {
		return nil, err
	}
	return Grad(dot, hypers...)
}

// gradDot is Σ_i ⟨∇_{params[i]} f, vs[i]⟩ as a scalar node.
func gradDot(f *G.Node, params, vs []*G.Node) (*G.Node, error) {
	if len(params) != len(vs) || len(params) == 0 {
		return nil, fmt.Errorf("graph: %d parameters with %d vectors", len(params), len(vs))
	}
	gs, err := Grad(f, params...)
	if err != nil {
		return nil, err
	}
	return Dot(gs, vs)
}

// Dot returns Σ_i ⟨as[i], bs[i]⟩, the inner product of two lists of equally shaped nodes, as
// a scalar node.
func Dot(as, bs []*G.Node) (*G.Node, error) {
	if len(as) != len(bs) || len(as) == 0 {
		return nil, fmt.Errorf("graph: Dot of %d and %d nodes", len(as), len(bs))
	}
	var total *G.Node
	for i := range as {
		if as[i] == nil || bs[i] == nil {
			return nil, fmt.Errorf("graph: Dot of a nil node")
		}
		if !as[i].Shape().Eq(bs[i].Shape()) {
			return nil, fmt.Errorf("graph: Dot of shapes %v and %v", shapeString(as[i].Shape()), shapeString(bs[i].Shape()))
		}
		p, err := Mul(as[i], bs[i])
		if err != nil {
			return nil, err
		}
		s, err := Sum(p)
		if err != nil {
			return nil, err
		}
		if total == nil {
			total = s
		} else if total, err = Add(total, s); err != nil {
			return nil, err
		}
	}
	return total, nil
}

// SquaredNorm returns Σ_i ‖xs[i]‖² as a scalar node.
func SquaredNorm(xs ...*G.Node) (*G.Node, error) { return Dot(xs, xs) }

// topoSort lists the ancestors of roots (roots included), every node after its children.
func topoSort(roots []*G.Node) []*G.Node {
	var order []*G.Node
	state := make(map[*G.Node]uint8) // 1 visiting, 2 done
	type frame struct {
		n    *G.Node
		kids []*G.Node
		next int
	}
	for _, r := range roots {
		if state[r] != 0 {
			continue
		}
		stack := []frame{{n: r, kids: children(r)}}
		state[r] = 1
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next < len(top.kids) {
				c := top.kids[top.next]
				top.next++
				if state[c] == 0 {
					state[c] = 1
					stack = append(stack, frame{n: c, kids: children(c)})
				}
				continue
			}
			state[top.n] = 2
			order = append(order, top.n)
			stack = stack[:len(stack)-1]
		}
	}
	return order
}

// children lists n's inputs in order.
func children(n *G.Node) []*G.Node {
	it := n.Graph().From(n.ID())
	if it == nil {
		return nil
	}
	out := make([]*G.Node, 0, it.Len())
	for it.Next() {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}
