package layers_test

import (
	"context"
	"fmt"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// convNet is a user-defined model. Anything with a Net and Logits is a layers.Model, so
// training, weight decay and hypergradients work with it as with the package's own models.
type convNet struct {
	net  *layers.Net
	body layers.Sequential
}

func (m *convNet) Net() *layers.Net { return m.net }

func (m *convNet) Logits(x *G.Node, p *layers.Pass) (*G.Node, error) { return m.body.Forward(x, p) }

// newConvNet builds a 3×3 convolution with 4 filters, ReLU, 2×2 max-pooling and a linear
// head for 10×10 one-channel images and 3 classes; every parameter comes from net.Param
// through the layers' constructors, initialized from the net's seed.
func newConvNet(net *layers.Net) (*convNet, error) {
	conv, err := layers.NewConv2d(net, "conv", 1, 4, 3, 3, layers.Conv2dConfig{})
	if err != nil {
		return nil, err
	}
	head, err := layers.NewLinear(net, "head", 4*4*4, 3, layers.LinearConfig{})
	if err != nil {
		return nil, err
	}
	return &convNet{net: net, body: layers.Sequential{conv, layers.ReLU, layers.MaxPool2d{KH: 2, KW: 2}, layers.Flatten{}, head}}, nil
}

func Example_userModel() {
	net, err := layers.NewNet(tensor.Float64, 1)
	if err != nil {
		panic(err)
	}
	m, err := newConvNet(net)
	if err != nil {
		panic(err)
	}
	fmt.Println("parameters:", net.NumParams())

	// A batch of 2 images: [N, C, H, W].
	x := net.Input("x", 2, 1, 10, 10)
	if err := G.Let(x, tensor.New(tensor.WithShape(2, 1, 10, 10), tensor.WithBacking(make([]float64, 200)))); err != nil {
		panic(err)
	}
	logits, err := m.Logits(x, layers.NewPass(layers.Eval))
	if err != nil {
		panic(err)
	}
	prog, err := graph.Compile(logits)
	if err != nil {
		panic(err)
	}
	if err := prog.Run(context.Background()); err != nil {
		panic(err)
	}
	out, err := prog.Float64s(logits)
	if err != nil {
		panic(err)
	}
	fmt.Println("logits:", logits.Shape(), len(out), "values")
	// Output:
	// parameters: 235
	// logits: (2, 3) 6 values
}
