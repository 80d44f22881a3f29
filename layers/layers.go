package layers

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
)

// Layer maps a batch node to a batch node.
type Layer interface {
	Forward(x *G.Node, p *Pass) (*G.Node, error)
}

// LayerFunc adapts a function to Layer.
type LayerFunc func(x *G.Node, p *Pass) (*G.Node, error)

// Forward calls f.
func (f LayerFunc) Forward(x *G.Node, p *Pass) (*G.Node, error) { return f(x, p) }

// Sequential applies its layers in order.
type Sequential []Layer

// Forward applies every layer in turn.
func (s Sequential) Forward(x *G.Node, p *Pass) (*G.Node, error) {
	var err error
	for i, l := range s {
		if x, err = l.Forward(x, p); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return x, nil
}

// Activation is an elementwise nonlinearity by name.
type Activation string

// Activations.
const (
	ReLU     Activation = "relu"
	Tanh     Activation = "tanh"
	Sigmoid  Activation = "sigmoid"
	Softplus Activation = "softplus"
	Identity Activation = "identity"
)

func (a Activation) valid() error {
	switch a {
	case ReLU, Tanh, Sigmoid, Softplus, Identity, "":
		return nil
	}
	return fmt.Errorf("layers: unknown activation %q", string(a))
}

// Forward applies the activation.
func (a Activation) Forward(x *G.Node, _ *Pass) (*G.Node, error) {
	switch a {
	case ReLU:
		return graph.ReLU(x)
	case Tanh:
		return graph.Tanh(x)
	case Sigmoid:
		return graph.Sigmoid(x)
	case Softplus:
		return graph.Softplus(x)
	case Identity, "":
		return x, nil
	}
	return nil, fmt.Errorf("layers: unknown activation %q", string(a))
}

// Linear is y = x·W + b for x of shape N×In, W of shape In×Out (Keras's kernel layout).
type Linear struct {
	W, B    *Param // B is nil without bias
	In, Out int
}

// LinearConfig sets a Linear layer's initialization; nil inits mean Glorot-uniform kernel and
// zero bias (Keras's Dense defaults).
type LinearConfig struct {
	NoBias     bool
	KernelInit Init
	BiasInit   Init
}

// NewLinear adds a Linear layer's parameters, named name.W and name.b, to net.
func NewLinear(net *Net, name string, in, out int, cfg LinearConfig) (*Linear, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	if in <= 0 || out <= 0 {
		return nil, fmt.Errorf("layers: Linear %s of size %d→%d", name, in, out)
	}
	ki, bi := cfg.KernelInit, cfg.BiasInit
	if ki == nil {
		ki = GlorotUniform
	}
	l := &Linear{In: in, Out: out}
	var err error
	if l.W, err = net.Param(name+".W", []int{in, out}, ki); err != nil {
		return nil, err
	}
	if !cfg.NoBias {
		if l.B, err = net.Param(name+".b", []int{out}, bi); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Forward computes x·W + b; x is flattened to N×In first if it has more dims.
func (l *Linear) Forward(x *G.Node, _ *Pass) (*G.Node, error) {
	s := x.Shape()
	if len(s) != 2 {
		var err error
		if x, err = graph.Reshape(x, s[0], -1); err != nil {
			return nil, err
		}
	}
	if x.Shape()[1] != l.In {
		return nil, fmt.Errorf("layers: Linear %s expects %d features, got shape %v", l.W.Name, l.In, s)
	}
	y, err := graph.MatMul(x, l.W.Node)
	if err != nil || l.B == nil {
		return y, err
	}
	return graph.Add(y, l.B.Node)
}

// Flatten reshapes N×… to N×(product of the rest).
type Flatten struct{}

// Forward flattens x.
func (Flatten) Forward(x *G.Node, _ *Pass) (*G.Node, error) {
	return graph.Reshape(x, x.Shape()[0], -1)
}

// Conv2d is a 2-D convolution (cross-correlation) over N×C×H×W with kernel F×C×KH×KW.
type Conv2d struct {
	W, B *Param // B is nil without bias; its shape is F
	Geom graph.Geometry
}

// Conv2dConfig sets a Conv2d layer's geometry and initialization; nil inits mean a
// Glorot-uniform kernel and zero bias (Keras's Conv2D defaults).
type Conv2dConfig struct {
	Geometry   graph.Geometry
	NoBias     bool
	KernelInit Init
	BiasInit   Init
}

// NewConv2d adds a convolution with out filters of size kh×kw over in channels.
func NewConv2d(net *Net, name string, in, out, kh, kw int, cfg Conv2dConfig) (*Conv2d, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	if in <= 0 || out <= 0 || kh <= 0 || kw <= 0 {
		return nil, fmt.Errorf("layers: Conv2d %s with %d→%d channels, kernel %dx%d", name, in, out, kh, kw)
	}
	ki := cfg.KernelInit
	if ki == nil {
		ki = GlorotUniform
	}
	c := &Conv2d{Geom: cfg.Geometry}
	var err error
	if c.W, err = net.Param(name+".W", []int{out, in, kh, kw}, ki); err != nil {
		return nil, err
	}
	if !cfg.NoBias {
		if c.B, err = net.Param(name+".b", []int{out}, cfg.BiasInit); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Forward convolves x and adds the bias per filter.
func (c *Conv2d) Forward(x *G.Node, _ *Pass) (*G.Node, error) {
	y, err := graph.Conv2d(x, c.W.Node, c.Geom)
	if err != nil || c.B == nil {
		return y, err
	}
	b, err := graph.Reshape(c.B.Node, 1, c.B.Size(), 1, 1)
	if err != nil {
		return nil, err
	}
	return graph.Add(y, b)
}

// MaxPool2d takes the maximum over KH×KW windows.
type MaxPool2d struct {
	KH, KW int
	Geom   graph.Geometry // zero strides mean the window size
}

// Forward max-pools x.
func (m MaxPool2d) Forward(x *G.Node, _ *Pass) (*G.Node, error) {
	return graph.MaxPool2d(x, m.KH, m.KW, m.Geom)
}

// AvgPool2d averages over KH×KW windows.
type AvgPool2d struct {
	KH, KW int
	Geom   graph.Geometry
}

// Forward average-pools x.
func (a AvgPool2d) Forward(x *G.Node, _ *Pass) (*G.Node, error) {
	return graph.AvgPool2d(x, a.KH, a.KW, a.Geom)
}

// GlobalAvgPool averages N×C×H×W over H and W, giving N×C (adaptive average pooling to 1×1
// followed by a flatten).
type GlobalAvgPool struct{}

// Forward averages over the spatial dims.
func (GlobalAvgPool) Forward(x *G.Node, _ *Pass) (*G.Node, error) {
	if len(x.Shape()) != 4 {
		return nil, fmt.Errorf("layers: GlobalAvgPool of shape %v", x.Shape())
	}
	return graph.Mean(x, 2, 3)
}

// Dropout zeroes each activation with probability Rate in training passes and rescales the
// rest by 1/(1−Rate); evaluation passes are the identity. Its mask is an input of the pass,
// drawn by Pass.Draw.
type Dropout struct {
	Net  *Net
	Rate float64
}

// Forward applies dropout in training passes.
func (d Dropout) Forward(x *G.Node, p *Pass) (*G.Node, error) {
	if d.Rate < 0 || d.Rate >= 1 {
		return nil, fmt.Errorf("layers: dropout rate %v outside [0, 1)", d.Rate)
	}
	if !p.Training() || d.Rate == 0 {
		return x, nil
	}
	keep := 1 - d.Rate
	m, err := p.addMask(d.Net, x.Shape(), keep)
	if err != nil {
		return nil, err
	}
	return graph.Dropout(x, m, keep)
}

// BatchNorm normalizes per feature (axis 1) with batch statistics in training passes and
// running statistics in evaluation passes, then scales by Gamma and shifts by Beta.
type BatchNorm struct {
	Gamma, Beta             *Param
	RunningMean, RunningVar *Param // state, not trained
	// Momentum is the weight of the old running value in each update (Keras's momentum; 0.99
	// by default there, 0.9 is PyTorch's momentum=0.1).
	Momentum float64
	Eps      float64
	// Unbiased folds the unbiased batch variance into the running variance (PyTorch);
	// Keras folds the biased one.
	Unbiased bool
}

// BatchNormConfig sets a BatchNorm layer's constants; zero values mean Keras's defaults
// (momentum 0.99, ε 1e-3).
type BatchNormConfig struct {
	Momentum float64
	Eps      float64
	Unbiased bool
}

// NewBatchNorm adds a batch-norm layer over features channels.
func NewBatchNorm(net *Net, name string, features int, cfg BatchNormConfig) (*BatchNorm, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	b := &BatchNorm{Momentum: cfg.Momentum, Eps: cfg.Eps, Unbiased: cfg.Unbiased}
	if b.Momentum == 0 {
		b.Momentum = 0.99
	}
	if b.Eps == 0 {
		b.Eps = 1e-3
	}
	if !(b.Momentum >= 0 && b.Momentum < 1) || !(b.Eps >= 0) || math.IsInf(b.Eps, 0) { // NaN too
		return nil, fmt.Errorf("layers: BatchNorm %s momentum %v, eps %v", name, b.Momentum, b.Eps)
	}
	var err error
	if b.Gamma, err = net.Param(name+".gamma", []int{features}, Ones); err != nil {
		return nil, err
	}
	if b.Beta, err = net.Param(name+".beta", []int{features}, Zeros); err != nil {
		return nil, err
	}
	if b.RunningMean, err = net.State(name+".running_mean", []int{features}, Zeros); err != nil {
		return nil, err
	}
	if b.RunningVar, err = net.State(name+".running_var", []int{features}, Ones); err != nil {
		return nil, err
	}
	return b, nil
}

// Forward normalizes x (N×C or N×C×H×W).
func (b *BatchNorm) Forward(x *G.Node, p *Pass) (*G.Node, error) {
	cfg := graph.BatchNormConfig{Training: p.Training(), RunningMean: b.RunningMean.Node, RunningVar: b.RunningVar.Node, Eps: b.Eps}
	y, mean, vari, err := graph.BatchNorm(x, b.Gamma.Node, b.Beta.Node, cfg)
	if err != nil {
		return nil, err
	}
	if p.Training() {
		s := x.Shape()
		p.stats = append(p.stats, statUpdate{bn: b, mean: mean, vari: vari, count: s.TotalSize() / s[1]})
	}
	return y, nil
}

// fold moves the running statistics toward a batch's.
func (b *BatchNorm) fold(mean, vari []float64, count int) error {
	corr := 1.0
	if b.Unbiased && count > 1 {
		corr = float64(count) / float64(count-1)
	}
	m := b.Momentum
	for _, t := range []struct {
		p   *Param
		new []float64
		c   float64
	}{{b.RunningMean, mean, 1}, {b.RunningVar, vari, corr}} {
		switch d := t.p.Value.Data().(type) {
		case []float64:
			for i := range d {
				d[i] = m*d[i] + (1-m)*t.c*t.new[i]
			}
		case []float32:
			for i := range d {
				d[i] = float32(m*float64(d[i]) + (1-m)*t.c*t.new[i])
			}
		default:
			return fmt.Errorf("layers: running statistic of type %T", d)
		}
	}
	return nil
}

// MLPConfig describes a multilayer perceptron: In inputs, one hidden layer per entry of
// Hidden, Out outputs (logits), Activation between layers (ReLU when empty).
type MLPConfig struct {
	In         int
	Hidden     []int
	Out        int
	Activation Activation
	KernelInit Init // nil: Glorot uniform
}

// MLP is a multilayer perceptron whose last Linear layer is its head.
type MLP struct {
	net    *Net
	hidden Sequential
	head   *Linear
}

// NewMLP builds an MLP on net with layers named name.0, name.1, ….
func NewMLP(net *Net, name string, cfg MLPConfig) (*MLP, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	act := cfg.Activation
	if act == "" {
		act = ReLU
	}
	if err := act.valid(); err != nil {
		return nil, err
	}
	m := &MLP{net: net}
	in := cfg.In
	for i, h := range cfg.Hidden {
		l, err := NewLinear(net, fmt.Sprintf("%s.%d", name, i), in, h, LinearConfig{KernelInit: cfg.KernelInit})
		if err != nil {
			return nil, err
		}
		m.hidden = append(m.hidden, l, act)
		in = h
	}
	var err error
	if m.head, err = NewLinear(net, fmt.Sprintf("%s.%d", name, len(cfg.Hidden)), in, cfg.Out, LinearConfig{KernelInit: cfg.KernelInit}); err != nil {
		return nil, err
	}
	return m, nil
}

// Net is the network the MLP is built on.
func (m *MLP) Net() *Net { return m.net }

// Features are the activations entering the head.
func (m *MLP) Features(x *G.Node, p *Pass) (*G.Node, error) { return m.hidden.Forward(x, p) }

// Head is the last Linear layer.
func (m *MLP) Head() *Linear { return m.head }

// Logits applies the whole MLP.
func (m *MLP) Logits(x *G.Node, p *Pass) (*G.Node, error) { return Logits(m, x, p) }
