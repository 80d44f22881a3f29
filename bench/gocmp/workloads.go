package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/search"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A stepper runs one step of a workload.
type stepper func() error

// goWorkloads are the workloads this program runs in process (and serves in serve mode).
var goWorkloads = map[string]func() (stepper, error){
	"mlp_train_f32": func() (stepper, error) { return trainStep(mlp(tensor.Float32)) },
	"mlp_hvp_f32":   func() (stepper, error) { return hvpStep(mlp(tensor.Float32)) },
	"cnn_train_f32": func() (stepper, error) { return trainStep(cnn(tensor.Float32)) },
	"cnn_hvp_f32":   func() (stepper, error) { return hvpStep(cnn(tensor.Float32)) },
	"mlp_train_f64": func() (stepper, error) { return trainStep(mlp(tensor.Float64)) },
	"cnn_train_f64": func() (stepper, error) { return trainStep(cnn(tensor.Float64)) },
	"hg_plain":      func() (stepper, error) { return hypergradStep(false) },
	"hg_step":       func() (stepper, error) { return hypergradStep(true) },
	"tpe_suggest":   tpeSuggest,
}

const lr = 0.01

// profiling turns on per-op timing of the programs workloads compile (see TestProfileOps);
// lastProgram is the last one compiled.
var (
	profiling   bool
	lastProgram *graph.Program
)

func compile(outs ...*G.Node) (*graph.Program, error) {
	p, err := graph.Compile(outs...)
	if err == nil {
		if profiling {
			p.Profile(true)
		}
		lastProgram = p
	}
	return p, err
}

// sgd returns p ← p − lr·g for the parameters' bound tensors.
func sgd(prog *graph.Program, params, grads []*G.Node) func() error {
	return func() error {
		for i, p := range params {
			gv, err := prog.Value(grads[i])
			if err != nil {
				return err
			}
			if err := axpy(p.Value(), gv, -lr); err != nil {
				return err
			}
		}
		return nil
	}
}

// axpy sets x ← x + a·y for float32 or float64 values.
func axpy(x, y G.Value, a float64) error {
	if x.Dtype() == tensor.Float32 {
		xs, err := graph.Elements[float32](x)
		if err != nil {
			return err
		}
		ys, err := graph.Elements[float32](y)
		if err != nil {
			return err
		}
		for i := range xs {
			xs[i] += float32(a) * ys[i]
		}
		return nil
	}
	xs, err := graph.Elements[float64](x)
	if err != nil {
		return err
	}
	ys, err := graph.Elements[float64](y)
	if err != nil {
		return err
	}
	for i := range xs {
		xs[i] += a * ys[i]
	}
	return nil
}

// trainStep: forward, backward for every parameter, SGD update.
func trainStep(m model) (stepper, error) {
	grads, err := graph.Grad(m.loss, m.params...)
	if err != nil {
		return nil, err
	}
	prog, err := compile(append([]*G.Node{m.loss}, grads...)...)
	if err != nil {
		return nil, err
	}
	update := sgd(prog, m.params, grads)
	ctx := context.Background()
	return func() error {
		if err := prog.Run(ctx); err != nil {
			return err
		}
		return update()
	}, nil
}

// hvpStep: the loss and a Hessian-vector product by double backpropagation.
func hvpStep(m model) (stepper, error) {
	vs := make([]*G.Node, len(m.params))
	for i, p := range m.params {
		vs[i] = input(m.g, fmt.Sprint("v", i), values(p.Dtype(), 100+i, 2, p.Shape()...))
	}
	hv, err := graph.HVP(m.loss, m.params, vs)
	if err != nil {
		return nil, err
	}
	prog, err := compile(append([]*G.Node{m.loss}, hv...)...)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	return func() error { return prog.Run(ctx) }, nil
}

