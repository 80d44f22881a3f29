package convexity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hyperflat/hyperflat/graph"
	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Curvature evaluates a scalar loss, its gradient and Hessian-vector products with respect to
// parameter input nodes, at the values currently bound to them.
type Curvature struct {
	loss   *G.Node
	params []*G.Node
	vals   []*tensor.Dense
	dirIn  []*tensor.Dense
	dirs   []*G.Node
	hvp    []*G.Node
	grads  []*G.Node
	hvProg *graph.Program
	lgProg *graph.Program // hvProg itself when shared
	lgOut  []*G.Node      // the loss and grads, what a shared lgProg runs for
	n      int
	pool   *graph.Pool // where the buffers come from and go back to (release); nil: none
}

// NewCurvature compiles the programs for loss's curvature in params.
func NewCurvature(loss *G.Node, params []*G.Node) (*Curvature, error) {
	return newCurvature(loss, params, false, nil)
}

// newCurvature is NewCurvature; with shared, one program computes the products and, by
// graph.Program.RunFor, the loss and its gradient alone, instead of a second program with a
// second forward pass and its buffers: the white-box record's gradients along training
// then leave the products' forward and backward buffers allocated for its curvature. With
// pool set, the directions, the programs' buffers and the estimates' vectors come from pool,
// and release gives them back.
func newCurvature(loss *G.Node, params []*G.Node, shared bool, pool *graph.Pool) (*Curvature, error) {
	if loss == nil || len(params) == 0 {
		return nil, fmt.Errorf("convexity: curvature of a nil loss or of no parameters")
	}
	c := &Curvature{loss: loss, params: params, pool: pool}
	dirs := make([]*G.Node, len(params))
	for i, p := range params {
		if p == nil {
			return nil, fmt.Errorf("convexity: parameter %d is a nil node", i)
		}
		if p.Graph() != loss.Graph() {
			return nil, fmt.Errorf("convexity: parameter %s is a node of another graph than the loss", p.Name())
		}
		v, ok := p.Value().(*tensor.Dense)
		if p.Op() != nil || !ok {
			return nil, fmt.Errorf("convexity: parameter %s must be an input node bound to a tensor", p.Name())
		}
		c.vals = append(c.vals, v)
		s := p.Shape()
		d := pool.Dense(p.Dtype(), s...)
		c.dirIn = append(c.dirIn, d)
		// A node of its own for every Curvature: gorgonia.NewTensor would return the direction
		// node of an earlier Curvature on this graph, bound to that one's buffer.
		var err error
		if dirs[i], err = graph.NewInput(p.Graph(), fmt.Sprintf("curvature.v%d.%s", i, p.Name()), d); err != nil {
			return nil, err
		}
		c.n += s.TotalSize()
	}
	c.dirs = dirs
	var err error
	if c.hvp, err = graph.HVP(loss, params, dirs); err != nil {
		return nil, err
	}
	if c.grads, err = graph.Grad(loss, params...); err != nil {
		return nil, err
	}
	c.lgOut = append([]*G.Node{loss}, c.grads...)
	if shared {
		if c.hvProg, err = graph.Compile(append(slices.Clone(c.hvp), c.lgOut...)...); err != nil {
			return nil, err
		}
		c.lgProg = c.hvProg
		c.hvProg.UsePool(pool)
		return c, nil
	}
	if c.hvProg, err = graph.Compile(c.hvp...); err != nil {
		return nil, err
	}
	if c.lgProg, err = graph.Compile(c.lgOut...); err != nil {
		return nil, err
	}
	c.hvProg.UsePool(pool)
	c.lgProg.UsePool(pool)
	return c, nil
}

// release gives c's buffers back to its pool; c is unusable after.
func (c *Curvature) release() {
	if c.lgProg != c.hvProg {
		c.lgProg.Release()
	}
	c.hvProg.Release()
	for _, d := range c.dirIn {
		c.pool.Put(d)
	}
	c.dirIn = nil
}

// runLossGrad computes the loss and its gradient at the current parameters into lgProg.
func (c *Curvature) runLossGrad(ctx context.Context) error {
	if c.lgProg == c.hvProg {
		return c.lgProg.RunFor(ctx, c.lgOut...)
	}
	return c.lgProg.Run(ctx)
}

// errNilCurvature is what a Curvature's methods return when it was not made by NewCurvature.
var errNilCurvature = errors.New("convexity: a nil Curvature, or one not made by NewCurvature")

// Dim is the number of parameters (0 for a nil Curvature).
func (c *Curvature) Dim() int {
	if c == nil {
		return 0
	}
	return c.n
}

// HVP returns H·v for a flat direction v.
func (c *Curvature) HVP(ctx context.Context, v []float64) ([]float64, error) {
	if c == nil || c.hvProg == nil {
		return nil, errNilCurvature
	}
	return c.hvpInto(ctx, make([]float64, c.n), v, false)
}

