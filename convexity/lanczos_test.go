package convexity

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/search"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestTopRitzByHand(t *testing.T) {
	// [[2 1] [1 2]]: eigenvalues 1 and 3, the latter's eigenvector (1, 1)/√2.
	theta, s, err := topRitz([]float64{2, 2}, []float64{1})
	if err != nil || math.Abs(theta-3) > 1e-15 || math.Abs(math.Abs(s)-math.Sqrt2/2) > 1e-15 {
		t.Errorf("θ %v, last component %v (%v); want 3, ±1/√2", theta, s, err)
	}
	// diag(−5, 1): the largest magnitude is negative, its eigenvector e_1 (last component 0).
	theta, s, err = topRitz([]float64{-5, 1}, []float64{0})
	if err != nil || theta != -5 || s != 0 {
		t.Errorf("θ %v, last component %v (%v); want −5, 0", theta, s, err)
	}
	if theta, s, err = topRitz([]float64{-0.5}, nil); err != nil || theta != -0.5 || math.Abs(s) != 1 {
		t.Errorf("1×1: θ %v, s %v (%v)", theta, s, err)
	}
}

// TestLanczosAgainstTheExactHessian: on the trained tiny MLP (35 parameters), the record's
// curvature at its defaults (4 probes, at most 10 products, tolerance 1e-3) gives the
// Hutchinson estimate of its probes computed by hand, and an eigenvalue within its
// residual of an exact eigenvalue of H (the bound Lanczos stops on) and within the tolerance
// of the one of largest magnitude, in fewer products than the budget; one step is the
// Rayleigh quotient of the first probe, which is not.
func TestLanczosAgainstTheExactHessian(t *testing.T) {
	ctx := context.Background()
	task := tinyTask(nil)
	cfg := search.Config{Space: task.Space, Values: []float64{0.05}}
	opt, err := WhiteboxOptions{}.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	_, _, rec, err := task.fit(ctx, cfg, task.Epochs, true, &opt)
	if err != nil {
		t.Fatal(err)
	}
	c := rec.curv
	var eig mat.EigenSym
	if !eig.Factorize(fullHessian(t, c), false) {
		t.Fatal("eigendecomposition failed")
	}
	exact := eig.Values(nil)
	top := 0.0
	for _, v := range exact {
		if math.Abs(v) > math.Abs(top) {
			top = v
		}
	}
	tr, got, err := c.traceAndTop(ctx, rand.New(rand.NewPCG(9, 9)), DefaultProbes, DefaultPowerIters, DefaultPowerTol)
	if err != nil {
		t.Fatal(err)
	}
	// Hutchinson by hand: the same probes, each product a fresh one.
	rng := rand.New(rand.NewPCG(9, 9))
	var samples []float64
	for range DefaultProbes {
		z := make([]float64, c.Dim())
		rademacherBits(rng, z)
		hz, err := c.HVP(ctx, z)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, dot(z, hz))
	}
	mean, sd := stat.MeanStdDev(samples, nil)
	if math.Abs(tr.Mean-mean) > 1e-12*math.Abs(mean) || math.Abs(tr.StdErr-sd/2) > 1e-9*sd || tr.Samples != DefaultProbes {
		t.Errorf("trace %+v; by hand %v ± %v", tr, mean, sd/2)
	}
	nearest := math.Inf(1)
	for _, v := range exact {
		nearest = math.Min(nearest, math.Abs(got.Value-v))
	}
	// The residual is computed from the recurrence; rounding in its 35-dimensional products
	// is some 1e-15 of ‖H‖ ≈ |λ|.
	if nearest > got.Residual+1e-13*math.Abs(top) {
		t.Errorf("Lanczos θ = %.12g with residual %.3g; the nearest exact eigenvalue is %.3g away", got.Value, got.Residual, nearest)
	}
	if got.Steps >= DefaultPowerIters || math.Abs(got.Value-top) > DefaultPowerTol*math.Abs(got.Value) {
		t.Errorf("Lanczos θ = %.12g after %d products (residual %.3g); exact λ = %.12g", got.Value, got.Steps, got.Residual, top)
	}
	power, _, err := c.TopEigenvalue(ctx, rand.New(rand.NewPCG(9, 10)), DefaultPowerIters, DefaultPowerTol)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("λ exact %.10g; Lanczos %.10g in %d products (residual %.2g); power iteration %.10g in at most %d", top, got.Value, got.Steps, got.Residual, power, DefaultPowerIters+1)

	// One step: the Rayleigh quotient z·Hz/n of the first probe, the trace's first sample
	// over n, and far from λ.
	rng = rand.New(rand.NewPCG(9, 9))
	_, one, err := c.traceAndTop(ctx, rng, 2, 1, DefaultPowerTol)
	if err != nil {
		t.Fatal(err)
	}
	z := make([]float64, c.Dim())
	rademacherBits(rand.New(rand.NewPCG(9, 9)), z)
	hz, err := c.HVP(ctx, z)
	if err != nil {
		t.Fatal(err)
	}
	rq := dot(z, hz) / float64(c.Dim())
	if one.Steps != 1 || math.Abs(one.Value-rq) > 1e-12*math.Abs(rq) || math.Abs(one.Value-top) < 10*DefaultPowerTol*math.Abs(top) {
		t.Errorf("one Lanczos step: θ = %v in %d products; z·Hz/n = %v, λ = %v", one.Value, one.Steps, rq, top)
	}
	if _, _, err := c.traceAndTop(ctx, nil, 4, 10, 1e-3); err == nil {
		t.Error("a nil random source was accepted")
	}
	if _, _, err := c.traceAndTop(ctx, rng, 1, 10, 1e-3); err == nil {
		t.Error("one probe was accepted")
	}
}

