package hypergrad

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Chain is one inner run of a bilevel optimization: a problem on a graph of its own whose
// hyperparameter nodes are bound to the shared λ tensors, the optimizer or Langevin sampler that
// moves its θ, and hooks. Chains differ in their initial θ and their randomness; Eq. 6 and the
// (2,ν_t)-Fisher distances average over them.
type Chain struct {
	Problem *Problem
	// InnerLoss is what Inner descends (nil: Problem.Train). With decoupled weight decay it is
	// the training loss without the penalty, and AfterStep applies the decay; Problem.Train
	// keeps the penalty, so that ∇_θ L_T and the Fisher distance include λ⊙θ as in the paper's
	// code.
	InnerLoss func(theta []*G.Node, k int) (*G.Node, error)
	Inner     samplers.Optimizer
	AfterStep func() error
	// Bind rebinds the batch inputs before inner step t (nil: fixed batches).
	Bind func(t int) error
	// Extra lists more nodes to compute with every inner step (batch-norm statistics, say);
	// it is called after InnerLoss has built the graph. AfterRun then sees the program, before
	// the optimizer step.
	Extra    func() []*G.Node
	AfterRun func(p *graph.Program) error

	prog      *graph.Program
	grads     []*G.Node // ∇_θ InnerLoss
	sqA       *G.Node   // ‖a_t‖²
	regGrads  []*G.Node // ∇_λ ½‖a_t‖² at fixed θ_t
	risk      Estimator
	paramVals []*tensor.Dense
	// regBuf holds the λ gradients evaluate reads out, reused from step to step: on a
	// ResNet-18 with a decay per weight they are 94 MB a step, and a fresh copy each step grew
	// the heap between collections and cost page faults on new memory that made the inner
	// step's time depend on where it fell in the collector's cycle (issue 53).
	regBuf [][]float64
}

// Bound is the valid range [Lo, Hi] of the entries of one λ tensor; an infinite end leaves
// that side open. A hyperparameter optimized in log space (λ = exp(ρ), with ρ the tensor)
// takes the logs of its range as its Bound.
type Bound struct{ Lo, Hi float64 }

// Unbounded is the range of a hyperparameter with no constraint.
var Unbounded = Bound{math.Inf(-1), math.Inf(1)}

// NonNegative is the range of a weight-decay coefficient or a penalty weight: λ ≥ 0.
var NonNegative = Bound{0, math.Inf(1)}

// Bilevel is Algorithm 1 of Cherian et al. (2020), Section 3 (run_fit in the authors' code,
// DEShawResearch/PACBayesHyperOpt weight_decay/weight_decay.py), over one or more chains.
//
// Every outer step on λ (the one at the end of each hyper-step, and with Form Sum the online
// ones at each inner step) is guarded:
//
//   - Rejected: a hypergradient with a NaN or infinite entry, or an outer optimizer step that
//     would leave a NaN or infinite λ, is not applied — λ keeps its previous values and
//     HyperStep.Rejected counts the step. The run goes on: the next hyper-step computes a
//     fresh hypergradient at the same λ. (A NaN in the inner training still fails the run,
//     since the inner optimizers refuse non-finite gradients.)
//   - Projected: an update that would move an entry outside its Bounds range is clipped to
//     the range (weight decay that would turn negative becomes 0) and HyperStep.Projected
//     counts the clipped entries; then the Project hook, if any, runs.
type Bilevel struct {
	Chains []*Chain
	// Lambda are the hyperparameter values, bound to every chain's Problem.Hypers.
	Lambda []*tensor.Dense
	// Outer steps λ (RMSprop with lr 1e-2 in the paper).
	Outer                  samplers.Optimizer
	InnerSteps, HyperSteps int
	// RiskLR is the η of the T1–T2 risk hypergradient: the inner step size.
	RiskLR float64
	// T1T2 is where the risk hypergradient reads ∇_θC: at the look-ahead θ − η∇_θL_T
	// (LookAhead, the default: NewT1T2) or at the current θ (AtCurrent, as weight_decay.py:
	// NewT1T2AtCurrent).
	T1T2 T1T2Form
	// Zeta weighs the Fisher-distance regularizer (0: Eq. 1, the plain T1–T2 hyper-descent),
	// in the given Form: SqrtSum offline (gradient ζ Σ_t ∇½‖a_t‖² / √Σ_t‖a_t‖², once per
	// hyper-step) or Sum online, Algorithm C.3 (a λ step on ζ ∇‖a_t‖ at every inner step t,
	// after a_t is computed at θ_t and before the inner step that leaves θ_t, which the new λ
	// then decays: the order of run_fit with online=True in weight_decay.py).
	Zeta float64
	Form Form
	// Monitor computes the Fisher distances (HyperStep.Distance) even when Zeta is 0, so that
	// an Eq. 1 run can be compared with Eq. 7 runs; it costs two more backward passes per step.
	Monitor bool
	// Bounds, if set, holds one valid range per Lambda tensor (NonNegative for weight decay,
	// Unbounded for none); every outer step is projected onto it by clipping. nil leaves λ
	// unconstrained, as the paper does. The initial λ must lie within it.
	Bounds []Bound
	// Project, if set, is applied to λ after every outer step and the Bounds projection (the
	// paper leaves λ unconstrained).
	Project func(lambda []*tensor.Dense) error
	// OnHyperStep sees every hyper-step's record; an error stops the run.
	OnHyperStep func(HyperStep) error
	// Workers runs chains in parallel; results do not depend on it.
	Workers int
}