// hvpInto writes H·v into dst. With same, the parameters and the data are those of the
// previous product, so that only the nodes that depend on the direction are computed again
// (graph.Program.RunChanged): the loss's forward pass and gradient, about a third of a
// product's arithmetic, are done once per estimate instead of once per direction.
func (c *Curvature) hvpInto(ctx context.Context, dst, v []float64, same bool) ([]float64, error) {
	if len(v) != c.n {
		return nil, fmt.Errorf("convexity: direction of length %d for %d parameters", len(v), c.n)
	}
	if err := graph.SetFlat(c.dirIn, v); err != nil {
		return nil, err
	}
	run := c.hvProg.Run
	if same {
		run = func(ctx context.Context) error { return c.hvProg.RunChanged(ctx, c.dirs...) }
	}
	if err := run(ctx); err != nil {
		return nil, err
	}
	return flattenInto(dst, c.hvProg, c.hvp)
}

// flattenInto is graph.Program.Flatten into dst (of the nodes' total size), without the
// copies.
func flattenInto(dst []float64, p *graph.Program, nodes []*G.Node) ([]float64, error) {
	off := 0
	for _, n := range nodes {
		v, err := p.Value(n)
		if err != nil {
			return nil, err
		}
		size := v.Shape().TotalSize()
		if off+size > len(dst) {
			return nil, fmt.Errorf("convexity: values of more than %d entries", len(dst))
		}
		switch v.Dtype() {
		case tensor.Float64:
			e, err := graph.Elements[float64](v)
			if err != nil {
				return nil, err
			}
			copy(dst[off:off+size], e)
		case tensor.Float32:
			e, err := graph.Elements[float32](v)
			if err != nil {
				return nil, err
			}
			for i, x := range e {
				dst[off+i] = float64(x)
			}
		default:
			return nil, fmt.Errorf("convexity: node %s of dtype %v", n.Name(), v.Dtype())
		}
		off += size
	}
	if off != len(dst) {
		return nil, fmt.Errorf("convexity: values of %d entries for %d", off, len(dst))
	}
	return dst, nil
}

// LossGrad returns the loss and its flat gradient at the current parameters.
func (c *Curvature) LossGrad(ctx context.Context) (float64, []float64, error) {
	if c == nil || c.lgProg == nil {
		return 0, nil, errNilCurvature
	}
	if err := c.runLossGrad(ctx); err != nil {
		return 0, nil, err
	}
	l, err := c.lgProg.Scalar(c.loss)
	if err != nil {
		return 0, nil, err
	}
	g, err := c.lgProg.Flatten(c.grads...)
	return l, g, err
}

func dot(a, b []float64) float64 { return floats.Dot(a, b) }

// rademacher fills v with independent ±1 entries.
func rademacher(rng *rand.Rand, v []float64) {
	for i := range v {
		v[i] = float64(2*rng.IntN(2) - 1)
	}
}

// Estimate is a Monte-Carlo mean with its standard error.
type Estimate struct {
	Mean, StdErr float64
	Samples      int
}

// hutchinson is the estimate of E f(v, Hv); with warm, the parameters and the data are those
// of the last product (hvpInto), so that its first product is a partial one too.
func (c *Curvature) hutchinson(ctx context.Context, rng *rand.Rand, samples int, warm bool, f func(v, hv []float64) float64) (Estimate, error) {
	if c == nil || rng == nil {
		return Estimate{}, fmt.Errorf("convexity: Hutchinson estimate needs a Curvature and a random source (got a nil one)")
	}
	if samples < 2 {
		return Estimate{}, fmt.Errorf("convexity: Hutchinson estimate from %d samples", samples)
	}
	if c.hvProg == nil {
		return Estimate{}, errNilCurvature
	}
	var sum, sumSq float64
	v, hv := make([]float64, c.n), make([]float64, c.n)
	for s := 0; s < samples; s++ {
		rademacher(rng, v)
		hv, err := c.hvpInto(ctx, hv, v, warm || s > 0)
		if err != nil {
			return Estimate{}, err
		}
		x := f(v, hv)
		sum += x
		sumSq += x * x
	}
	return estimateFrom(sum, sumSq, samples), nil
}

// estimateFrom is the Estimate of samples draws whose sum and sum of squares are given: their
// mean and its standard error (the unbiased variance over samples).
func estimateFrom(sum, sumSq float64, samples int) Estimate {
	n := float64(samples)
	mean := sum / n
	variance := math.Max(sumSq/n-mean*mean, 0) * n / (n - 1)
	return Estimate{Mean: mean, StdErr: math.Sqrt(variance / n), Samples: samples}
}

// FrobeniusSq estimates ‖H‖_F² = E‖Hv‖² over Rademacher vectors v (Hutchinson).
func (c *Curvature) FrobeniusSq(ctx context.Context, rng *rand.Rand, samples int) (Estimate, error) {
	return c.hutchinson(ctx, rng, samples, false, func(_, hv []float64) float64 { return dot(hv, hv) })
}