// TestSharedCurvatureMatchesTwoPrograms: the record's Curvature, one program for the products
// and the gradient (graph.Program.RunFor), gives the loss, gradient, products and estimates of
// NewCurvature's two programs, bit for bit, in any order of gradients and products, and
// after new parameters.
func TestSharedCurvatureMatchesTwoPrograms(t *testing.T) {
	ctx := context.Background()
	loss, params := smallMLP(t, 6)
	shared, err := newCurvature(loss, params, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	two, err := NewCurvature(loss, params)
	if err != nil {
		t.Fatal(err)
	}
	if shared.lgProg != shared.hvProg || two.lgProg == two.hvProg {
		t.Fatal("the shared Curvature has two programs, or NewCurvature one")
	}
	v := make([]float64, shared.Dim())
	for round := range 2 {
		if round == 1 {
			for _, p := range params {
				x := p.Value().(*tensor.Dense).Data().([]float64)
				for i := range x {
					x[i] *= 0.75
				}
			}
		}
		l1, g1, err1 := shared.LossGrad(ctx)
		l2, g2, err2 := two.LossGrad(ctx)
		if err1 != nil || err2 != nil || l1 != l2 || !slices.Equal(g1, g2) {
			t.Fatalf("round %d: loss %v, %v; gradients %v, %v (%v, %v)", round, l1, l2, g1[:3], g2[:3], err1, err2)
		}
		rademacher(rand.New(rand.NewPCG(2, uint64(round))), v)
		h1, err1 := shared.HVP(ctx, v)
		h2, err2 := two.HVP(ctx, v)
		if err1 != nil || err2 != nil || !slices.Equal(h1, h2) {
			t.Fatalf("round %d: products %v, %v (%v, %v)", round, h1[:3], h2[:3], err1, err2)
		}
		// A gradient between products, as along a training: the next product is a full one.
		if _, _, err := shared.LossGrad(ctx); err != nil {
			t.Fatal(err)
		}
		tr1, e1, err1 := shared.traceAndTop(ctx, rand.New(rand.NewPCG(5, 5)), 3, 8, 1e-6)
		tr2, e2, err2 := two.traceAndTop(ctx, rand.New(rand.NewPCG(5, 5)), 3, 8, 1e-6)
		if err1 != nil || err2 != nil || tr1 != tr2 || e1 != e2 {
			t.Fatalf("round %d: estimates %+v %+v, %+v %+v (%v, %v)", round, tr1, e1, tr2, e2, err1, err2)
		}
	}
}

// TestRademacherBits: ±1 entries, each the next bit of the source's 64-bit draws (lowest
// first: −1 for 0), about as many of each sign, different draws different.
func TestRademacherBits(t *testing.T) {
	v := make([]float64, 100_003) // not a multiple of 64: the last draw is used in part
	rademacherBits(rand.New(rand.NewPCG(1, 2)), v)
	src := rand.New(rand.NewPCG(1, 2))
	var b uint64
	sum := 0.0
	for i, x := range v {
		if i%64 == 0 {
			b = src.Uint64()
		}
		if want := float64(2*int64(b>>(i%64)&1) - 1); x != want {
			t.Fatalf("entry %d = %v; the draw's bit gives %v", i, x, want)
		}
		sum += x
	}
	// A sum of n independent signs has standard deviation √n: 5 of them is a 1-in-3·10⁶ event.
	if math.Abs(sum) > 5*math.Sqrt(float64(len(v))) {
		t.Errorf("the signs sum to %v over %d entries", sum, len(v))
	}
	w := make([]float64, len(v))
	rademacherBits(rand.New(rand.NewPCG(1, 3)), w)
	if slices.Equal(v, w) {
		t.Error("two sources gave the same signs")
	}
}

// TestAddSqDistance: ‖a − b‖² added to a sum, over float32 and float64 node values, each
// difference taken in float64, and errors for nodes that do not pair.
func TestAddSqDistance(t *testing.T) {
	ctx := context.Background()
	prog := func(dt tensor.Dtype, x []float64) (*graph.Program, *G.Node) {
		g := G.NewGraph()
		d := tensor.New(tensor.Of(dt), tensor.WithShape(len(x)))
		if err := graph.SetFlat([]*tensor.Dense{d}, x); err != nil {
			t.Fatal(err)
		}
		in := G.NewVector(g, dt, G.WithShape(len(x)), G.WithName("x"), G.WithValue(d))
		two := G.NewConstant(map[tensor.Dtype]any{tensor.Float32: float32(2), tensor.Float64: 2.0}[dt])
		y, err := G.HadamardProd(in, two)
		if err != nil {
			t.Fatal(err)
		}
		p, err := graph.Compile(y)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
		return p, y
	}
	a, b := []float64{0.1, -2, 3.5}, []float64{1.3, 0.25, -1}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		pa, ya := prog(dt, a)
		pb, yb := prog(dt, b)
		want := 1.5
		for i := range a {
			x, y := 2*a[i], 2*b[i]
			if dt == tensor.Float32 {
				x, y = float64(float32(2)*float32(a[i])), float64(float32(2)*float32(b[i]))
			}
			want += (x - y) * (x - y)
		}
		got, err := addSqDistance(1.5, pa, []*G.Node{ya}, pb, []*G.Node{yb})
		if err != nil || got != want {
			t.Errorf("%v: %v (%v); want %v", dt, got, err, want)
		}
		if _, err := addSqDistance(0, pa, []*G.Node{ya}, pb, nil); err == nil {
			t.Errorf("%v: one node against none accepted", dt)
		}
		pc, yc := prog(dt, a[:2])
		if _, err := addSqDistance(0, pa, []*G.Node{ya}, pc, []*G.Node{yc}); err == nil {
			t.Errorf("%v: shapes 3 and 2 accepted", dt)
		}
	}
}
