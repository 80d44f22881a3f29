package layers

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func randomDense(rng *rand.Rand, shape ...int) *tensor.Dense {
	d := make([]float64, tensor.Shape(shape).TotalSize())
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}

func mustNet(t testing.TB, dt tensor.Dtype, seed uint64) *Net {
	t.Helper()
	n, err := NewNet(dt, seed)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkLayer runs the first- and second-order checks of Σ w⊙y² for y = layer(x), with respect
// to x and the chosen parameters (all when wrt is nil).
// testStep is small enough that no max-pool window of these random networks changes its argmax
// within ±2 steps (at 1e-3 the ResNet case crosses one and fails, as a kink must).
var testStep = 3e-5

func checkLayer(t *testing.T, net *Net, y, x *G.Node, wrt []*Param) {
	t.Helper()
	if wrt == nil {
		wrt = net.Params()
	}
	nodes := []*G.Node{x}
	for _, p := range wrt {
		nodes = append(nodes, p.Node)
	}
	sq, err := graph.Square(y)
	if err != nil {
		t.Fatal(err)
	}
	for order, check := range []func(*G.Node, []*G.Node, graph.CheckOptions) (graph.CheckResult, error){graph.GradCheckNodes, graph.GradGradCheckNodes} {
		res, err := check(sq, nodes, graph.CheckOptions{Seed: 1, Step: testStep})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("order %d: max rel err %.2e over %d entries", order+1, res.MaxRelErr, res.Entries)
		if !res.Passed {
			t.Errorf("order %d: %v", order+1, res)
		}
	}
}

func input(t testing.TB, net *Net, rng *rand.Rand, shape ...int) *G.Node {
	t.Helper()
	x := net.Input("x", shape...)
	if err := G.Let(x, randomDense(rng, shape...)); err != nil {
		t.Fatal(err)
	}
	return x
}

func TestLayersFirstAndSecondOrder(t *testing.T) {
	type build func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param)
	fwd := func(l Layer, err error) func(*testing.T, *Pass, *G.Node) *G.Node {
		return func(t *testing.T, p *Pass, x *G.Node) *G.Node {
			if err != nil {
				t.Fatal(err)
			}
			y, err := l.Forward(x, p)
			if err != nil {
				t.Fatal(err)
			}
			return y
		}
	}
	cases := []struct {
		name  string
		shape []int
		mode  Mode
		build build
	}{
		{"Linear", []int{3, 4}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			return fwd(NewLinear(net, "fc", 4, 3, LinearConfig{BiasInit: Constant(0.1)}))(t, p, x), nil
		}},
		{"MLP (tanh)", []int{3, 4}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			m, err := NewMLP(net, "mlp", MLPConfig{In: 4, Hidden: []int{5, 3}, Out: 2, Activation: Tanh})
			if err != nil {
				t.Fatal(err)
			}
			y, err := m.Logits(x, p)
			if err != nil {
				t.Fatal(err)
			}
			return y, nil
		}},
		{"Conv2d (same, kernel 4)", []int{2, 2, 5, 5}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			return fwd(NewConv2d(net, "conv", 2, 3, 4, 4, Conv2dConfig{Geometry: graph.SamePadding(4, 4), BiasInit: Constant(0.1)}))(t, p, x), nil
		}},
		{"MaxPool2d", []int{1, 2, 4, 4}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			return fwd(MaxPool2d{KH: 2, KW: 2}, nil)(t, p, x), []*Param{}
		}},
		{"GlobalAvgPool", []int{2, 3, 3, 3}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			return fwd(GlobalAvgPool{}, nil)(t, p, x), []*Param{}
		}},
		{"BatchNorm (train)", []int{4, 3, 2, 2}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			return fwd(NewBatchNorm(net, "bn", 3, BatchNormConfig{}))(t, p, x), nil
		}},
		{"BatchNorm (eval)", []int{4, 3}, Eval, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			return fwd(NewBatchNorm(net, "bn", 3, BatchNormConfig{}))(t, p, x), nil
		}},
		{"Dropout (train)", []int{3, 5}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			y := fwd(Dropout{Net: net, Rate: 0.4}, nil)(t, p, x)
			if err := p.Draw(rand.New(rand.NewPCG(3, 3))); err != nil {
				t.Fatal(err)
			}
			return y, []*Param{}
		}},
		{"BasicBlock (downsample)", []int{2, 2, 4, 4}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			return fwd(NewBasicBlock(net, "block", 2, 3, 2))(t, p, x), nil
		}},
		{"BasicBlock (identity)", []int{2, 2, 3, 3}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			return fwd(NewBasicBlock(net, "block", 2, 2, 1))(t, p, x), nil
		}},
		{"AHSC MNIST ConvNet", []int{2, 1, 6, 6}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			m, err := NewMNISTConvNet(net, ConvNetConfig{Filters: 2, Kernel: 2, Padding: Same, Blocks: 1, InChannels: 1, Height: 6, Width: 6, Classes: 3})
			if err != nil {
				t.Fatal(err)
			}
			y, err := m.Logits(x, p)
			if err != nil {
				t.Fatal(err)
			}
			ps := net.Params()
			return y, []*Param{ps[0], ps[len(ps)-2]}
		}},
		{"AHSC SVHN ConvNet", []int{3, 2, 6, 6}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			m, err := NewSVHNConvNet(net, ConvNetConfig{Filters: 2, Kernel: 3, Padding: Same, Blocks: 1, Dropout: 0.3, FinalDropout: 0.2, Units: 4, InChannels: 2, Height: 6, Width: 6, Classes: 3})
			if err != nil {
				t.Fatal(err)
			}
			y, err := m.Logits(x, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Draw(rand.New(rand.NewPCG(4, 4))); err != nil {
				t.Fatal(err)
			}
			ps := net.Params()
			return y, []*Param{ps[0], ps[1], ps[2], ps[len(ps)-2]}
		}},
		{"ResNet (width 1/32)", []int{2, 1, 12, 12}, Train, func(t *testing.T, net *Net, p *Pass, x *G.Node) (*G.Node, []*Param) {
			cfg := ResNet18(1, 3)
			cfg.Width = 1.0 / 32
			r, err := NewResNet(net, cfg)
			if err != nil {
				t.Fatal(err)
			}
			y, err := r.Logits(x, p)
			if err != nil {
				t.Fatal(err)
			}
			ps := net.Params()
			return y, []*Param{ps[0], ps[1], ps[len(ps)-2], ps[len(ps)-1]}
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			net := mustNet(t, tensor.Float64, uint64(i))
			x := input(t, net, rng, c.shape...)
			p := NewPass(c.mode)
			y, wrt := c.build(t, net, p, x)
			checkLayer(t, net, y, x, wrt)
		})
	}
}

