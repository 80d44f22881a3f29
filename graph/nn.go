package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// shifted returns x − max(x) along axis; the shift carries no derivative, which is exact
// because every function built on it (softmax, log-sum-exp) is invariant to it.
func shifted(x *G.Node, axis int) (z, m *G.Node, err error) {
	if x == nil {
		return nil, nil, fmt.Errorf("graph: nil node")
	}
	if m, err = maxKeep(x, axis); err != nil {
		return nil, nil, err
	}
	z, err = Sub(x, m)
	return z, m, err
}

// LogSoftmax returns x − log Σ exp(x) along axis, computed with a max shift so that it never
// overflows.
func LogSoftmax(x *G.Node, axis int) (*G.Node, error) {
	z, _, l, err := shiftedLogSum(x, axis)
	if err != nil {
		return nil, err
	}
	return Sub(z, l)
}

// shiftedLogSum returns z = x − m with m the (derivative-free) maximum along axis, m, and
// log Σ exp(z) along axis (kept as a unit dim).
func shiftedLogSum(x *G.Node, axis int) (z, m, l *G.Node, err error) {
	if z, m, err = shifted(x, axis); err != nil {
		return nil, nil, nil, err
	}
	e, err := Exp(z)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := SumKeep(e, axis)
	if err != nil {
		return nil, nil, nil, err
	}
	l, err = Log(s)
	return z, m, l, err
}

// Softmax returns exp(x) / Σ exp(x) along axis, computed stably.
func Softmax(x *G.Node, axis int) (*G.Node, error) {
	l, err := LogSoftmax(x, axis)
	if err != nil {
		return nil, err
	}
	return Exp(l)
}

// LogSumExp returns log Σ exp(x) along axis (which is removed), computed stably.
func LogSumExp(x *G.Node, axis int) (*G.Node, error) {
	_, m, l, err := shiftedLogSum(x, axis)
	if err != nil {
		return nil, err
	}
	r, err := Add(l, m)
	if err != nil {
		return nil, err
	}
	return Sum(r, axis)
}

// CrossEntropy returns the mean over the batch of −Σ_k targets[i,k]·log softmax(logits)[i,k]
// for N×K logits and N×K targets (one-hot rows, or any probability rows).
func CrossEntropy(logits, targets *G.Node) (*G.Node, error) {
	if logits == nil || targets == nil {
		return nil, fmt.Errorf("graph: CrossEntropy of a nil node")
	}
	ls, ts := logits.Shape(), targets.Shape()
	if len(ls) != 2 || !ls.Eq(ts) {
		return nil, fmt.Errorf("graph: CrossEntropy of logits %v and targets %v; want equal N×K shapes", shapeString(ls), shapeString(ts))
	}
	lp, err := LogSoftmax(logits, 1)
	if err != nil {
		return nil, err
	}
	p, err := Mul(targets, lp)
	if err != nil {
		return nil, err
	}
	s, err := Sum(p)
	if err != nil {
		return nil, err
	}
	return Scale(s, -1/float64(ls[0]))
}

// BatchNormConfig selects batch statistics (Training) or the running statistics given as
// nodes, and the ε added to the variance.
type BatchNormConfig struct {
	Training    bool
	RunningMean *G.Node // per feature; used when !Training
	RunningVar  *G.Node // per feature; used when !Training
	Eps         float64 // 1e-5 when zero
}

