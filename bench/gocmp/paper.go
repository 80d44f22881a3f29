package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/experiments/weightdecay"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/hypergrad"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The papers' workloads (issue 13), built with the library builders the experiments use and
// stepped through the code paths they run (train.Trainer.Step, hypergrad.Bilevel's inner
// step):
//
//	resnet18_*       layers.ResNet18 with torchvision's stem, 1×28×28 (MNIST), 1000-class head,
//	                 batch 50, as experiments/weightdecay builds it; resnet34_* likewise;
//	                 resnet18_cifar_* 3×32×32 and 10 classes
//	ahsc_convnet_*   layers.NewMNISTConvNet, 2 × [conv 4@3×3 same, ReLU, pool 2], dense 128, 10;
//	                 batch 64
//	openml_mlp_*     the AHSC OpenML MLP at depth 2, width 512 on 30 features, one logit
//	                 (binary cross-entropy), batch 32, Keras's Adam: ahsc.OpenMLBuild in
//	                 float64; the same network through layers.NewMLP in float32, which that
//	                 builder does not make
//
// Weights come from the builders' seeded initializations; bench/ref.py receives them (and the
// data, element for element the gen streams) through weightsFile, so both sides step the same
// network from the same point.

// paperModel is a built model with its training data and how it is trained.
type paperModel struct {
	m     layers.Model
	ds    *datasets.Dataset
	kind  losses.Kind
	batch int
	opt   samplers.Optimizer // nil: Adam with PyTorch's defaults at lr 1e-3
}

// paperDataset is n examples of the given shape from gen stream seed (scaled to unit-ish
// range) with labels (7i + 3 + seed) mod k (mod 2 for one logit), as bench/ref.py builds them.
func paperDataset(seed, n, k int, shape ...int) *datasets.Dataset {
	d := tensor.Shape(shape).TotalSize()
	ds := &datasets.Dataset{Name: fmt.Sprint("gen", seed), N: n, D: d, Shape: shape, X: make([]float64, n*d), Y: make([]int, n)}
	for i := range ds.X {
		ds.X[i] = float64(float32(gen(seed, i) * 2))
	}
	k = max(k, 2) // one logit: binary labels
	for i := range ds.Y {
		ds.Y[i] = (7*i + 3 + seed) % k
	}
	ds.Classes = make([]string, k)
	for i := range ds.Classes {
		ds.Classes[i] = fmt.Sprint(i)
	}
	return ds
}

// paperModels builds the workload's model by name (the prefix of a workload name).
var paperModels = map[string]func(dt tensor.Dtype) (*paperModel, error){
	"resnet18": func(dt tensor.Dtype) (*paperModel, error) {
		return resnet(dt, layers.ResNet18(1, 1000), paperDataset(4, 50, 1000, 1, 28, 28))
	},
	"resnet34": func(dt tensor.Dtype) (*paperModel, error) {
		return resnet(dt, layers.ResNet34(1, 1000), paperDataset(4, 50, 1000, 1, 28, 28))
	},
	"resnet18_cifar": func(dt tensor.Dtype) (*paperModel, error) {
		return resnet(dt, layers.ResNet18(3, 10), paperDataset(5, 50, 10, 3, 32, 32))
	},
	"ahsc_convnet": func(dt tensor.Dtype) (*paperModel, error) {
		net, err := layers.NewNet(dt, 1)
		if err != nil {
			return nil, err
		}
		m, err := layers.NewMNISTConvNet(net, layers.ConvNetConfig{Filters: 4, Kernel: 3, Padding: layers.Same, Blocks: 2})
		if err != nil {
			return nil, err
		}
		return &paperModel{m: m, ds: paperDataset(6, 64, 10, 1, 28, 28), kind: losses.Multiclass, batch: 64}, nil
	},
	"openml_mlp": func(dt tensor.Dtype) (*paperModel, error) {
		ds := paperDataset(7, 32, 1, 30)
		if dt == tensor.Float64 { // the experiment's own builder (float64, Keras's Adam)
			space := ahsc.OpenMLSpace(10)
			cfg := search.Config{Space: space, Values: []float64{2, 9, 5, -3}} // depth 2, width 512, batch 32, lr 1e-3
			c, err := ahsc.OpenMLBuild(2, tensor.Float64)(ds)(cfg, 1)
			if err != nil {
				return nil, err
			}
			return &paperModel{m: c.Model, ds: ds, kind: losses.Binary, batch: c.BatchSize, opt: c.Optimizer}, nil
		}
		// the same network in float32, which the builder does not make
		net, err := layers.NewNet(dt, 1)
		if err != nil {
			return nil, err
		}
		m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 30, Hidden: []int{512, 512}, Out: 1})
		if err != nil {
			return nil, err
		}
		opt := samplers.NewAdam(1e-3)
		opt.Eps = 1e-7 // Keras's, as the builder's
		return &paperModel{m: m, ds: ds, kind: losses.Binary, batch: 32, opt: opt}, nil
	},
}