// hypergradStep is the MLP with a per-weight L2 penalty Σ λ⊙θ², train and validation batches
// of 128. plain: the training step (∇_θ L_T, SGD). Otherwise one step of the PAC-Bayes
// bilevel algorithm (package hypergrad): the same training step, the Fisher-distance term
// a = ∇_θ L_T − ∇_θ L_V with its λ-gradient ∇_λ ½‖a‖², and the T1–T2 hypergradient
// ∇_λ C(θ − η∇_θ L_T(θ, λ)), in one program, then the θ and λ updates.
func hypergradStep(hyper bool) (stepper, error) {
	dt := tensor.Float32
	g := G.NewGraph()
	xt := input(g, "xt", values(dt, 1, 2, 128, 784))
	yt := labels(g, dt, "yt", 0, 128, 10)
	xv := input(g, "xv", values(dt, 3, 2, 128, 784))
	yv := labels(g, dt, "yv", 5, 128, 10)
	sizes := []int{784, 256, 256, 10}
	var theta, lambda []*G.Node
	for l := 0; l < 3; l++ {
		theta = append(theta,
			input(g, fmt.Sprint("w", l), values(dt, 10+l, he(sizes[l]), sizes[l], sizes[l+1])),
			input(g, fmt.Sprint("b", l), values(dt, 20+l, 0.1, sizes[l+1])))
		lambda = append(lambda, input(g, fmt.Sprint("lambda", l), values(dt, 40+l, 1e-3, sizes[l], sizes[l+1])))
	}
	risk := func(th []*G.Node, x, y *G.Node) (*G.Node, error) {
		h := x
		for l := 0; l < 3; l++ {
			h = must(graph.Add(must(graph.MatMul(h, th[2*l])), th[2*l+1]))
			if l < 2 {
				h = must(graph.ReLU(h))
			}
		}
		return graph.CrossEntropy(h, y)
	}
	train := func(th []*G.Node) (*G.Node, error) {
		l, err := risk(th, xt, yt)
		if err != nil {
			return nil, err
		}
		for i, lam := range lambda {
			pen, err := graph.Sum(must(graph.Mul(lam, must(graph.Square(th[2*i])))))
			if err != nil {
				return nil, err
			}
			if l, err = graph.Add(l, pen); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
	lt, err := train(theta)
	if err != nil {
		return nil, err
	}
	gt, err := graph.Grad(lt, theta...)
	if err != nil {
		return nil, err
	}
	outs := append([]*G.Node{lt}, gt...)
	var hgrads []*G.Node
	if hyper {
		lv, err := risk(theta, xv, yv)
		if err != nil {
			return nil, err
		}
		gv, err := graph.Grad(lv, theta...)
		if err != nil {
			return nil, err
		}
		a := make([]*G.Node, len(gt))
		for i := range gt {
			a[i] = must(graph.Sub(gt[i], gv[i]))
		}
		half := must(graph.Scale(must(graph.SquaredNorm(a...)), 0.5))
		next := make([]*G.Node, len(theta)) // T1–T2: one symbolic descent step
		for i := range theta {
			next[i] = must(graph.Sub(theta[i], must(graph.Scale(gt[i], lr))))
		}
		c, err := risk(next, xv, yv)
		if err != nil {
			return nil, err
		}
		// The outer objective is the sum: one gradient of it gives the λ step, and the two
		// terms' adjoints meet at the penalty gradient instead of being carried separately.
		if hgrads, err = graph.Grad(must(graph.Add(half, c)), lambda...); err != nil {
			return nil, err
		}
		outs = append(append(outs, half, c), hgrads...)
	}
	prog, err := compile(outs...)
	if err != nil {
		return nil, err
	}
	update := sgd(prog, theta, gt)
	ctx := context.Background()
	return func() error {
		if err := prog.Run(ctx); err != nil {
			return err
		}
		if err := update(); err != nil {
			return err
		}
		for i, h := range hgrads { // λ ← λ − 1e-3·∇_λ(regularizer + risk)
			v, err := prog.Value(h)
			if err != nil {
				return err
			}
			if err := axpy(lambda[i%len(lambda)].Value(), v, -1e-3); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// tpeSpace is the 5-D space of the TPE comparison (bench/ref.py tpe_suggest).
var tpeSpace = search.Space{
	search.FloatParam("lr", 1e-5, 1, true),
	search.FloatParam("momentum", 0, 0.99, false),
	search.FloatParam("weight_decay", 1e-6, 1e-1, true),
	search.IntParam("width", 16, 1024, false),
	search.FloatParam("dropout", 0, 0.8, false),
}

// tpeTrials are 100 completed trials: values from gen, objective a smooth function of them.
func tpeTrials() []search.Trial {
	trials := make([]search.Trial, 100)
	for t := range trials {
		u := make([]float64, len(tpeSpace))
		obj := 0.0
		for d := range u {
			u[d] = gen(50+d, t) + 0.5
			obj += (u[d] - 0.3) * (u[d] - 0.3)
		}
		cfg := tpeSpace.FromUnit(u)
		trials[t] = search.Trial{ID: t, Config: cfg, Value: obj, Fidelity: 1, State: search.Complete}
	}
	return trials
}

// tpeSuggest is one TPE proposal with Optuna's defaults (10 startup trials, 24 candidates,
// γ(n) = min(⌈0.1 n⌉, 25)) given 100 completed trials.
func tpeSuggest() (stepper, error) {
	trials := tpeTrials()
	s := search.TPE{NStartup: 10, NCandidates: 24, Gamma: search.OptunaGamma}
	rng := rand.New(rand.NewPCG(1, 2))
	return func() error {
		_, err := s.Ask(rng, tpeSpace, trials)
		return err
	}, nil
}
