package hypergrad

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Problem is a bilevel problem on one graph.
type Problem struct {
	// Params are θ: input nodes bound to the tensors the inner optimizer updates.
	Params []*G.Node
	// Hypers are λ: input nodes bound to the tensors the outer optimizer updates.
	Hypers []*G.Node
	// Train builds the training objective L_T(θ, λ) at the parameter nodes theta — Params
	// themselves, or computed nodes when an estimator unrolls optimizer steps — on the batch of
	// inner step k (a problem with one batch ignores k).
	Train func(theta []*G.Node, k int) (*G.Node, error)
	// Val builds the validation objective C(θ, λ) at theta.
	Val func(theta []*G.Node) (*G.Node, error)
}

func (p *Problem) validate() error {
	if len(p.Params) == 0 || len(p.Hypers) == 0 {
		return fmt.Errorf("hypergrad: a problem needs parameters and hyperparameters")
	}
	if p.Train == nil || p.Val == nil {
		return fmt.Errorf("hypergrad: a problem needs Train and Val")
	}
	for _, n := range append(append([]*G.Node{}, p.Params...), p.Hypers...) {
		if n == nil || n.Op() != nil {
			return fmt.Errorf("hypergrad: parameters and hyperparameters must be input nodes")
		}
		if _, ok := n.Value().(*tensor.Dense); !ok {
			return fmt.Errorf("hypergrad: %s must be bound to a tensor", n.Name())
		}
	}
	return nil
}

// values returns the tensors bound to nodes.
func values(nodes []*G.Node) []*tensor.Dense {
	out := make([]*tensor.Dense, len(nodes))
	for i, n := range nodes {
		out[i] = n.Value().(*tensor.Dense)
	}
	return out
}