// T1T2Form chooses the T1–T2 risk hypergradient (Luketina et al. 2016) of Bilevel.
type T1T2Form int

const (
	// LookAhead is the exact gradient of λ ↦ C(θ − η∇_θL_T(θ, λ)) at the current θ: ∇_θC is
	// read one gradient step ahead (NewT1T2).
	LookAhead T1T2Form = iota
	// AtCurrent is its linearization with ∇_θC read at the current θ, −η θ⊙∇_θC(θ) for
	// weight decay: what weight_decay.py computes (NewT1T2AtCurrent).
	AtCurrent
)

func (f T1T2Form) String() string {
	if f == AtCurrent {
		return "authors"
	}
	return "lookahead"
}

// HyperStep records one outer iteration, averaged over chains.
type HyperStep struct {
	Step        int
	ValLoss     float64 // C at the end of the inner run
	Distance    float64 // √(Σ_t ‖a_t‖²), the paper's regularizer value
	Regularizer float64 // ζ times the distance in the chosen form
	HyperNorm   float64 // ‖hypergradient‖ of the outer step (NaN or Inf when it was rejected)
	// Rejected counts the outer steps of this hyper-step that were not applied because the
	// hypergradient, or the λ they would have produced, was not finite; λ kept its values.
	Rejected int
	// Projected counts the λ entries the outer steps of this hyper-step clipped to Bounds.
	Projected int
}

func (b *Bilevel) validate() error {
	if b == nil {
		return fmt.Errorf("hypergrad: a nil *Bilevel")
	}
	if len(b.Chains) == 0 || b.Outer == nil || b.InnerSteps <= 0 || b.HyperSteps <= 0 {
		return fmt.Errorf("hypergrad: Bilevel needs chains, an outer optimizer and positive step counts")
	}
	if !(b.RiskLR > 0) || math.IsInf(b.RiskLR, 0) || !(b.Zeta >= 0) || math.IsInf(b.Zeta, 0) { // NaN too
		return fmt.Errorf("hypergrad: RiskLR %v must be positive and Zeta %v non-negative", b.RiskLR, b.Zeta)
	}
	for i, l := range b.Lambda {
		if l == nil {
			return fmt.Errorf("hypergrad: λ tensor %d is nil", i)
		}
	}
	if b.Bounds != nil {
		if len(b.Bounds) != len(b.Lambda) {
			return fmt.Errorf("hypergrad: %d bounds for %d λ tensors", len(b.Bounds), len(b.Lambda))
		}
		for i, r := range b.Bounds {
			if !(r.Lo <= r.Hi) {
				return fmt.Errorf("hypergrad: bound %d is [%v, %v]", i, r.Lo, r.Hi)
			}
			v, err := graph.ToFloat64s(b.Lambda[i])
			if err != nil {
				return err
			}
			for j, x := range v {
				if !(x >= r.Lo && x <= r.Hi) {
					return fmt.Errorf("hypergrad: initial λ %d has %v at flat index %d, outside [%v, %v]", i, x, j, r.Lo, r.Hi)
				}
			}
		}
	}
	for ci, c := range b.Chains {
		if c == nil || c.Problem == nil || c.Inner == nil {
			return fmt.Errorf("hypergrad: chain %d lacks a problem or an inner optimizer", ci)
		}
		if err := c.Problem.validate(); err != nil {
			return fmt.Errorf("chain %d: %w", ci, err)
		}
		if len(c.Problem.Hypers) != len(b.Lambda) {
			return fmt.Errorf("hypergrad: chain %d has %d hyperparameter nodes for %d λ tensors", ci, len(c.Problem.Hypers), len(b.Lambda))
		}
		for i, h := range c.Problem.Hypers {
			if h.Value() != G.Value(b.Lambda[i]) {
				return fmt.Errorf("hypergrad: chain %d's %s is not bound to the shared λ tensor %d", ci, h.Name(), i)
			}
		}
	}
	return nil
}

