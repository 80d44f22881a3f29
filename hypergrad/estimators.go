package hypergrad

import (
	"context"
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/graph"
	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Estimate is a validation objective's value and its hypergradient, one []float64 per
// hyperparameter tensor.
type Estimate struct {
	Value float64
	Grad  [][]float64
}

// Estimator computes the hypergradient at the parameters' current values.
type Estimator interface {
	Estimate(ctx context.Context) (Estimate, error)
}

// Unrolled differentiates the validation objective through K steps of gradient descent
// θ_{k+1} = θ_k − LR·∇_θ L_T(θ_k, λ) from the current θ_0 (truncated backpropagation). K = 0
// keeps only the direct dependence of C on λ; K = 1 is T1–T2.
type Unrolled struct {
	prog  *graph.Program
	value *G.Node
	grads []*G.Node
}

// MaxUnrolled is the most steps NewUnrolled unrolls. Each step differentiates the graph built
// so far, so building K steps takes time quadratic in K: for a three-parameter ridge
// regression, 250 steps take 0.8 s, 500 steps 4.2 s and 1,000 steps 16 s (AMD EPYC Zen 5, one
// core), so 12,000 would take about 40 minutes. A longer horizon is an implicit
// hypergradient's job (NewImplicit), or a truncation's.
const MaxUnrolled = 1000

// NewUnrolled builds the K-step estimator for p, unrolling steps of size lr (positive and
// finite when K > 0), with K at most MaxUnrolled.
func NewUnrolled(p *Problem, k int, lr float64) (*Unrolled, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if k < 0 || k > MaxUnrolled {
		return nil, fmt.Errorf("hypergrad: unrolling %d steps; want 0 to %d (hypergrad.MaxUnrolled: the graph of K steps takes time quadratic in K to build)", k, MaxUnrolled)
	}
	if k > 0 && (!(lr > 0) || math.IsInf(lr, 0)) {
		return nil, fmt.Errorf("hypergrad: unrolled step size %v; want a positive finite step", lr)
	}
	theta := p.Params
	for step := 0; step < k; step++ {
		next, err := descend(p, theta, step, lr)
		if err != nil {
			return nil, err
		}
		theta = next
	}
	c, err := p.Val(theta)
	if err != nil {
		return nil, err
	}
	if k > 0 {
		if err := checkAtTheta(p, c, theta, "Val"); err != nil {
			return nil, err
		}
		// With K = 0 only C's direct dependence on λ counts, which may rightly be none.
		if err := checkDependsOnHypers(p, fmt.Sprintf("the validation objective after %d inner step(s)", k), c); err != nil {
			return nil, err
		}
	}
	grads, err := graph.Grad(c, p.Hypers...)
	if err != nil {
		return nil, err
	}
	prog, err := graph.Compile(append([]*G.Node{c}, grads...)...)
	if err != nil {
		return nil, err
	}
	return &Unrolled{prog: prog, value: c, grads: grads}, nil
}

// NewT1T2 is the one-step estimator of Luketina et al. (2016), NewUnrolled(p, 1, lr): the
// exact gradient of λ ↦ C(θ − lr·∇_θ L_T(θ, λ), λ) at the current θ.
func NewT1T2(p *Problem, lr float64) (*Unrolled, error) { return NewUnrolled(p, 1, lr) }

// NewT1T2AtCurrent is the T1–T2 hypergradient as weight_decay.py in the authors' code
// (DEShawResearch/PACBayesHyperOpt) computes it, `wd.grad += -lr * p * p.grad` after
// valid_loss.backward() — its comment's "identity approximation to the Hessian" of Lorraine
// et al. (2019): ∂_λC(θ) − lr·(∂²L_T/∂λ∂θ)ᵀ ∇_θC(θ), every factor at the current θ. NewT1T2
// instead differentiates C at the look-ahead θ' = θ − lr·∇_θL_T(θ, λ), so it reads ∇_θC(θ').
// The two agree to first order in lr and exactly where ∇_θL_T(θ, λ) = 0; for a C quadratic in
// θ and free of λ they differ by exactly lr²·(∂²L_T/∂λ∂θ)ᵀ ∇²_θC ∇_θL_T. For per-entry weight
// decay, ½Σλθ² in L_T, this estimate is −lr·θ⊙∇_θC(θ). Its Value is C(θ).
func NewT1T2AtCurrent(p *Problem, lr float64) (*Implicit, error) {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return nil, fmt.Errorf("hypergrad: T1–T2 step %v must be positive", lr)
	}
	im, err := NewImplicit(p, Identity, 0)
	if err != nil {
		return nil, err
	}
	im.Alpha = lr
	return im, nil
}