func resnet(dt tensor.Dtype, cfg layers.ResNetConfig, ds *datasets.Dataset) (*paperModel, error) {
	net, err := layers.NewNet(dt, 1)
	if err != nil {
		return nil, err
	}
	m, err := layers.NewResNet(net, cfg)
	if err != nil {
		return nil, err
	}
	return &paperModel{m: m, ds: ds, kind: losses.Multiclass, batch: ds.N}, nil
}

// paperTrain is one train.Trainer.Step with Adam (PyTorch's defaults, lr 1e-3) on the whole
// batch, in the row order of the data.
func paperTrain(model string, dt tensor.Dtype) func() (stepper, error) {
	return func() (stepper, error) {
		pm, err := paperModels[model](dt)
		if err != nil {
			return nil, err
		}
		tr, err := train.NewTrainer(pm.m, pm.kind, nil)
		if err != nil {
			return nil, err
		}
		idx := make([]int, pm.batch)
		for i := range idx {
			idx[i] = i
		}
		opt := pm.opt
		if opt == nil {
			opt = samplers.NewAdam(1e-3)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		ctx := context.Background()
		return func() error {
			_, err := tr.Step(ctx, opt, pm.ds, idx, rng)
			if p := tr.TrainProgram(pm.batch); p != nil && lastProgram != p {
				if profiling {
					p.Profile(true)
				}
				lastProgram = p
			}
			return err
		}, nil
	}
}

func init() {
	for _, m := range []string{"resnet18", "resnet34", "resnet18_cifar", "ahsc_convnet", "openml_mlp"} {
		goWorkloads[m+"_train_f32"] = paperTrain(m, tensor.Float32)
	}
	goWorkloads["openml_mlp_train_f64"] = paperTrain("openml_mlp", tensor.Float64)
	goWorkloads["resnet18_hvp_f32"] = paperHVP("resnet18", tensor.Float32)
	goWorkloads["resnet18_wd_inner_f32"] = paperWDInner("resnet18", tensor.Float32)
}

// paperHVP is the loss and a Hessian-vector product by double backpropagation (batch-norm in
// training mode), v from gen streams 100, 101, … as in hvpStep.
func paperHVP(model string, dt tensor.Dtype) func() (stepper, error) {
	return func() (stepper, error) {
		pm, err := paperModels[model](dt)
		if err != nil {
			return nil, err
		}
		net := pm.m.Net()
		k := pm.m.(layers.FeatureModel).Head().Out
		x, err := train.Inputs(net, pm.ds, "x")
		if err != nil {
			return nil, err
		}
		y, err := train.OneHot(net, pm.ds.Y, k, "y")
		if err != nil {
			return nil, err
		}
		logits, err := pm.m.Logits(x, layers.NewPass(layers.Train))
		if err != nil {
			return nil, err
		}
		loss, err := losses.Risk(pm.kind, logits, y)
		if err != nil {
			return nil, err
		}
		params := net.ParamNodes()
		vs := make([]*G.Node, len(params))
		for i, p := range params {
			vs[i] = net.Input(fmt.Sprint("v", i), p.Shape()...)
			if err := G.Let(vs[i], values(dt, 100+i, 2, p.Shape()...)); err != nil {
				return nil, err
			}
		}
		hv, err := graph.HVP(loss, params, vs)
		if err != nil {
			return nil, err
		}
		prog, err := compile(append([]*G.Node{loss}, hv...)...)
		if err != nil {
			return nil, err
		}
		ctx := context.Background()
		return func() error { return prog.Run(ctx) }, nil
	}
}

// paperWDInner is one inner step of the weight-decay experiment's bilevel run, as
// hypergrad.Bilevel.Run takes it: the chain weightdecay.NewChain builds (Adam on the plain
// training cross-entropy, decoupled per-entry decay λ after it, the Fisher distance
// a = ∇(L_T + ½Σλθ²) − ∇L_V with ∇_λ ½‖a‖²: Monitor, ζ > 0), with training and validation
// batches of 50.
func paperWDInner(model string, dt tensor.Dtype) func() (stepper, error) {
	return func() (stepper, error) {
		pm, err := paperModels[model](dt)
		if err != nil {
			return nil, err
		}
		m := pm.m.(layers.FeatureModel)
		k := m.Head().Out
		seed, _ := strconv.Atoi(strings.TrimPrefix(pm.ds.Name, "gen"))
		val := paperDataset(seed+10, pm.ds.N, k, pm.ds.Shape...)
		const lr = 1e-3
		chain, wd, err := weightdecay.NewChain(m, pm.ds, val, lr)
		if err != nil {
			return nil, err
		}
		b := &hypergrad.Bilevel{Chains: []*hypergrad.Chain{chain}, Lambda: wd.Values(), Outer: samplers.NewRMSprop(0.01),
			InnerSteps: 1, HyperSteps: 1, RiskLR: lr, Zeta: 1e-6, Form: hypergrad.SqrtSum, Monitor: true}
		ctx := context.Background()
		t := 0
		return func() error {
			err := b.InnerStep(ctx, t)
			t++
			if p := b.Program(0); p != nil && lastProgram != p {
				if profiling {
					p.Profile(true)
				}
				lastProgram = p
			}
			return err
		}, nil
	}
}

// paperModelOf is the model and dtype of a paper workload's name ("resnet18_wd_inner_f32" →
// "resnet18", float32), or ok = false for other workloads.
func paperModelOf(name string) (model string, dt tensor.Dtype, ok bool) {
	for _, kind := range []string{"_train_", "_hvp_", "_wd_inner_"} {
		if i := strings.Index(name, kind); i > 0 {
			model = name[:i]
			dt = tensor.Float32
			if strings.HasSuffix(name, "_f64") {
				dt = tensor.Float64
			}
			_, ok = paperModels[model]
			return model, dt, ok
		}
	}
	return "", tensor.Float32, false
}

// weightsFile writes the initial weights of a paper workload's model (the builders' seeded
// initialization, so the same as the in-process workload's) for bench/ref.py: a line
// "name d0 d1 …" per parameter, a blank line, then every parameter's values as little-endian
// float32, in order.
func weightsFile(dir, name string) (string, error) {
	model, dt, ok := paperModelOf(name)
	if !ok {
		return "", nil
	}
	path := filepath.Join(dir, fmt.Sprintf("%s_%v.weights", model, dt))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	pm, err := paperModels[model](dt)
	if err != nil {
		return "", err
	}
	var head strings.Builder
	var data []byte
	for _, p := range pm.m.Net().Params() {
		head.WriteString(p.Name)
		for _, d := range p.Value.Shape() {
			fmt.Fprintf(&head, " %d", d)
		}
		head.WriteByte('\n')
		v, err := graph.ToFloat64s(p.Value)
		if err != nil {
			return "", err
		}
		for _, x := range v {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(x)))
		}
	}
	head.WriteByte('\n')
	return path, os.WriteFile(path, append([]byte(head.String()), data...), 0o644)
}

