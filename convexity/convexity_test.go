package convexity

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func setParam(t *testing.T, p *layers.Param, vals ...float64) {
	t.Helper()
	d := p.Value.Float64s()
	if len(d) != len(vals) {
		t.Fatalf("%s has %d entries, got %d values", p.Name, len(d), len(vals))
	}
	copy(d, vals)
}

func TestStrongConvexityByHand(t *testing.T) {
	net, err := layers.NewNet(tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 2, Hidden: []int{2}, Out: 2})
	if err != nil {
		t.Fatal(err)
	}
	ps := net.Params() // W1 (2×2), b1, W2 (2×2), b2
	setParam(t, ps[0], 1, -1, 2, 0.5)
	setParam(t, ps[1], 0, 0.5)
	setParam(t, ps[2], 1, 2, -2, 0)
	setParam(t, ps[3], 0.3, 0.3)
	ds := &datasets.Dataset{N: 3, D: 2, Shape: []int{2}, X: []float64{1, 1, -1, 2, 0.5, -1}, Y: []int{0, 1, 0}}
	// Hidden activations relu(x·W1 + b1):
	//   x=(1,1):    (1+2, −1+0.5+0.5) = (3, 0)
	//   x=(−1,2):   (−1+4, 1+1+0.5)   = (3, 2.5)
	//   x=(0.5,−1): (0.5−2, −0.5−0.5+0.5) → relu → (0, 0)
	// ‖W2‖_F = √(1+4+4) = 3. Batches of 2: {0,1}: √(9+0+9+6.25) = √24.25; {2}: 0.
	wantMax := math.Sqrt(24.25) / 3
	mu, err := StrongConvexity(context.Background(), m, ds, MuOptions{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(mu-wantMax) > 1e-12 {
		t.Errorf("μ (max) = %v, want %v", mu, wantMax)
	}
	mu, err = StrongConvexity(context.Background(), m, ds, MuOptions{BatchSize: 2, Reduce: MinOverBatches, PerSample: true})
	if err != nil {
		t.Fatal(err)
	}
	if mu != 0 {
		t.Errorf("μ (min, 1/m) = %v, want 0", mu)
	}
	// Full batches only: {0,1} alone; the partial batch {2} is left out.
	mu, err = StrongConvexity(context.Background(), m, ds, MuOptions{BatchSize: 2, Reduce: MinOverFullBatches})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(mu-wantMax) > 1e-12 {
		t.Errorf("μ (min over full batches) = %v, want %v", mu, wantMax)
	}
	// Full batch: √(24.25 + 0)/3.
	if mu, _ = StrongConvexity(context.Background(), m, ds, MuOptions{}); math.Abs(mu-wantMax) > 1e-12 {
		t.Errorf("μ (full batch) = %v, want %v", mu, wantMax)
	}
}

// smallMLP is a tanh MLP's cross-entropy on random data, in float64.
func smallMLP(t *testing.T, seed uint64) (*G.Node, []*G.Node) {
	rng := rand.New(rand.NewPCG(seed, 1))
	net, err := layers.NewNet(tensor.Float64, seed)
	if err != nil {
		t.Fatal(err)
	}
	m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 3, Hidden: []int{4}, Out: 3, Activation: layers.Tanh})
	if err != nil {
		t.Fatal(err)
	}
	x := net.Input("x", 6, 3)
	y := net.Input("y", 6, 3)
	xd := make([]float64, 18)
	yd := make([]float64, 18)
	for i := range xd {
		xd[i] = rng.NormFloat64()
	}
	for i := 0; i < 6; i++ {
		yd[i*3+rng.IntN(3)] = 1
	}
	if err := G.Let(x, tensor.New(tensor.WithShape(6, 3), tensor.WithBacking(xd))); err != nil {
		t.Fatal(err)
	}
	if err := G.Let(y, tensor.New(tensor.WithShape(6, 3), tensor.WithBacking(yd))); err != nil {
		t.Fatal(err)
	}
	logits, err := m.Logits(x, layers.NewPass(layers.Eval))
	if err != nil {
		t.Fatal(err)
	}
	loss, err := graph.CrossEntropy(logits, y)
	if err != nil {
		t.Fatal(err)
	}
	return loss, net.ParamNodes()
}

// fullHessian builds H column by column from Hessian-vector products with basis vectors.
func fullHessian(t *testing.T, c *Curvature) *mat.SymDense {
	n := c.Dim()
	h := mat.NewDense(n, n, nil)
	e := make([]float64, n)
	for j := 0; j < n; j++ {
		e[j] = 1
		col, err := c.HVP(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		e[j] = 0
		for i := 0; i < n; i++ {
			h.Set(i, j, col[i])
		}
	}
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (h.At(i, j)+h.At(j, i))/2)
			if math.Abs(h.At(i, j)-h.At(j, i)) > 1e-10 {
				t.Fatalf("Hessian not symmetric at (%d,%d): %v vs %v", i, j, h.At(i, j), h.At(j, i))
			}
		}
	}
	return s
}