func TestResNetParameterCounts(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  ResNetConfig
		want int
	}{
		{"resnet18 (torchvision, 3 channels, 1000 classes)", ResNet18(3, 1000), 11689512},
		{"resnet34 (torchvision, 3 channels, 1000 classes)", ResNet34(3, 1000), 21797672},
		{"resnet18 (MNIST stem)", ResNet18(1, 1000), 11689512 - 64*2*7*7},
	} {
		net := mustNet(t, tensor.Float32, 1)
		if _, err := NewResNet(net, c.cfg); err != nil {
			t.Fatal(err)
		}
		if got := net.NumParams(); got != c.want {
			t.Errorf("%s: %d parameters, want %d", c.name, got, c.want)
		}
	}
}

func TestResNetForwardShapes(t *testing.T) {
	for _, c := range []struct {
		cfg   ResNetConfig
		shape []int
	}{
		{ResNet18(1, 10), []int{2, 1, 28, 28}},
		{ResNet34(3, 10), []int{2, 3, 32, 32}},
	} {
		c.cfg.Width = 1.0 / 16
		net := mustNet(t, tensor.Float32, 2)
		r, err := NewResNet(net, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		x := net.Input("x", c.shape...)
		y, err := r.Logits(x, NewPass(Eval))
		if err != nil {
			t.Fatal(err)
		}
		if !y.Shape().Eq(tensor.Shape{2, 10}) {
			t.Errorf("logits shape %v", y.Shape())
		}
	}
}

func TestBatchNormRunningStatistics(t *testing.T) {
	net := mustNet(t, tensor.Float64, 1)
	bn, err := NewBatchNorm(net, "bn", 1, torchBN)
	if err != nil {
		t.Fatal(err)
	}
	x := net.Input("x", 2, 1)
	if err := G.Let(x, tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float64{1, 3}))); err != nil {
		t.Fatal(err)
	}
	p := NewPass(Train)
	y, err := bn.Forward(x, p)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := graph.Compile(append([]*G.Node{y}, p.StatNodes()...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Update(prog); err != nil {
		t.Fatal(err)
	}
	// batch mean 2, biased variance 1, unbiased 2; PyTorch momentum 0.1:
	// running mean 0.9·0 + 0.1·2 = 0.2, running variance 0.9·1 + 0.1·2 = 1.1.
	rm, rv := bn.RunningMean.Value.Float64s()[0], bn.RunningVar.Value.Float64s()[0]
	if math.Abs(rm-0.2) > 1e-15 || math.Abs(rv-1.1) > 1e-15 {
		t.Errorf("running mean %v, variance %v; want 0.2, 1.1", rm, rv)
	}
	got, _ := prog.Float64s(y)
	// (x − 2)/√(1 + 1e-5)
	want := -1 / math.Sqrt(1+1e-5)
	if math.Abs(got[0]-want) > 1e-12 || math.Abs(got[1]+want) > 1e-12 {
		t.Errorf("normalized %v, want ±%v", got, want)
	}
}

func TestWeightDecayPenaltyAndHypergradient(t *testing.T) {
	for _, scope := range []DecayScope{PerElement, PerTensor, Shared} {
		net := mustNet(t, tensor.Float64, 3)
		l, err := NewLinear(net, "fc", 2, 1, LinearConfig{BiasInit: Constant(0.5)})
		if err != nil {
			t.Fatal(err)
		}
		wd, err := NewWeightDecay(net, nil, scope, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		pen, err := wd.Penalty()
		if err != nil {
			t.Fatal(err)
		}
		grads, err := graph.Grad(pen, wd.Nodes()...)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := graph.Compile(append([]*G.Node{pen}, grads...)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		w := l.W.Value.Float64s()
		sumSq := w[0]*w[0] + w[1]*w[1] + 0.25
		if got, _ := prog.Scalar(pen); math.Abs(got-0.05*sumSq) > 1e-15 {
			t.Errorf("scope %d: penalty %v, want ½·0.1·Σθ² = %v", scope, got, 0.05*sumSq)
		}
		// ∂penalty/∂λ = ½θ² per element, summed over what each λ covers.
		var want [][]float64
		switch scope {
		case PerElement:
			want = [][]float64{{w[0] * w[0] / 2, w[1] * w[1] / 2}, {0.125}}
		case PerTensor:
			want = [][]float64{{(w[0]*w[0] + w[1]*w[1]) / 2}, {0.125}}
		case Shared:
			want = [][]float64{{sumSq / 2}}
		}
		for k := range want {
			got, _ := prog.Float64s(grads[k])
			for j := range want[k] {
				if math.Abs(got[j]-want[k][j]) > 1e-15 {
					t.Errorf("scope %d: ∂/∂λ%d = %v, want %v", scope, k, got, want[k])
				}
			}
		}
		if err := wd.ApplyDecoupled(0.5); err != nil {
			t.Fatal(err)
		}
		if got := l.B.Value.Float64s()[0]; math.Abs(got-0.5*(1-0.05)) > 1e-15 {
			t.Errorf("scope %d: decoupled decay left bias %v, want %v", scope, got, 0.5*0.95)
		}
	}
}

func TestInitializationIsSeededAndBounded(t *testing.T) {
	build := func(seed uint64) []float64 {
		net := mustNet(t, tensor.Float64, seed)
		if _, err := NewMNISTConvNet(net, ConvNetConfig{Filters: 4, Kernel: 3, Padding: Valid, Blocks: 2}); err != nil {
			t.Fatal(err)
		}
		var all []float64
		for _, p := range net.Params() {
			all = append(all, p.Value.Float64s()...)
		}
		return all
	}
	a, b, c := build(7), build(7), build(8)
	same := true
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed gave different initial weights")
		}
		same = same && a[i] == c[i]
	}
	if same {
		t.Error("different seeds gave the same weights")
	}
	// He-uniform first kernel: fan-in 1·3·3 = 9, bound √(6/9).
	bound := math.Sqrt(6.0 / 9)
	maxAbs := 0.0
	for _, v := range a[:4*9] {
		maxAbs = math.Max(maxAbs, math.Abs(v))
	}
	if maxAbs > bound || maxAbs < 0.5*bound {
		t.Errorf("He-uniform kernel max |w| = %v for bound %v", maxAbs, bound)
	}
}

func TestAHSCConvNetsRejectVanishingArchitectures(t *testing.T) {
	net := mustNet(t, tensor.Float32, 1)
	_, err := NewMNISTConvNet(net, ConvNetConfig{Filters: 6, Kernel: 6, Padding: Valid, Blocks: 3})
	if err == nil || !strings.Contains(err.Error(), "invalid") {
		t.Errorf("28×28 through three valid 6×6 blocks: err = %v", err)
	}
	net = mustNet(t, tensor.Float32, 1)
	m, err := NewSVHNConvNet(net, ConvNetConfig{Filters: 2, Kernel: 5, Padding: Same, Blocks: 3, Dropout: 0.2, FinalDropout: 0.5, Units: 64})
	if err != nil {
		t.Fatal(err)
	}
	x := net.Input("x", 4, 3, 32, 32)
	y, err := m.Logits(x, NewPass(Train))
	if err != nil {
		t.Fatal(err)
	}
	if !y.Shape().Eq(tensor.Shape{4, 10}) {
		t.Errorf("SVHN logits shape %v", y.Shape())
	}
}