// prepare compiles a chain's programs.
func (b *Bilevel) prepare(c *Chain) error {
	p := c.Problem
	inner := c.InnerLoss
	if inner == nil {
		inner = p.Train
	}
	li, err := inner(p.Params, 0)
	if err != nil {
		return err
	}
	if c.grads, err = graph.Grad(li, p.Params...); err != nil {
		return err
	}
	outs := append([]*G.Node{}, c.grads...)
	if c.Extra != nil {
		outs = append(outs, c.Extra()...)
	}
	if b.Zeta > 0 || b.Monitor {
		lt, err := p.Train(p.Params, 0)
		if err != nil {
			return err
		}
		lv, err := p.Val(p.Params)
		if err != nil {
			return err
		}
		gt, err := graph.Grad(lt, p.Params...)
		if err != nil {
			return err
		}
		gv, err := graph.Grad(lv, p.Params...)
		if err != nil {
			return err
		}
		a := make([]*G.Node, len(gt))
		for i := range gt {
			if a[i], err = graph.Sub(gt[i], gv[i]); err != nil {
				return err
			}
		}
		if c.sqA, err = graph.SquaredNorm(a...); err != nil {
			return err
		}
		outs = append(outs, c.sqA)
		if b.Zeta > 0 {
			half, err := graph.Scale(c.sqA, 0.5)
			if err != nil {
				return err
			}
			if c.regGrads, err = graph.Grad(half, p.Hypers...); err != nil {
				return err
			}
			outs = append(outs, c.regGrads...)
		}
	}
	if c.prog, err = graph.Compile(outs...); err != nil {
		return err
	}
	if b.T1T2 == AtCurrent {
		c.risk, err = NewT1T2AtCurrent(p, b.RiskLR)
	} else {
		c.risk, err = NewT1T2(p, b.RiskLR)
	}
	if err != nil {
		return err
	}
	c.paramVals = values(p.Params)
	return nil
}

// stepResult is what one chain's inner step produced: the Fisher terms, and the gradient
// that advance hands its optimizer. reg is the chain's own buffer, valid until its next
// evaluate.
type stepResult struct {
	sq    float64
	reg   [][]float64
	grads []G.Value
}

func (b *Bilevel) innerStep(ctx context.Context, c *Chain, t int) (stepResult, error) {
	r, err := b.evaluate(ctx, c, t)
	if err != nil {
		return r, err
	}
	return r, b.advance(c, r, t)
}

// evaluate runs chain c's program at θ_t: the inner gradient, the Fisher terms and AfterRun.
func (b *Bilevel) evaluate(ctx context.Context, c *Chain, t int) (stepResult, error) {
	var r stepResult
	if c.Bind != nil {
		if err := c.Bind(t); err != nil {
			return r, err
		}
	}
	if err := c.prog.Run(ctx); err != nil {
		return r, err
	}
	grads := make([]G.Value, len(c.grads))
	for i, g := range c.grads {
		v, err := c.prog.Value(g)
		if err != nil {
			return r, err
		}
		grads[i] = v
	}
	if c.sqA != nil {
		var err error
		if r.sq, err = c.prog.Scalar(c.sqA); err != nil {
			return r, err
		}
		if len(c.regBuf) != len(c.regGrads) {
			c.regBuf = make([][]float64, len(c.regGrads))
		}
		for i, g := range c.regGrads {
			v, err := c.prog.Value(g)
			if err != nil {
				return r, err
			}
			if c.regBuf[i], err = float64sInto(c.regBuf[i], v); err != nil {
				return r, err
			}
		}
		r.reg = c.regBuf
	}
	if c.AfterRun != nil {
		if err := c.AfterRun(c.prog); err != nil {
			return r, err
		}
	}
	r.grads = grads
	return r, nil
}

// advance takes chain c's optimizer step on the gradient evaluate computed, then AfterStep.
func (b *Bilevel) advance(c *Chain, r stepResult, t int) error {
	if err := c.Inner.Step(c.paramVals, r.grads); err != nil {
		return fmt.Errorf("inner step %d: %w", t, err)
	}
	if c.AfterStep != nil {
		return c.AfterStep()
	}
	return nil
}