func TestCurvatureAgainstTheFullHessian(t *testing.T) {
	loss, params := smallMLP(t, 3)
	c, err := NewCurvature(loss, params)
	if err != nil {
		t.Fatal(err)
	}
	h := fullHessian(t, c)
	n := c.Dim()
	frob, trace := 0.0, 0.0
	for i := 0; i < n; i++ {
		trace += h.At(i, i)
		for j := 0; j < n; j++ {
			frob += h.At(i, j) * h.At(i, j)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(h, false) {
		t.Fatal("eigendecomposition failed")
	}
	top := 0.0
	for _, v := range eig.Values(nil) {
		if math.Abs(v) > math.Abs(top) {
			top = v
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	fe, err := c.FrobeniusSq(context.Background(), rng, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fe.Mean-frob)/frob > 0.05 {
		t.Errorf("Hutchinson ‖H‖_F² = %v ± %v, exact %v", fe.Mean, fe.StdErr, frob)
	}
	te, err := c.Trace(context.Background(), rng, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(te.Mean-trace) > 4*te.StdErr {
		t.Errorf("Hutchinson tr H = %v ± %v, exact %v", te.Mean, te.StdErr, trace)
	}
	lambda, _, err := c.TopEigenvalue(context.Background(), rng, 5000, 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(lambda-top)/math.Abs(top) > 1e-6 {
		t.Errorf("power iteration %v, gonum eigenvalue of largest magnitude %v", lambda, top)
	}
	t.Logf("n=%d ‖H‖_F² exact %.6g Hutchinson %.6g±%.2g; tr %.6g vs %.6g; λmax %.10g vs %.10g", n, frob, fe.Mean, fe.StdErr, trace, te.Mean, top, lambda)
}

func TestSharpnessGrowsWithTheBox(t *testing.T) {
	loss, params := smallMLP(t, 4)
	c, err := NewCurvature(loss, params)
	if err != nil {
		t.Fatal(err)
	}
	before, _, err := c.LossGrad(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	small, err := c.Sharpness(context.Background(), 1e-3, 10)
	if err != nil {
		t.Fatal(err)
	}
	large, err := c.Sharpness(context.Background(), 1e-1, 10)
	if err != nil {
		t.Fatal(err)
	}
	after, _, err := c.LossGrad(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !(small > 0 && large > small) || before != after {
		t.Errorf("sharpness ε=1e-3: %v, ε=1e-1: %v; loss before %v after %v", small, large, before, after)
	}
}

// TestPartialProductsMatchFullOnes: the products after the first of an estimate recompute only
// what depends on the direction; they must give the bits of full products, and a public
// estimate after the parameters changed must see the new parameters. (Each Curvature has a
// graph of its own: a second Curvature of the same loss node makes the first one's Hessian
// asymmetric, at the base commit too; see the report of issue 55.)
func TestPartialProductsMatchFullOnes(t *testing.T) {
	ctx := context.Background()
	curvature := func(scale float64) *Curvature {
		loss, params := smallMLP(t, 5)
		for _, p := range params {
			d := p.Value().(*tensor.Dense)
			x := d.Data().([]float64)
			for i := range x {
				x[i] *= scale
			}
		}
		c, err := NewCurvature(loss, params)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	warm, cold := curvature(1), curvature(1)
	rng := rand.New(rand.NewPCG(3, 3))
	dst := make([]float64, warm.Dim())
	v := make([]float64, warm.Dim())
	for k := range 4 {
		rademacher(rng, v)
		got, err := warm.hvpInto(ctx, dst, v, k > 0)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cold.HVP(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("product %d: partial %v, full %v", k, got[:3], want[:3])
		}
	}
	estimates := func(c *Curvature, warm bool) [3]float64 {
		rng := rand.New(rand.NewPCG(4, 4))
		tr, err := c.Trace(ctx, rng, 5)
		if err != nil {
			t.Fatal(err)
		}
		lambda, _, err := c.topEigenvalue(ctx, rng, 20, 1e-9, warm)
		if err != nil {
			t.Fatal(err)
		}
		return [3]float64{tr.Mean, tr.StdErr, lambda}
	}
	before := estimates(warm, true)
	if want := estimates(cold, false); before != want {
		t.Fatalf("trace and top eigenvalue from partial products %v, from full ones %v", before, want)
	}
	// New parameters: the public estimates must not keep the old forward pass.
	for _, p := range warm.params {
		x := p.Value().(*tensor.Dense).Data().([]float64)
		for i := range x {
			x[i] *= 1.5
		}
	}
	after := estimates(warm, false)
	if want := estimates(curvature(1.5), false); after != want || after == before {
		t.Errorf("after new parameters: %v, a fresh Curvature's %v (before %v)", after, want, before)
	}
}