// BatchNorm normalizes x per feature (axis 1) over the batch (and the spatial dims of an
// N×C×H×W input), then scales by gamma and shifts by beta (both of length C). In training it
// returns the batch mean and biased variance as well, for the caller's running averages; in
// inference they are the running statistics given. It is composed of elementary ops, so it is
// differentiable to any order in x, gamma and beta.
func BatchNorm(x, gamma, beta *G.Node, cfg BatchNormConfig) (y, mean, variance *G.Node, err error) {
	if x == nil || gamma == nil || beta == nil {
		return nil, nil, nil, fmt.Errorf("graph: BatchNorm of a nil node")
	}
	if !(cfg.Eps >= 0) || math.IsInf(cfg.Eps, 0) {
		return nil, nil, nil, fmt.Errorf("graph: BatchNorm with ε = %v; want a finite ε ≥ 0 (0: 1e-5)", cfg.Eps)
	}
	s := x.Shape()
	var axes []int
	var pshape []int
	switch len(s) {
	case 2:
		axes, pshape = []int{0}, []int{1, s[1]}
	case 4:
		axes, pshape = []int{0, 2, 3}, []int{1, s[1], 1, 1}
	default:
		return nil, nil, nil, fmt.Errorf("graph: BatchNorm of shape %v; want N×C or N×C×H×W", shapeString(s))
	}
	for _, p := range []*G.Node{gamma, beta} {
		if p.Shape().TotalSize() != s[1] {
			return nil, nil, nil, fmt.Errorf("graph: BatchNorm parameter of shape %v for %d features", shapeString(p.Shape()), s[1])
		}
	}
	eps := cfg.Eps
	if eps == 0 {
		eps = 1e-5
	}
	var mu, v *G.Node
	if cfg.Training {
		if mu, err = MeanKeep(x, axes...); err != nil {
			return
		}
		var xc, sq *G.Node
		if xc, err = Sub(x, mu); err != nil {
			return
		}
		if sq, err = Square(xc); err != nil {
			return
		}
		if v, err = MeanKeep(sq, axes...); err != nil {
			return
		}
	} else {
		if cfg.RunningMean == nil || cfg.RunningVar == nil {
			return nil, nil, nil, fmt.Errorf("graph: BatchNorm inference needs RunningMean and RunningVar")
		}
		if mu, err = Reshape(cfg.RunningMean, pshape...); err != nil {
			return
		}
		if v, err = Reshape(cfg.RunningVar, pshape...); err != nil {
			return
		}
	}
	var xc, sd, xhat, gm, bt, scaled *G.Node
	if xc, err = Sub(x, mu); err != nil {
		return
	}
	if sd, err = Affine(v, 1, eps); err != nil {
		return
	}
	if sd, err = Sqrt(sd); err != nil {
		return
	}
	if xhat, err = Div(xc, sd); err != nil {
		return
	}
	if gm, err = Reshape(gamma, pshape...); err != nil {
		return
	}
	if bt, err = Reshape(beta, pshape...); err != nil {
		return
	}
	if scaled, err = Mul(xhat, gm); err != nil {
		return
	}
	if y, err = Add(scaled, bt); err != nil {
		return
	}
	if mean, err = Reshape(mu, s[1]); err != nil {
		return
	}
	variance, err = Reshape(v, s[1])
	return
}

// Dropout returns x ⊙ mask / keep, where mask is a 0/1 node drawn by DropoutMask with
// probability keep of a one (inverted dropout: the expectation is x). The mask is an explicit
// input, so a step is reproducible and the same mask serves the forward pass and every
// derivative.
func Dropout(x, mask *G.Node, keep float64) (*G.Node, error) {
	if !(keep > 0 && keep <= 1) { // NaN too
		return nil, fmt.Errorf("graph: Dropout keep probability %v outside (0, 1]", keep)
	}
	m, err := Mul(x, mask)
	if err != nil {
		return nil, err
	}
	return Scale(m, 1/keep)
}

// DropoutMask draws a 0/1 mask of the given shape and dtype in which each entry is one with
// probability keep, from the caller's random source.
func DropoutMask(rng *rand.Rand, dt tensor.Dtype, keep float64, shape ...int) (*tensor.Dense, error) {
	if !(keep > 0 && keep <= 1) { // NaN too
		return nil, fmt.Errorf("graph: Dropout keep probability %v outside (0, 1]", keep)
	}
	if rng == nil {
		return nil, fmt.Errorf("graph: DropoutMask needs a random source (got nil)")
	}
	n := tensor.Shape(shape).TotalSize()
	switch dt {
	case tensor.Float64:
		d := make([]float64, n)
		for i := range d {
			if rng.Float64() < keep {
				d[i] = 1
			}
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d)), nil
	case tensor.Float32:
		d := make([]float32, n)
		for i := range d {
			if rng.Float64() < keep {
				d[i] = 1
			}
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d)), nil
	}
	return nil, fmt.Errorf("graph: DropoutMask of dtype %v", dt)
}
