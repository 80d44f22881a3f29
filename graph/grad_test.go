package graph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mlp holds a 2-layer perceptron's graph: cost = CE(W2·tanh(W1·x + b1) + b2) + Σ λ⊙θ² over
// both weight matrices, with λ one hyperparameter per weight.
type mlp struct {
	g              *G.ExprGraph
	x, y           *G.Node
	params, lambda []*G.Node
	cost           *G.Node
}

func buildMLP(t testing.TB, dt tensor.Dtype, vals map[string]*tensor.Dense, withPenalty bool) *mlp {
	t.Helper()
	m := &mlp{g: G.NewGraph()}
	node := func(name string) *G.Node {
		v := vals[name]
		if dt == tensor.Float32 {
			v = toF32(v)
		}
		return G.NewTensor(m.g, dt, len(v.Shape()), G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
	}
	m.x, m.y = node("x"), node("y")
	w1, b1, w2, b2 := node("w1"), node("b1"), node("w2"), node("b2")
	m.params = []*G.Node{w1, b1, w2, b2}
	h := must(MatMul(m.x, w1))
	h = must(Add(h, b1))
	h = must(Tanh(h))
	o := must(MatMul(h, w2))
	o = must(Add(o, b2))
	m.cost = must(CrossEntropy(o, m.y))
	if withPenalty {
		l1, l2 := node("l1"), node("l2")
		m.lambda = []*G.Node{l1, l2}
		p1 := must(Sum(must(Mul(l1, must(Square(w1))))))
		p2 := must(Sum(must(Mul(l2, must(Square(w2))))))
		m.cost = must(Add(m.cost, must(Add(p1, p2))))
	}
	return m
}

func must(n *G.Node, err error) *G.Node {
	if err != nil {
		panic(err)
	}
	return n
}

func toF32(v *tensor.Dense) *tensor.Dense {
	f := v.Float64s()
	d := make([]float32, len(f))
	for i, e := range f {
		d[i] = float32(e)
	}
	return tensor.New(tensor.WithShape(v.Shape()...), tensor.WithBacking(d))
}

func mlpValues(seed uint64) map[string]*tensor.Dense {
	rng := rand.New(rand.NewPCG(seed, 7))
	return map[string]*tensor.Dense{
		"x": normal(rng, 5, 4), "y": oneHot(rng, 5, 3),
		"w1": normal(rng, 4, 6), "b1": normal(rng, 6), "w2": normal(rng, 6, 3), "b2": normal(rng, 3),
		"l1": positive(rng, 4, 6), "l2": positive(rng, 6, 3),
	}
}

func run1(t testing.TB, outs ...*G.Node) [][]float64 {
	t.Helper()
	p, err := Compile(outs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := make([][]float64, len(outs))
	for i, o := range outs {
		if res[i], err = p.Float64s(o); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

func maxRelDiff(a, b []float64) float64 {
	worst := 0.0
	for i := range a {
		worst = math.Max(worst, math.Abs(a[i]-b[i])/math.Max(math.Max(math.Abs(a[i]), math.Abs(b[i])), 1e-3))
	}
	return worst
}

// TestGradOfGradNormPenalizedMLP is the paper-shaped second-order case: F = ‖∇_θ f‖² for
// f = CE(MLP(x;θ)) + Σ λ⊙θ², differentiated with respect to θ and to λ.
func TestGradOfGradNormPenalizedMLP(t *testing.T) {
	vals := mlpValues(1)
	names := []string{"w1", "b1", "w2", "b2", "l1", "l2"}
	ins := make([]*tensor.Dense, len(names))
	for i, n := range names {
		ins[i] = vals[n]
	}
	f := func(in []*G.Node) (*G.Node, error) {
		g := in[0].Graph()
		x := G.NewTensor(g, tensor.Float64, 2, G.WithShape(5, 4), G.WithName("x"), G.WithValue(vals["x"]))
		y := G.NewTensor(g, tensor.Float64, 2, G.WithShape(5, 3), G.WithName("y"), G.WithValue(vals["y"]))
		h := must(Tanh(must(Add(must(MatMul(x, in[0])), in[1]))))
		o := must(Add(must(MatMul(h, in[2])), in[3]))
		cost := must(CrossEntropy(o, y))
		cost = must(Add(cost, must(Sum(must(Mul(in[4], must(Square(in[0]))))))))
		cost = must(Add(cost, must(Sum(must(Mul(in[5], must(Square(in[2]))))))))
		gs, err := Grad(cost, in[:4]...)
		if err != nil {
			return nil, err
		}
		return SquaredNorm(gs...)
	}
	res, err := GradCheck(f, ins, CheckOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if !res.Passed {
		t.Fatalf("∇‖∇θ f‖² w.r.t. θ and λ: %v", res)
	}
}

func TestGradTwiceOnOneGraphEqualsFreshGraphs(t *testing.T) {
	vals := mlpValues(2)
	m := buildMLP(t, tensor.Float64, vals, true)
	first, err := Grad(m.cost, m.params...)
	if err != nil {
		t.Fatal(err)
	}
	// a second, different derivative on the same graph, then the first one again
	norm := must(SquaredNorm(first...))
	second, err := Grad(norm, append(m.params, m.lambda...)...)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Grad(m.cost, m.params...)
	if err != nil {
		t.Fatal(err)
	}
	got := run1(t, append(append(append([]*G.Node{}, first...), second...), again...)...)

	fresh1 := buildMLP(t, tensor.Float64, vals, true)
	g1, err := Grad(fresh1.cost, fresh1.params...)
	if err != nil {
		t.Fatal(err)
	}
	want1 := run1(t, g1...)
	fresh2 := buildMLP(t, tensor.Float64, vals, true)
	g2, err := Grad(fresh2.cost, fresh2.params...)
	if err != nil {
		t.Fatal(err)
	}
	g2, err = Grad(must(SquaredNorm(g2...)), append(fresh2.params, fresh2.lambda...)...)
	if err != nil {
		t.Fatal(err)
	}
	want2 := run1(t, g2...)
	n := len(first)
	for i := 0; i < n; i++ {
		if d := maxRelDiff(got[i], want1[i]); d > 1e-12 {
			t.Errorf("first Grad, param %d: differs from a fresh graph by %g", i, d)
		}
		if d := maxRelDiff(got[2*n+len(m.lambda)+i], want1[i]); d > 1e-12 {
			t.Errorf("repeated Grad, param %d: differs from a fresh graph by %g", i, d)
		}
	}
	for i := range second {
		if d := maxRelDiff(got[n+i], want2[i]); d > 1e-12 {
			t.Errorf("grad of grad norm, input %d: differs from a fresh graph by %g", i, d)
		}
	}
}

func TestHVPMatchesFiniteDifferenceHessian(t *testing.T) {
	vals := mlpValues(3)
	m := buildMLP(t, tensor.Float64, vals, false)
	rng := rand.New(rand.NewPCG(4, 4))
	vs := make([]*G.Node, len(m.params))
	for i, p := range m.params {
		v, err := randomInput(m.g, p.Shape(), rng, fmt.Sprintf("v%d", i))
		if err != nil {
			t.Fatal(err)
		}
		vs[i] = v
	}
	hv, err := HVP(m.cost, m.params, vs)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := Grad(m.cost, m.params...)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Compile(append(hv, grads...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := prog.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var analytic []float64
	for _, h := range hv {
		f, _ := prog.Float64s(h)
		analytic = append(analytic, f...)
	}
	// Finite-difference Hessian, one column per parameter entry, then H·v.
	var flatV []float64
	for _, v := range vs {
		f, _ := ToFloat64s(v.Value())
		flatV = append(flatV, f...)
	}
	gradAt := func() []float64 {
		if err := prog.Run(ctx); err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, g := range grads {
			f, _ := prog.Float64s(g)
			out = append(out, f...)
		}
		return out
	}
	n := len(flatV)
	hvFD := make([]float64, n)
	const h = 1e-5
	col := 0
	for _, p := range m.params {
		d := p.Value().(*tensor.Dense).Float64s()
		for j := range d {
			orig := d[j]
			d[j] = orig + h
			gp := gradAt()
			d[j] = orig - h
			gm := gradAt()
			d[j] = orig
			for r := 0; r < n; r++ {
				hvFD[r] += (gp[r] - gm[r]) / (2 * h) * flatV[col]
			}
			col++
		}
	}
	if d := maxRelDiff(analytic, hvFD); d > 1e-6 {
		t.Fatalf("HVP differs from finite-difference Hessian·v by %g", d)
	}
}

func TestMixedVJPIsDerivativeOfGradientDotV(t *testing.T) {
	vals := mlpValues(5)
	m := buildMLP(t, tensor.Float64, vals, true)
	rng := rand.New(rand.NewPCG(5, 5))
	vs := make([]*G.Node, len(m.params))
	for i, p := range m.params {
		vs[i] = must(randomInput(m.g, p.Shape(), rng, fmt.Sprintf("v%d", i)))
	}
	mixed, err := MixedVJP(m.cost, m.params, vs, m.lambda)
	if err != nil {
		t.Fatal(err)
	}
	// Closed form: the penalty Σ λ⊙θ² contributes ∇_θ = 2λ⊙θ, so ∂/∂λ ⟨∇_θ f, v⟩ = 2θ⊙v for
	// each penalized weight matrix (the cross-entropy does not depend on λ).
	got := run1(t, mixed...)
	for k, wi := range []int{0, 2} {
		theta := m.params[wi].Value().(*tensor.Dense).Float64s()
		v, _ := ToFloat64s(vs[wi].Value())
		want := make([]float64, len(theta))
		for j := range theta {
			want[j] = 2 * theta[j] * v[j]
		}
		if d := maxRelDiff(got[k], want); d > 1e-12 {
			t.Errorf("∂/∂λ%d ⟨∇θ f, v⟩ differs from 2θ⊙v by %g", k+1, d)
		}
	}
}

func TestConvPoolDenseCrossEntropySecondOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	x := normal(rng, 2, 1, 6, 6)
	w := normal(rng, 3, 1, 3, 3)
	b := normal(rng, 1, 3, 1, 1)
	dense := normal(rng, 3*3*3, 4)
	y := oneHot(rng, 2, 4)
	f := func(in []*G.Node) (*G.Node, error) {
		c := must(Conv2d(in[0], in[1], Geometry{PadH: 1, PadW: 1}))
		c = must(Add(c, in[2]))
		p := must(MaxPool2d(c, 2, 2, Geometry{}))
		flat := must(Reshape(p, 2, -1))
		return CrossEntropy(must(MatMul(flat, in[3])), in[4])
	}
	ins := []*tensor.Dense{x, w, b, dense, y}
	opt := CheckOptions{Seed: 9, Wrt: []int{0, 1, 2, 3}}
	for _, check := range []func(Func, []*tensor.Dense, CheckOptions) (CheckResult, error){GradCheck, GradGradCheck} {
		res, err := check(f, ins, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res)
		if !res.Passed {
			t.Errorf("conv→maxpool→dense→CE: %v", res)
		}
	}
}

// squareWithCutSecondOrder is x² whose VJP 2x·g hides x behind StopGradient: right to first
// order, wrong to second (the shape of gorgonia's Slice and BatchNorm bugs).
type squareWithCutSecondOrder struct{ *unaryOp }

func (o squareWithCutSecondOrder) VJP(in []*G.Node, _, g *G.Node, _ []bool) ([]*G.Node, error) {
	two := must(Scale(must(StopGradient(in[0])), 2))
	return []*G.Node{must(Mul(g, two))}, nil
}

// doubledExp is eˣ with a VJP twice too large.
type doubledExp struct{ *unaryOp }

func (o doubledExp) VJP(_ []*G.Node, y, g *G.Node, _ []bool) ([]*G.Node, error) {
	return []*G.Node{must(Scale(must(Mul(g, y)), 2))}, nil
}

func TestCheckersCatchWrongDerivatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	x := []*tensor.Dense{normal(rng, 4)}
	wrap := func(mk func(*unaryOp) G.Op, kind unaryKind) Func {
		return func(in []*G.Node) (*G.Node, error) {
			u := &unaryOp{base: newBase("bad"+kind.String(), "", in[0].Shape(), in[0]), kind: kind}
			return apply(mk(u), in[0])
		}
	}
	badFirst := wrap(func(u *unaryOp) G.Op { return doubledExp{u} }, kExp)
	res, err := GradCheck(badFirst, x, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.MaxRelErr < 0.1 {
		t.Errorf("GradCheck passed a VJP twice too large: %v", res)
	}
	badSecond := wrap(func(u *unaryOp) G.Op { return squareWithCutSecondOrder{u} }, kSquare)
	if res, _ := GradCheck(badSecond, x, CheckOptions{}); !res.Passed {
		t.Errorf("first order of the cut square should pass: %v", res)
	}
	res, err = GradGradCheck(badSecond, x, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed {
		t.Errorf("GradGradCheck passed a VJP that hides its second derivative: %v", res)
	}
}

func TestGorgoniaNativeOpsDifferentiateToSecondOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	ins := []*tensor.Dense{normal(rng, 3, 4), normal(rng, 4, 2), normal(rng, 3, 2)}
	f := func(in []*G.Node) (*G.Node, error) {
		h, err := G.Mul(in[0], in[1])
		if err != nil {
			return nil, err
		}
		h = G.Must(G.Add(h, in[2]))
		h = G.Must(G.Tanh(h))
		h = G.Must(G.HadamardProd(h, h))
		return G.Sum(h)
	}
	for _, check := range []func(Func, []*tensor.Dense, CheckOptions) (CheckResult, error){GradCheck, GradGradCheck} {
		res, err := check(f, ins, CheckOptions{Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Passed {
			t.Errorf("gorgonia-native graph: %v", res)
		}
	}
}

func TestGradRefusesBrokenGorgoniaOps(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"))
	sm := G.Must(G.SoftMax(x))
	cost := must(Sum(sm))
	_, err := Grad(cost, x)
	if err == nil || !strings.Contains(err.Error(), "graph.Softmax") {
		t.Fatalf("Grad through gorgonia.SoftMax: err = %v; want a refusal naming graph.Softmax", err)
	}
}

func TestFloat32AgreesWithFloat64(t *testing.T) {
	vals := mlpValues(11)
	var res [2][][]float64
	for i, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		m := buildMLP(t, dt, vals, true)
		gs, err := Grad(m.cost, m.params...)
		if err != nil {
			t.Fatal(err)
		}
		hv, err := HVP(m.cost, m.params, gs)
		if err != nil {
			t.Fatal(err)
		}
		res[i] = run1(t, append(append([]*G.Node{m.cost}, gs...), hv...)...)
	}
	for k := range res[0] {
		if d := maxRelDiff(res[0][k], res[1][k]); d > 1e-5 {
			t.Errorf("output %d: float32 differs from float64 by %g", k, d)
		}
	}
}

func TestProgramReportsBindingErrors(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"))
	s := must(Sum(must(Square(x))))
	p, err := Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no value") {
		t.Errorf("unbound input: err = %v", err)
	}
	if err := p.Let(x, tensor.New(tensor.WithShape(3, 2), tensor.WithBacking(make([]float64, 6)))); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("wrong shape: err = %v", err)
	}
	if err := p.Let(x, tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6}))); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Scalar(s); v != 91 {
		t.Errorf("Σx² = %v, want 91", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Run(ctx); err != context.Canceled {
		t.Errorf("cancelled run: err = %v", err)
	}
}

// TestCompiledGradientMemoryIsFlat runs a compiled gradient program 10,000 times with new
// inputs bound each step and requires the live heap not to grow.
func TestCompiledGradientMemoryIsFlat(t *testing.T) {
	vals := mlpValues(12)
	m := buildMLP(t, tensor.Float64, vals, true)
	gs, err := Grad(m.cost, m.params...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(append([]*G.Node{m.cost}, gs...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	xs := [2]*tensor.Dense{vals["x"], vals["x"].Clone().(*tensor.Dense)}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	step := func(i int) {
		if err := p.Let(m.x, xs[i%2]); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		step(i)
	}
	before := heap()
	var allocs runtime.MemStats
	runtime.ReadMemStats(&allocs)
	mallocs, total := allocs.Mallocs, allocs.TotalAlloc
	const runs = 10000
	for i := 0; i < runs; i++ {
		step(i)
	}
	after := heap()
	runtime.ReadMemStats(&allocs)
	perRun := float64(allocs.Mallocs-mallocs) / runs
	bytesPerRun := float64(allocs.TotalAlloc-total) / runs
	t.Logf("heap %d → %d bytes, %.1f allocations and %.0f bytes per run", before, after, perRun, bytesPerRun)
	if after > before+256<<10 {
		t.Errorf("heap grew from %d to %d bytes over %d runs", before, after, runs)
	}
	// Result buffers are reused, so what remains is per-op bookkeeping of a few bytes.
	if bytesPerRun > 4096 {
		t.Errorf("%.0f bytes allocated per steady-state run; want ≤ 4096", bytesPerRun)
	}
}

func TestSamePaddingKeepsSpatialSize(t *testing.T) {
	g := G.NewGraph()
	for _, k := range []int{2, 3, 4, 5, 6} {
		x := G.NewTensor(g, tensor.Float64, 4, G.WithShape(1, 1, 7, 8), G.WithName(fmt.Sprint("x", k)))
		w := G.NewTensor(g, tensor.Float64, 4, G.WithShape(2, 1, k, k), G.WithName(fmt.Sprint("w", k)))
		y, err := Conv2d(x, w, SamePadding(k, k))
		if err != nil {
			t.Fatal(err)
		}
		if s := y.Shape(); !s.Eq(tensor.Shape{1, 2, 7, 8}) {
			t.Errorf("kernel %d: shape %v, want (1, 2, 7, 8)", k, s)
		}
	}
}
