package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// Model is anything that builds class logits (N×K) from an input batch on its Net's graph.
// Every trainable tensor it uses must come from Net().Param, so that optimizers, weight decay
// and hypergradients find it. A user-defined model needs nothing more.
type Model interface {
	Net() *Net
	Logits(x *G.Node, p *Pass) (*G.Node, error)
}

// FeatureModel is a Model whose last layer is fully connected: logits = Features(x)·W + b with
// W = Head().W. AHSC's strong-convexity estimate ‖a^{L−1}‖/‖W^L‖ reads both.
type FeatureModel interface {
	Model
	Features(x *G.Node, p *Pass) (*G.Node, error)
	Head() *Linear
}

// Logits applies a FeatureModel's head to its features.
func Logits(m FeatureModel, x *G.Node, p *Pass) (*G.Node, error) {
	if m == nil {
		return nil, fmt.Errorf("layers: Logits of a nil model")
	}
	f, err := m.Features(x, p)
	if err != nil {
		return nil, err
	}
	return m.Head().Forward(f, p)
}

// Classifier is a FeatureModel made of a body (any Layer) and a Linear head.
type Classifier struct {
	N    *Net
	Body Layer
	Top  *Linear
}

// Net is the network the classifier is built on.
func (c *Classifier) Net() *Net { return c.N }

// Features applies the body.
func (c *Classifier) Features(x *G.Node, p *Pass) (*G.Node, error) {
	if c.Body == nil {
		return x, nil
	}
	return c.Body.Forward(x, p)
}

// Head is the final Linear layer.
func (c *Classifier) Head() *Linear { return c.Top }

// Logits applies body and head.
func (c *Classifier) Logits(x *G.Node, p *Pass) (*G.Node, error) { return Logits(c, x, p) }

// NewLinearClassifier is logistic regression: one Linear layer from in features to classes
// logits (inputs of more dims are flattened).
func NewLinearClassifier(net *Net, in, classes int, cfg LinearConfig) (*Classifier, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	head, err := NewLinear(net, "linear", in, classes, cfg)
	if err != nil {
		return nil, err
	}
	return &Classifier{N: net, Body: Flatten{}, Top: head}, nil
}

// checkSpatial rejects an architecture whose feature maps have vanished.
func checkSpatial(what string, h, w int) error {
	if h <= 0 || w <= 0 {
		return fmt.Errorf("layers: %s leaves a %dx%d feature map; the architecture is invalid for this input", what, h, w)
	}
	return nil
}