// descend is one symbolic gradient-descent step.
func descend(p *Problem, theta []*G.Node, step int, lr float64) ([]*G.Node, error) {
	l, err := p.Train(theta, step)
	if err != nil {
		return nil, err
	}
	if err := checkAtTheta(p, l, theta, fmt.Sprintf("Train (inner step %d)", step)); err != nil {
		return nil, err
	}
	g, err := graph.Grad(l, theta...)
	if err != nil {
		return nil, err
	}
	next := make([]*G.Node, len(theta))
	for i := range theta {
		s, err := graph.Scale(g[i], lr)
		if err != nil {
			return nil, err
		}
		if next[i], err = graph.Sub(theta[i], s); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// Estimate runs the unrolled graph.
func (u *Unrolled) Estimate(ctx context.Context) (Estimate, error) {
	if u == nil || u.prog == nil {
		return Estimate{}, fmt.Errorf("hypergrad: an Unrolled not made by NewUnrolled")
	}
	return run(ctx, u.prog, u.value, u.grads)
}

func run(ctx context.Context, prog *graph.Program, value *G.Node, grads []*G.Node) (Estimate, error) {
	if err := prog.Run(ctx); err != nil {
		return Estimate{}, err
	}
	var e Estimate
	var err error
	if e.Value, err = prog.Scalar(value); err != nil {
		return Estimate{}, err
	}
	e.Grad = make([][]float64, len(grads))
	for i, g := range grads {
		if e.Grad[i], err = prog.Float64s(g); err != nil {
			return Estimate{}, err
		}
	}
	return e, nil
}

// InverseMethod chooses how Implicit applies H⁻¹.
type InverseMethod int

const (
	// CG solves H w = v by conjugate gradients (H must be positive definite).
	CG InverseMethod = iota
	// Neumann approximates H⁻¹ v ≈ α Σ_{j=0}^{J} (I − αH)^j v (Lorraine et al. 2019).
	Neumann
	// Identity approximates H⁻¹ v ≈ α v, the Neumann series cut to its first term: at α = η,
	// the T1–T2 hypergradient linearized at the current θ (see NewT1T2AtCurrent). No
	// Hessian-vector product is built.
	Identity
)

// Implicit is the implicit-function-theorem hypergradient at a stationary point of the
// training objective: ∂_λ C − (∂²L_T/∂λ∂θ)ᵀ H⁻¹ ∇_θ C.
type Implicit struct {
	Method InverseMethod
	Iters  int     // CG iterations or Neumann terms (default 50)
	Alpha  float64 // Neumann step α (below 2/‖H‖; default 0.01), or Identity's scale
	Tol    float64 // CG stops when ‖r‖ ≤ Tol·‖v‖ (default 1e-10)

	valProg   *graph.Program
	value     *G.Node
	direct    []*G.Node
	gradC     []*G.Node
	hvpProg   *graph.Program
	hvpIn     []*tensor.Dense
	hvpOut    []*G.Node
	mixedProg *graph.Program
	mixedIn   []*tensor.Dense
	mixedOut  []*G.Node
}

// NewImplicit builds the programs the implicit estimator runs.
func NewImplicit(p *Problem, method InverseMethod, iters int) (*Implicit, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if method != CG && method != Neumann && method != Identity {
		return nil, fmt.Errorf("hypergrad: unknown inverse method %d", method)
	}
	im := &Implicit{Method: method, Iters: iters, Alpha: 0.01, Tol: 1e-10}
	if im.Iters <= 0 {
		im.Iters = 50
	}
	c, err := p.Val(p.Params)
	if err != nil {
		return nil, err
	}
	all, err := graph.Grad(c, append(append([]*G.Node{}, p.Hypers...), p.Params...)...)
	if err != nil {
		return nil, err
	}
	im.value, im.direct, im.gradC = c, all[:len(p.Hypers)], all[len(p.Hypers):]
	if im.valProg, err = graph.Compile(append([]*G.Node{c}, all...)...); err != nil {
		return nil, err
	}
	l, err := p.Train(p.Params, 0)
	if err != nil {
		return nil, err
	}
	if err := checkDependsOnHypers(p, "the training and validation objectives", c, l); err != nil {
		return nil, err
	}
	if method != Identity {
		vs, vals, err := inputsLike(p.Params, "implicit.v")
		if err != nil {
			return nil, err
		}
		im.hvpIn = vals
		if im.hvpOut, err = graph.HVP(l, p.Params, vs); err != nil {
			return nil, err
		}
		if im.hvpProg, err = graph.Compile(im.hvpOut...); err != nil {
			return nil, err
		}
	}
	ws, wvals, err := inputsLike(p.Params, "implicit.w")
	if err != nil {
		return nil, err
	}
	im.mixedIn = wvals
	if im.mixedOut, err = graph.MixedVJP(l, p.Params, ws, p.Hypers); err != nil {
		return nil, err
	}
	if im.mixedProg, err = graph.Compile(im.mixedOut...); err != nil {
		return nil, err
	}
	return im, nil
}

// inputsLike adds input nodes shaped and typed like nodes, bound to zero tensors. They are
// graph.NewInput's, new ones: gorgonia merges input nodes of equal name, type and shape, so
// two estimators on one graph would otherwise share (and overwrite) their inputs.
func inputsLike(nodes []*G.Node, prefix string) ([]*G.Node, []*tensor.Dense, error) {
	out := make([]*G.Node, len(nodes))
	vals := make([]*tensor.Dense, len(nodes))
	for i, n := range nodes {
		vals[i] = tensor.New(tensor.Of(n.Dtype()), tensor.WithShape(n.Shape()...))
		var err error
		if out[i], err = graph.NewInput(n.Graph(), fmt.Sprintf("%s%d.%s", prefix, i, n.Name()), vals[i]); err != nil {
			return nil, nil, err
		}
	}
	return out, vals, nil
}

func (im *Implicit) hvp(ctx context.Context, v []float64) ([]float64, error) {
	if im.hvpProg == nil {
		return nil, fmt.Errorf("hypergrad: an Implicit built with the Identity method has no Hessian-vector product")
	}
	if err := graph.SetFlat(im.hvpIn, v); err != nil {
		return nil, err
	}
	if err := im.hvpProg.Run(ctx); err != nil {
		return nil, err
	}
	return im.hvpProg.Flatten(im.hvpOut...)
}

func dot(a, b []float64) float64 { return floats.Dot(a, b) }

// solve approximates H⁻¹ v.
func (im *Implicit) solve(ctx context.Context, v []float64) ([]float64, error) {
	n := len(v)
	switch im.Method {
	case Identity:
		out := make([]float64, n)
		for i, x := range v {
			out[i] = im.Alpha * x
		}
		return out, nil
	case Neumann:
		// p accumulates Σ_j (I − αH)^j v; cur is the j-th term.
		cur := append([]float64(nil), v...)
		acc := append([]float64(nil), v...)
		for j := 0; j < im.Iters; j++ {
			hv, err := im.hvp(ctx, cur)
			if err != nil {
				return nil, err
			}
			for i := range cur {
				cur[i] -= im.Alpha * hv[i]
				acc[i] += cur[i]
			}
		}
		for i := range acc {
			acc[i] *= im.Alpha
		}
		return acc, nil
	default:
		x := make([]float64, n)
		r := append([]float64(nil), v...)
		d := append([]float64(nil), v...)
		rr := dot(r, r)
		stop := im.Tol * im.Tol * rr
		for it := 0; it < im.Iters && rr > stop; it++ {
			hd, err := im.hvp(ctx, d)
			if err != nil {
				return nil, err
			}
			dHd := dot(d, hd)
			if dHd <= 0 {
				return nil, fmt.Errorf("hypergrad: the training Hessian is not positive definite (dᵀHd = %g); use Neumann or a stationary θ", dHd)
			}
			alpha := rr / dHd
			for i := range x {
				x[i] += alpha * d[i]
				r[i] -= alpha * hd[i]
			}
			next := dot(r, r)
			for i := range d {
				d[i] = r[i] + next/rr*d[i]
			}
			rr = next
		}
		return x, nil
	}
}

// Estimate computes the implicit hypergradient at the current θ.
func (im *Implicit) Estimate(ctx context.Context) (Estimate, error) {
	if im == nil || im.valProg == nil {
		return Estimate{}, fmt.Errorf("hypergrad: an Implicit not made by NewImplicit")
	}
	if math.IsNaN(im.Alpha) || math.IsInf(im.Alpha, 0) || !(im.Tol >= 0) || math.IsInf(im.Tol, 0) {
		return Estimate{}, fmt.Errorf("hypergrad: Implicit with Alpha %v and Tol %v; want finite settings", im.Alpha, im.Tol)
	}
	base, err := run(ctx, im.valProg, im.value, append(append([]*G.Node{}, im.direct...), im.gradC...))
	if err != nil {
		return Estimate{}, err
	}
	nh := len(im.direct)
	var v []float64
	for _, g := range base.Grad[nh:] {
		v = append(v, g...)
	}
	w, err := im.solve(ctx, v)
	if err != nil {
		return Estimate{}, err
	}
	for _, x := range w {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Estimate{}, fmt.Errorf("hypergrad: the inverse Hessian-vector product diverged")
		}
	}
	if err := graph.SetFlat(im.mixedIn, w); err != nil {
		return Estimate{}, err
	}
	if err := im.mixedProg.Run(ctx); err != nil {
		return Estimate{}, err
	}
	out := Estimate{Value: base.Value, Grad: base.Grad[:nh]}
	for i, m := range im.mixedOut {
		mv, err := im.mixedProg.Float64s(m)
		if err != nil {
			return Estimate{}, err
		}
		for j := range out.Grad[i] {
			out.Grad[i][j] -= mv[j]
		}
	}
	return out, nil
}