// parallel runs f for every chain on up to Workers goroutines, returning the first error in
// chain order.
func (b *Bilevel) parallel(f func(ci int) error) error {
	workers := max(1, min(b.Workers, len(b.Chains)))
	errs := make([]error, len(b.Chains))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ci := range next {
				errs[ci] = f(ci)
			}
		}()
	}
	for ci := range b.Chains {
		next <- ci
	}
	close(next)
	wg.Wait()
	for ci, err := range errs {
		if err != nil {
			return fmt.Errorf("chain %d: %w", ci, err)
		}
	}
	return nil
}

// InnerStep runs inner step t of every chain as Run does (each chain's program, hooks and
// optimizer step, and the Fisher-distance terms when Zeta > 0 or Monitor), without the
// outer steps: the unit that dominates Run's cost, for timing and profiling it alone. The
// first call validates and compiles; a later Run compiles afresh.
func (b *Bilevel) InnerStep(ctx context.Context, t int) error {
	if b == nil || len(b.Chains) == 0 {
		return b.validate()
	}
	for _, c := range b.Chains {
		if c == nil || c.prog == nil {
			if err := b.validate(); err != nil {
				return err
			}
			for _, c := range b.Chains {
				if err := b.prepare(c); err != nil {
					return err
				}
			}
			break
		}
	}
	return b.parallel(func(ci int) error {
		_, err := b.innerStep(ctx, b.Chains[ci], t)
		return err
	})
}

// Program is chain ci's compiled inner-step program once InnerStep or Run has prepared it
// (nil before), for per-op profiles.
func (b *Bilevel) Program(ci int) *graph.Program {
	if b == nil || ci < 0 || ci >= len(b.Chains) || b.Chains[ci] == nil {
		return nil
	}
	return b.Chains[ci].prog
}

// Run performs HyperSteps outer iterations and returns their records.
func (b *Bilevel) Run(ctx context.Context) ([]HyperStep, error) {
	if err := b.validate(); err != nil {
		return nil, err
	}
	for _, c := range b.Chains {
		if err := b.prepare(c); err != nil {
			return nil, err
		}
	}
	nc := float64(len(b.Chains))
	var history []HyperStep
	reg := Regularizer{Form: b.Form, Zeta: b.Zeta}
	for h := 0; h < b.HyperSteps; h++ {
		reg.Reset()
		var guard HyperStep        // counts rejected and projected outer steps
		acc := zerosLike(b.Lambda) // Σ_t mean_c ∇_λ ½‖a_t‖²
		if err := b.innerRun(ctx, h, &reg, acc, &guard); err != nil {
			return history, err
		}
		risks := make([]Estimate, len(b.Chains))
		if err := b.parallel(func(ci int) (err error) {
			risks[ci], err = b.Chains[ci].risk.Estimate(ctx)
			return err
		}); err != nil {
			return history, err
		}
		g := zerosLike(b.Lambda)
		rec := HyperStep{Step: h + 1, Distance: reg.Distance(), Regularizer: reg.Value()}
		for _, e := range risks {
			addScaled(g, e.Grad, 1/nc)
			rec.ValLoss += e.Value / nc
		}
		if b.Zeta > 0 && b.Form == SqrtSum {
			addScaled(g, acc, reg.GradientScale())
		}
		rec.HyperNorm = norm(g)
		if err := b.outerStep(g, &guard); err != nil {
			return history, err
		}
		rec.Rejected, rec.Projected = guard.Rejected, guard.Projected
		history = append(history, rec)
		if b.OnHyperStep != nil {
			if err := b.OnHyperStep(rec); err != nil {
				return history, err
			}
		}
	}
	return history, nil
}

