package samplers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Langevin is one step of (unadjusted) Langevin dynamics:
//
//	θ ← θ − η·g + √(2η/(βn))·ξ,  ξ ~ N(0, I),
//
// whose stationary law (as η → 0) is ∝ exp(−β·n·R̂(θ)) when g = ∇R̂(θ) is the gradient
// of the mean empirical risk over the n examples. With the full-batch gradient it is
// Langevin dynamics (LD); with a mini-batch mean it is SGLD (Welling & Teh 2011).
//
// The noise is drawn from Rand with Rand.NormFloat64, one number per parameter entry:
// parameter 0 first, then 1, and so on, each in row-major order; the update of every entry
// is computed in float64 and rounded to the parameter's dtype. When Beta is +Inf the noise
// scale is zero, nothing is drawn (Rand may be nil) and the step is plain gradient descent.
//
// Langevin is an Optimizer; its Step checks gradients as described there, and it is Checked:
// the pass that writes the parameters notes a non-finite result (graph.LangevinMove).
type Langevin struct {
	Eta  float64    // step size η > 0
	Beta float64    // inverse temperature β > 0
	N    int        // dataset size n ≥ 1
	Rand *rand.Rand // noise source

	bad int // NonFiniteAfterStep
}

// NoiseStd returns √(2η/(βn)), the standard deviation of each noise entry.
func (l *Langevin) NoiseStd() float64 { return math.Sqrt(2 * l.Eta / (l.Beta * float64(l.N))) }

func checkLangevin(eta, beta float64, n int) error {
	switch {
	case !(eta > 0) || math.IsInf(eta, 0):
		return fmt.Errorf("samplers: Langevin step size η = %v; want finite > 0", eta)
	case !(beta > 0):
		return fmt.Errorf("samplers: Langevin inverse temperature β = %v; want > 0", beta)
	case n < 1:
		return fmt.Errorf("samplers: Langevin dataset size n = %d; want ≥ 1", n)
	}
	return nil
}

func (l *Langevin) validate() error {
	if err := checkLangevin(l.Eta, l.Beta, l.N); err != nil {
		return err
	}
	if l.Rand == nil && l.NoiseStd() > 0 {
		return errors.New("samplers: Langevin needs a Rand for its noise")
	}
	return nil
}

// Step applies one Langevin update to params in place.
func (l *Langevin) Step(params []*tensor.Dense, grads []G.Value) error {
	if err := l.validate(); err != nil {
		return err
	}
	dt, err := check(params, grads)
	if err != nil {
		return err
	}
	if dt == tensor.Float32 {
		return langevinStep[float32](l, params, grads)
	}
	return langevinStep[float64](l, params, grads)
}

func langevinStep[T graph.Float](l *Langevin, params []*tensor.Dense, grads []G.Value) error {
	if err := fastFiniteGrads[T](nil, grads, nil, nil); err != nil {
		return err
	}
	eta, std := l.Eta, l.NoiseStd()
	l.bad = -1
	return each(params, grads, func(i int, p, g []T) {
		if graph.LangevinMove(p, g, eta, std, l.Rand) && l.bad < 0 {
			l.bad = i
		}
	})
}

// NonFiniteAfterStep is the index of the first parameter the last Step left with a NaN or
// infinite entry, or −1 (see Checked).
func (l *Langevin) NonFiniteAfterStep() int { return l.bad }

// DPSGLD is one step of differentially private SGLD: each example's gradient g_k (the
// list of its gradients with respect to all parameters) is clipped to Euclidean norm at
// most Clip,
//
//	g_k ← g_k · min(1, L/‖g_k‖),  ‖g_k‖² = Σ over all parameter tensors and entries,
//
// the clipped gradients are averaged over the batch, and the Langevin step (with the same
// noise, drawn in the same order) is taken with that mean. The clipped sum is accumulated
// in float64. Accountant bounds the privacy of a run.
type DPSGLD struct {
	Langevin
	Clip float64 // clipping norm L > 0; +Inf disables clipping

	acc [][]float64
}