// Trace estimates tr H = E vᵀHv over Rademacher vectors v (Hutchinson).
func (c *Curvature) Trace(ctx context.Context, rng *rand.Rand, samples int) (Estimate, error) {
	return c.hutchinson(ctx, rng, samples, false, func(v, hv []float64) float64 { return dot(v, hv) })
}

// TopEigenvalue returns the eigenvalue of H of largest magnitude and its unit eigenvector, by
// power iteration from a random start until the Rayleigh quotient changes by less than tol
// (relative) or iters iterations.
func (c *Curvature) TopEigenvalue(ctx context.Context, rng *rand.Rand, iters int, tol float64) (float64, []float64, error) {
	return c.topEigenvalue(ctx, rng, iters, tol, false)
}

// topEigenvalue is TopEigenvalue; with warm, the parameters and the data are those of the last
// product (hvpInto).
func (c *Curvature) topEigenvalue(ctx context.Context, rng *rand.Rand, iters int, tol float64, warm bool) (float64, []float64, error) {
	if c == nil || rng == nil {
		return 0, nil, fmt.Errorf("convexity: TopEigenvalue needs a Curvature and a random source (got a nil one)")
	}
	if !(tol >= 0) || math.IsInf(tol, 0) {
		return 0, nil, fmt.Errorf("convexity: TopEigenvalue tolerance %v; want a finite tolerance ≥ 0", tol)
	}
	if c.hvProg == nil {
		return 0, nil, errNilCurvature
	}
	v, hv := make([]float64, c.n), make([]float64, c.n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	normalize(v)
	lambda := 0.0
	for it := 0; it < iters; it++ {
		hv, err := c.hvpInto(ctx, hv, v, warm || it > 0)
		if err != nil {
			return 0, nil, err
		}
		next := dot(v, hv)
		nrm := math.Sqrt(dot(hv, hv))
		if nrm == 0 {
			return 0, v, nil
		}
		for i := range v {
			v[i] = hv[i] / nrm
		}
		if it > 0 && math.Abs(next-lambda) <= tol*math.Abs(next) {
			lambda = next
			break
		}
		lambda = next
	}
	// The Rayleigh quotient of the final vector.
	hv, err := c.hvpInto(ctx, hv, v, warm || iters > 0)
	if err != nil {
		return 0, nil, err
	}
	return dot(v, hv), v, nil
}

func normalize(v []float64) {
	n := math.Sqrt(dot(v, v))
	for i := range v {
		v[i] /= n
	}
}

// Sharpness is Keskar et al.'s (2017) ε-sharpness, 100·(max_{y∈C} L(θ+y) − L(θ))/(1 + L(θ))
// over the box C = {|y_i| ≤ ε(|θ_i| + 1)}, with the maximum approximated by steps of projected
// sign-gradient ascent of size ε/4 (Keskar et al. used L-BFGS-B). The parameters are restored.
func (c *Curvature) Sharpness(ctx context.Context, eps float64, steps int) (float64, error) {
	if c == nil || c.hvProg == nil {
		return 0, errNilCurvature
	}
	if !(eps > 0) || math.IsInf(eps, 0) || steps <= 0 { // NaN too
		return 0, fmt.Errorf("convexity: sharpness with ε = %v and %d steps; want a finite ε > 0 and steps > 0", eps, steps)
	}
	theta := make([]float64, 0, c.n)
	for _, v := range c.vals {
		f, err := graph.ToFloat64s(v)
		if err != nil {
			return 0, err
		}
		theta = append(theta, f...)
	}
	defer func() { _ = graph.SetFlat(c.vals, theta) }() // restore θ; the shapes are those just read
	base, _, err := c.LossGrad(ctx)
	if err != nil {
		return 0, err
	}
	y := make([]float64, c.n)
	cur := make([]float64, c.n)
	best := base
	for s := 0; s < steps; s++ {
		for i := range cur {
			cur[i] = theta[i] + y[i]
		}
		if err := graph.SetFlat(c.vals, cur); err != nil {
			return 0, err
		}
		l, g, err := c.LossGrad(ctx)
		if err != nil {
			return 0, err
		}
		best = math.Max(best, l)
		for i := range y {
			box := eps * (math.Abs(theta[i]) + 1)
			y[i] = math.Max(-box, math.Min(box, y[i]+box/4*sign(g[i])))
		}
	}
	for i := range cur {
		cur[i] = theta[i] + y[i]
	}
	if err := graph.SetFlat(c.vals, cur); err != nil {
		return 0, err
	}
	l, _, err := c.LossGrad(ctx)
	if err != nil {
		return 0, err
	}
	best = math.Max(best, l)
	return 100 * (best - base) / (1 + base), nil
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
