package convexity

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
)

// TestTwoCurvaturesOnOneLoss builds two Curvatures on the same loss node, uses them in turn,
// and checks each one's Hessian (column j is H·e_j) entry by entry against a Curvature on a
// fresh graph of the same model, against central differences of the gradient, and for
// symmetry. gorgonia merges input nodes of equal name, type and shape, so the second
// Curvature's direction nodes used to be the first one's, bound to the first one's buffers:
// every product of the second was taken in the first one's last direction.
func TestTwoCurvaturesOnOneLoss(t *testing.T) {
	ctx := context.Background()
	loss, params := smallMLP(t, 3)
	a, err := NewCurvature(loss, params)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewCurvature(loss, params)
	if err != nil {
		t.Fatal(err)
	}
	freshLoss, freshParams := smallMLP(t, 3)
	exact, err := NewCurvature(freshLoss, freshParams)
	if err != nil {
		t.Fatal(err)
	}
	n := exact.Dim()
	if a.Dim() != n || b.Dim() != n || n < 24 {
		t.Fatalf("dimensions %d, %d, %d; want equal and a few dozen", a.Dim(), b.Dim(), n)
	}
	// Each Hessian whole, one Curvature after the other: a product of the second follows the
	// first's last one.
	hessian := func(c *Curvature) [][]float64 {
		h := make([][]float64, n)
		e := make([]float64, n)
		for j := range h {
			e[j] = 1
			if h[j], err = c.HVP(ctx, e); err != nil {
				t.Fatal(err)
			}
			e[j] = 0
		}
		return h
	}
	hx, ha, hb := hessian(exact), hessian(a), hessian(b)
	fd := gradientDifferences(t, a, 1e-5)
	for name, h := range map[string][][]float64{"first": ha, "second": hb} {
		worstExact, worstFD, worstAsym := 0.0, 0.0, 0.0
		for j := 0; j < n; j++ {
			for i := 0; i < n; i++ {
				worstExact = math.Max(worstExact, math.Abs(h[j][i]-hx[j][i]))
				worstFD = math.Max(worstFD, math.Abs(h[j][i]-fd[j][i]))
				worstAsym = math.Max(worstAsym, math.Abs(h[j][i]-h[i][j]))
			}
		}
		// The same arithmetic as on the fresh graph: equal to rounding.
		if worstExact > 1e-12 {
			t.Errorf("%s Curvature's Hessian differs from a fresh graph's by up to %.3g", name, worstExact)
		}
		if worstFD > 1e-6 {
			t.Errorf("%s Curvature's Hessian differs from central differences of the gradient by up to %.3g", name, worstFD)
		}
		if worstAsym > 1e-12 {
			t.Errorf("%s Curvature's Hessian is asymmetric by up to %.3g", name, worstAsym)
		}
	}
	// The estimators' partial products (graph.Program.RunChanged), in turn on both: the same
	// draws give the fresh graph's estimates.
	for _, c := range []*Curvature{a, b} {
		got, err := c.Trace(ctx, rand.New(rand.NewPCG(5, 5)), 8)
		if err != nil {
			t.Fatal(err)
		}
		want, err := exact.Trace(ctx, rand.New(rand.NewPCG(5, 5)), 8)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Mean-want.Mean) > 1e-12*math.Max(1, math.Abs(want.Mean)) {
			t.Errorf("Hutchinson trace %v on a shared loss, %v on a fresh graph", got.Mean, want.Mean)
		}
	}
	// A direction node of each Curvature, bound to its own buffer.
	for i := range a.dirs {
		if a.dirs[i] == b.dirs[i] {
			t.Errorf("direction %d: both Curvatures share the node %s", i, a.dirs[i].Name())
		}
	}
}

// gradientDifferences is the Hessian of c's loss by central differences of its gradient,
// column j from the j-th parameter entry moved by ±step; the parameters are restored.
func gradientDifferences(t *testing.T, c *Curvature, step float64) [][]float64 {
	t.Helper()
	ctx := context.Background()
	var theta []float64
	for _, v := range c.vals {
		f, err := graph.ToFloat64s(v)
		if err != nil {
			t.Fatal(err)
		}
		theta = append(theta, f...)
	}
	defer func() {
		if err := graph.SetFlat(c.vals, theta); err != nil {
			t.Fatal(err)
		}
	}()
	at := make([]float64, len(theta))
	grad := func(j int, d float64) []float64 {
		copy(at, theta)
		at[j] += d
		if err := graph.SetFlat(c.vals, at); err != nil {
			t.Fatal(err)
		}
		_, g, err := c.LossGrad(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	h := make([][]float64, len(theta))
	for j := range theta {
		gp, gm := grad(j, step), grad(j, -step)
		h[j] = make([]float64, len(theta))
		for i := range gp {
			h[j][i] = (gp[i] - gm[i]) / (2 * step)
		}
	}
	return h
}
