package hypergrad_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/hypergrad"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// regression draws n rows of y = x·w + noise·ε with 8 standard-normal features.
func regression(rng *rand.Rand, w []float64, n int, noise float64) (x, y *tensor.Dense) {
	xs, ys := make([]float64, n*len(w)), make([]float64, n)
	for i := range n {
		for j := range w {
			xs[i*len(w)+j] = rng.NormFloat64()
			ys[i] += xs[i*len(w)+j] * w[j]
		}
		ys[i] += noise * rng.NormFloat64()
	}
	return tensor.New(tensor.WithShape(n, len(w)), tensor.WithBacking(xs)),
		tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(ys))
}

// Tune one weight decay λ for a linear regression fitted to 10 noisy rows, so that it
// predicts 50 clean validation rows: Eq. 1 (ζ = 0) by T1–T2 hypergradients, λ stepped by
// RMSprop after every 100 gradient-descent steps on the penalized training loss.
func ExampleBilevel() {
	rng := rand.New(rand.NewPCG(1, 2))
	w := []float64{1, -1, 0.5, 0, 0, 0, 0, 0}
	xT, yT := regression(rng, w, 10, 1)
	xV, yV := regression(rng, w, 50, 0)

	// The user's model: a bias-free linear layer on a Net, so that its weights are θ.
	net, err := layers.NewNet(tensor.Float64, 1)
	if err != nil {
		panic(err)
	}
	lin, err := layers.NewLinear(net, "w", len(w), 1, layers.LinearConfig{NoBias: true})
	if err != nil {
		panic(err)
	}
	wd, err := layers.NewWeightDecay(net, nil, layers.Shared, 0)
	if err != nil {
		panic(err)
	}
	inputs := func(name string, x, y *tensor.Dense) (*G.Node, *G.Node) {
		xn, yn := net.Input(name+".x", x.Shape()...), net.Input(name+".y", y.Shape()...)
		if err := G.Let(xn, x); err != nil {
			panic(err)
		}
		if err := G.Let(yn, y); err != nil {
			panic(err)
		}
		return xn, yn
	}
	trainX, trainY := inputs("train", xT, yT)
	valX, valY := inputs("val", xV, yV)
	// mse builds the model's risk at parameters theta (the net's own, or computed ones).
	mse := func(theta []*G.Node, x, y *G.Node) (*G.Node, error) {
		var loss *G.Node
		err := net.Rebind(theta, func() error {
			pred, err := lin.Forward(x, nil)
			if err != nil {
				return err
			}
			loss, err = losses.MSE(pred, y)
			return err
		})
		return loss, err
	}
	problem := &hypergrad.Problem{
		Params: net.ParamNodes(),
		Hypers: wd.Nodes(),
		Train: func(theta []*G.Node, _ int) (*G.Node, error) {
			risk, err := mse(theta, trainX, trainY)
			if err != nil {
				return nil, err
			}
			penalty, err := wd.PenaltyAt(theta) // ½ λ ‖θ‖²
			if err != nil {
				return nil, err
			}
			return graph.Add(risk, penalty)
		},
		Val: func(theta []*G.Node) (*G.Node, error) { return mse(theta, valX, valY) },
	}
	const lr = 0.05
	b := &hypergrad.Bilevel{
		Chains:     []*hypergrad.Chain{{Problem: problem, Inner: &samplers.SGD{LR: lr}}},
		Lambda:     wd.Values(),
		Outer:      samplers.NewRMSprop(0.05),
		InnerSteps: 100, HyperSteps: 20,
		RiskLR: lr,
	}
	steps, err := b.Run(context.Background())
	if err != nil {
		panic(err)
	}
	lambda := wd.Values()[0].Data().([]float64)[0]
	fmt.Println("hyper-steps:", len(steps))
	fmt.Println("λ grew from 0:", lambda > 0)
	fmt.Println("validation loss fell:", steps[len(steps)-1].ValLoss < steps[0].ValLoss)
	// Output:
	// hyper-steps: 20
	// λ grew from 0: true
	// validation loss fell: true
}