// gradNorm is an Optimizer that records the global gradient norm and moves nothing.
type gradNorm struct{ norm float64 }

func (o *gradNorm) Step(_ []*tensor.Dense, grads []G.Value) error {
	s := 0.0
	for _, g := range grads {
		v, err := graph.ToFloat64s(g)
		if err != nil {
			return err
		}
		for _, x := range v {
			s += x * x
		}
	}
	o.norm = math.Sqrt(s)
	return nil
}

// paperCheck is the loss and global gradient norm of a paper workload's model at its initial
// weights on its batch, through train.Trainer.Step (the optimizer records and does not move).
// Float32 weights enter the float64 model rounded, as bench/ref.py reads them.
func paperCheck(name string) (loss, norm float64, err error) {
	model, dt, ok := paperModelOf(name)
	if !ok {
		return 0, 0, fmt.Errorf("no paper workload %s", name)
	}
	pm, err := paperModels[model](dt)
	if err != nil {
		return 0, 0, err
	}
	for _, p := range pm.m.Net().Params() {
		v, err := graph.ToFloat64s(p.Value)
		if err != nil {
			return 0, 0, err
		}
		for i := range v {
			v[i] = float64(float32(v[i]))
		}
		if err := graph.SetFlat([]*tensor.Dense{p.Value}, v); err != nil {
			return 0, 0, err
		}
	}
	tr, err := train.NewTrainer(pm.m, pm.kind, nil)
	if err != nil {
		return 0, 0, err
	}
	idx := make([]int, pm.batch)
	for i := range idx {
		idx[i] = i
	}
	var gn gradNorm
	r, err := tr.Step(context.Background(), &gn, pm.ds, idx, rand.New(rand.NewPCG(1, 2)))
	return r.Loss, gn.norm, err
}