// Step takes one DP-SGLD step over a batch of b ≥ 1 examples. example(k) returns the
// gradients of the loss of the k-th example of the batch (k = 0, …, b−1, called in that
// order) with respect to params; they are read before example is called again, so they
// may be a program's reused result buffers. A NaN or infinite gradient is an error naming
// the example and the parameter, and leaves params unchanged.
func (d *DPSGLD) Step(ctx context.Context, params []*tensor.Dense, b int, example func(k int) ([]G.Value, error)) error {
	if err := d.Langevin.validate(); err != nil {
		return err
	}
	if !(d.Clip > 0) {
		return fmt.Errorf("samplers: DP-SGLD clipping norm %v; want > 0", d.Clip)
	}
	if b < 1 {
		return fmt.Errorf("samplers: DP-SGLD batch of %d examples", b)
	}
	dt, err := checkParams(params)
	if err != nil {
		return err
	}
	if dt == tensor.Float32 {
		return dpStep[float32](ctx, d, params, b, example)
	}
	return dpStep[float64](ctx, d, params, b, example)
}

func dpStep[T graph.Float](ctx context.Context, d *DPSGLD, params []*tensor.Dense, b int, example func(int) ([]G.Value, error)) error {
	if len(d.acc) != len(params) {
		d.acc = make([][]float64, len(params))
	}
	for i, p := range params {
		if n := p.Shape().TotalSize(); cap(d.acc[i]) < n {
			d.acc[i] = make([]float64, n)
		} else {
			d.acc[i] = d.acc[i][:n]
			clear(d.acc[i])
		}
	}
	for k := range b {
		if err := ctx.Err(); err != nil {
			return err
		}
		grads, err := example(k)
		if err != nil {
			return fmt.Errorf("samplers: gradient of batch example %d: %w", k, err)
		}
		if err := checkGrads(params, grads, params[0].Dtype()); err != nil {
			return fmt.Errorf("batch example %d: %w", k, err)
		}
		if err := finiteGrads[T](grads); err != nil {
			return fmt.Errorf("batch example %d: %w", k, err)
		}
		f, err := clipFactor[T](grads, d.Clip)
		if err != nil {
			return fmt.Errorf("batch example %d: %w", k, err)
		}
		for i, g := range grads {
			e, err := values[T](g)
			if err != nil {
				return fmt.Errorf("batch example %d: %w", k, err)
			}
			a := d.acc[i]
			for j, x := range e {
				a[j] += f * float64(x)
			}
		}
	}
	eta, std := d.Eta/float64(b), d.NoiseStd()
	for i, p := range params {
		pe, err := graph.Elements[T](p)
		if err != nil {
			return fmt.Errorf("samplers: parameter %d: %w", i, err)
		}
		graph.LangevinMove(pe, d.acc[i], eta, std, d.Rand)
	}
	return nil
}

// clipFactor returns min(1, clip/‖g‖) for the gradient list g (1 when g is zero).
func clipFactor[T graph.Float](grads []G.Value, clip float64) (float64, error) {
	gs := make([][]T, len(grads))
	for i, g := range grads {
		var err error
		if gs[i], err = values[T](g); err != nil {
			return 0, err
		}
	}
	var ss float64
	for _, g := range gs {
		for _, x := range g {
			ss += float64(x) * float64(x)
		}
	}
	norm := math.Sqrt(ss)
	if math.IsInf(ss, 1) { // finite entries whose squares overflow: rescale by the largest
		var m float64
		for _, g := range gs {
			for _, x := range g {
				m = max(m, math.Abs(float64(x)))
			}
		}
		ss = 0
		for _, g := range gs {
			for _, x := range g {
				y := float64(x) / m
				ss += y * y
			}
		}
		norm = m * math.Sqrt(ss)
	}
	if norm <= clip {
		return 1, nil
	}
	return clip / norm, nil
}
