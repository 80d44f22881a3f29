package hypergrad

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Problem is a bilevel problem on one graph.
//
// Train and Val must build their objective at the theta nodes they are given, never at the
// model's own parameter nodes: the estimators call them at computed parameters such as one
// unrolled step θ − η∇_θ L_T(θ, λ), and an objective that reads Params there has a
// hypergradient of 0 through the inner steps. For a model of package layers, build the
// forward pass inside [github.com/hyperflat/hyperflat/layers.Net.Rebind]:
//
//	Val: func(theta []*G.Node) (*G.Node, error) {
//		var loss *G.Node
//		err := net.Rebind(theta, func() error {
//			logits, err := model.Logits(xVal, pass)
//			if err != nil {
//				return err
//			}
//			loss, err = losses.CrossEntropy(logits, yVal)
//			return err
//		})
//		return loss, err
//	},
//
// NewUnrolled (so NewT1T2 and Bilevel) and NewImplicit check this when they build their
// graphs: an objective that reads Params instead of theta, does not depend on theta, or on
// which some hyperparameter has no influence is an error naming the fix.
type Problem struct {
	// Params are θ: input nodes bound to the tensors the inner optimizer updates.
	Params []*G.Node
	// Hypers are λ: input nodes bound to the tensors the outer optimizer updates.
	Hypers []*G.Node
	// Train builds the training objective L_T(θ, λ) at the parameter nodes theta — Params
	// themselves, or computed nodes when an estimator unrolls optimizer steps — on the batch of
	// inner step k (a problem with one batch ignores k). It must read θ from theta only (see
	// Problem).
	Train func(theta []*G.Node, k int) (*G.Node, error)
	// Val builds the validation objective C(θ, λ) at theta, reading θ from theta only.
	Val func(theta []*G.Node) (*G.Node, error)
}

func (p *Problem) validate() error {
	if p == nil {
		return fmt.Errorf("hypergrad: a nil *Problem")
	}
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
