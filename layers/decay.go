package layers

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DecayScope says how many weight-decay hyperparameters a WeightDecay has.
type DecayScope int

const (
	// PerElement gives every parameter entry its own λ (the PAC-Bayes paper's weight-decay
	// experiment: one hyperparameter per weight, 12 million for ResNet-18).
	PerElement DecayScope = iota
	// PerTensor gives every parameter tensor (each layer's kernel, bias, …) one λ.
	PerTensor
	// Shared uses one λ for all parameters.
	Shared
)

// WeightDecay holds weight-decay hyperparameters λ as input nodes of the net's graph, so that
// graph.Grad can differentiate anything built from them with respect to λ.
//
// Coupled decay adds Penalty, ½ Σ λ ⊙ θ², to the training loss. Decoupled decay (AdamW, and the
// PAC-Bayes paper's code) instead shrinks θ ← θ − η λ ⊙ θ after each optimizer step
// (ApplyDecoupled); its λ enters no loss.
type WeightDecay struct {
	Scope   DecayScope
	Targets []*Param // the decayed parameters
	Lambda  []*Param // one per target (PerElement: the target's shape; PerTensor: [1]), or one [1] tensor (Shared)
}

// NewWeightDecay creates decay hyperparameters for targets (all of net's parameters when nil),
// every λ initialized to init.
func NewWeightDecay(net *Net, targets []*Param, scope DecayScope, init float64) (*WeightDecay, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	if math.IsNaN(init) || math.IsInf(init, 0) {
		return nil, fmt.Errorf("layers: weight decay initialized to %v; want a finite λ", init)
	}
	if targets == nil {
		targets = net.Params()
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("layers: weight decay over no parameters")
	}
	wd := &WeightDecay{Scope: scope, Targets: targets}
	switch scope {
	case PerElement, PerTensor:
		for _, p := range targets {
			shape := []int(p.Value.Shape())
			if scope == PerTensor {
				shape = []int{1}
			}
			l, err := net.State("lambda."+p.Name, shape, Constant(init))
			if err != nil {
				return nil, err
			}
			wd.Lambda = append(wd.Lambda, l)
		}
	case Shared:
		l, err := net.State(net.unique("lambda"), []int{1}, Constant(init))
		if err != nil {
			return nil, err
		}
		wd.Lambda = []*Param{l}
	default:
		return nil, fmt.Errorf("layers: unknown decay scope %d", scope)
	}
	return wd, nil
}

// Nodes are the λ nodes, for graph.Grad.
func (wd *WeightDecay) Nodes() []*G.Node {
	out := make([]*G.Node, len(wd.Lambda))
	for i, l := range wd.Lambda {
		out[i] = l.Node
	}
	return out
}

// lambdaFor is the λ that decays target i.
func (wd *WeightDecay) lambdaFor(i int) *Param {
	if wd.Scope == Shared {
		return wd.Lambda[0]
	}
	return wd.Lambda[i]
}

// Penalty is the coupled decay term ½ Σ λ ⊙ θ² over all targets, a scalar node.
func (wd *WeightDecay) Penalty() (*G.Node, error) {
	nodes := make([]*G.Node, len(wd.Targets))
	for i, p := range wd.Targets {
		nodes[i] = p.Node
	}
	return wd.PenaltyAt(nodes)
}

// PenaltyAt is ½ Σ λ ⊙ θ² with the targets standing for theta (computed parameters, as in an
// unrolled step), one node per target.
func (wd *WeightDecay) PenaltyAt(theta []*G.Node) (*G.Node, error) {
	if len(theta) != len(wd.Targets) {
		return nil, fmt.Errorf("layers: penalty at %d nodes for %d decayed parameters", len(theta), len(wd.Targets))
	}
	var total *G.Node
	for i, th := range theta {
		sq, err := graph.Square(th)
		if err != nil {
			return nil, err
		}
		w, err := graph.Mul(wd.lambdaFor(i).Node, sq)
		if err != nil {
			return nil, err
		}
		s, err := graph.Sum(w)
		if err != nil {
			return nil, err
		}
		if total == nil {
			total = s
		} else if total, err = graph.Add(total, s); err != nil {
			return nil, err
		}
	}
	return graph.Scale(total, 0.5)
}

// ApplyDecoupled shrinks every target in place: θ ← θ − lr·λ ⊙ θ.
func (wd *WeightDecay) ApplyDecoupled(lr float64) error {
	for i, p := range wd.Targets {
		l := wd.lambdaFor(i)
		switch d := p.Value.Data().(type) {
		case []float64:
			lam := l.Value.Data().([]float64)
			for j := range d {
				d[j] -= lr * lam[j%len(lam)] * d[j]
			}
		case []float32:
			lam := l.Value.Data().([]float32)
			for j := range d {
				d[j] -= float32(lr) * lam[j%len(lam)] * d[j]
			}
		default:
			return fmt.Errorf("layers: parameter %s of type %T", p.Name, d)
		}
	}
	return nil
}

// Values are the λ tensors, for an optimizer that updates them in place.
func (wd *WeightDecay) Values() []*tensor.Dense {
	out := make([]*tensor.Dense, len(wd.Lambda))
	for i, l := range wd.Lambda {
		out[i] = l.Value
	}
	return out
}

// Count is the number of decay hyperparameters.
func (wd *WeightDecay) Count() int {
	n := 0
	for _, l := range wd.Lambda {
		n += l.Size()
	}
	return n
}