// innerRun performs hyper-step h's inner steps, accumulating the Fisher terms in reg and
// Σ_t mean_c ∇_λ ½‖a_t‖² in acc, and online (Form Sum, Zeta > 0) the outer step on ζ‖a_t‖
// between each step's evaluation and its optimizer steps.
func (b *Bilevel) innerRun(ctx context.Context, h int, reg *Regularizer, acc [][]float64, guard *HyperStep) error {
	nc := float64(len(b.Chains))
	online := b.Form == Sum && b.Zeta > 0
	results := make([]stepResult, len(b.Chains))
	var step [][]float64 // this inner step's mean λ gradient, reused
	for t := 0; t < b.InnerSteps; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.parallel(func(ci int) (err error) {
			if online {
				results[ci], err = b.evaluate(ctx, b.Chains[ci], t)
			} else {
				results[ci], err = b.innerStep(ctx, b.Chains[ci], t)
			}
			return err
		}); err != nil {
			return fmt.Errorf("hyper-step %d: %w", h+1, err)
		}
		if b.Zeta == 0 && !b.Monitor {
			continue
		}
		sq := 0.0
		if step == nil {
			step = zerosLike(b.Lambda)
		} else {
			for _, x := range step {
				clear(x)
			}
		}
		for _, r := range results {
			sq += r.sq / nc
			if len(r.reg) > 0 {
				addScaled(step, r.reg, 1/nc)
			}
		}
		if err := reg.Add(sq); err != nil {
			return err
		}
		addScaled(acc, step, 1)
		if !online {
			continue
		}
		if sq > 0 {
			// Algorithm C.3: a step on ζ‖a_t‖, whose gradient is ζ ∇½‖a_t‖² / ‖a_t‖
			scaleAll(step, b.Zeta/math.Sqrt(sq))
			if err := b.outerStep(step, guard); err != nil {
				return err
			}
		}
		if err := b.parallel(func(ci int) error {
			return b.advance(b.Chains[ci], results[ci], t)
		}); err != nil {
			return fmt.Errorf("hyper-step %d: %w", h+1, err)
		}
	}
	return nil
}

// outerStep applies one guarded outer step with hypergradient g (see Bilevel), counting
// rejections and projections in rec.
func (b *Bilevel) outerStep(g [][]float64, rec *HyperStep) error {
	grads := make([]G.Value, len(g))
	for i, l := range b.Lambda {
		for _, x := range g[i] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				rec.Rejected++ // λ and the outer optimizer's state stay as they were
				return nil
			}
		}
		t := tensor.New(tensor.Of(l.Dtype()), tensor.WithShape(l.Shape()...))
		if err := graph.SetFlat([]*tensor.Dense{t}, g[i]); err != nil {
			return err
		}
		grads[i] = t
	}
	old, err := flatten(b.Lambda)
	if err != nil {
		return err
	}
	if err := b.Outer.Step(b.Lambda, grads); err != nil {
		return err
	}
	now, err := flatten(b.Lambda)
	if err != nil {
		return err
	}
	for _, x := range now {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			rec.Rejected++
			return graph.SetFlat(b.Lambda, old)
		}
	}
	if b.Bounds != nil {
		clipped, off := 0, 0
		for i, l := range b.Lambda {
			n := l.Shape().TotalSize()
			r := b.Bounds[i]
			for j := off; j < off+n; j++ {
				if c := math.Min(math.Max(now[j], r.Lo), r.Hi); c != now[j] {
					now[j] = c
					clipped++
				}
			}
			off += n
		}
		if clipped > 0 {
			rec.Projected += clipped
			if err := graph.SetFlat(b.Lambda, now); err != nil {
				return err
			}
		}
	}
	if b.Project != nil {
		return b.Project(b.Lambda)
	}
	return nil
}

// flatten concatenates the tensors' values as float64s.
func flatten(ts []*tensor.Dense) ([]float64, error) {
	var out []float64
	for _, t := range ts {
		v, err := graph.ToFloat64s(t)
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return out, nil
}

// float64sInto is graph.ToFloat64s into dst's storage when it is large enough.
func float64sInto(dst []float64, v G.Value) ([]float64, error) {
	switch v.Dtype() {
	case tensor.Float64:
		s, err := graph.Elements[float64](v)
		if err != nil {
			return nil, err
		}
		return append(dst[:0], s...), nil
	case tensor.Float32:
		s, err := graph.Elements[float32](v)
		if err != nil {
			return nil, err
		}
		dst = slices.Grow(dst[:0], len(s))[:len(s)]
		for i, e := range s {
			dst[i] = float64(e)
		}
		return dst, nil
	}
	return nil, fmt.Errorf("hypergrad: value of dtype %v", v.Dtype())
}

func zerosLike(ts []*tensor.Dense) [][]float64 {
	out := make([][]float64, len(ts))
	for i, t := range ts {
		out[i] = make([]float64, t.Shape().TotalSize())
	}
	return out
}

func addScaled(dst, src [][]float64, s float64) {
	for i := range dst {
		for j := range dst[i] {
			dst[i][j] += s * src[i][j]
		}
	}
}

func scaleAll(x [][]float64, s float64) {
	for i := range x {
		for j := range x[i] {
			x[i][j] *= s
		}
	}
}

func norm(x [][]float64) float64 {
	s := 0.0
	for _, v := range x {
		s += dot(v, v)
	}
	return math.Sqrt(s)
}
