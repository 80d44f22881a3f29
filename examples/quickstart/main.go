// Command quickstart is the README's library tour as one program: a user-defined model is
// trained, AHSC searches its width and learning rate, and the hypergradient of the
// validation loss with respect to a weight decay is taken through a training step.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
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

// mlp is a user-defined model: a Net, and Features and a linear Head (a layers.FeatureModel,
// which AHSC's strong-convexity estimate reads).
type mlp struct {
	net          *layers.Net
	hidden, head *layers.Linear
}

func newMLP(seed uint64, in, width, classes int) (*mlp, error) {
	net, err := layers.NewNet(tensor.Float64, seed)
	if err != nil {
		return nil, err
	}
	hidden, err := layers.NewLinear(net, "hidden", in, width, layers.LinearConfig{})
	if err != nil {
		return nil, err
	}
	head, err := layers.NewLinear(net, "head", width, classes, layers.LinearConfig{})
	return &mlp{net: net, hidden: hidden, head: head}, err
}

func (m *mlp) Net() *layers.Net     { return m.net }
func (m *mlp) Head() *layers.Linear { return m.head }
func (m *mlp) Features(x *G.Node, p *layers.Pass) (*G.Node, error) {
	h, err := m.hidden.Forward(x, p)
	if err != nil {
		return nil, err
	}
	return graph.ReLU(h)
}
func (m *mlp) Logits(x *G.Node, p *layers.Pass) (*G.Node, error) { return layers.Logits(m, x, p) }

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer) error {
	// The embedded iris table, split 60/20/20 and standardized on the training part.
	iris, err := datasets.LoadEmbedded("iris")
	if err != nil {
		return err
	}
	parts, err := datasets.Split(iris, rand.New(rand.NewPCG(1, 1)), 0.6, 0.2, 0.2)
	if err != nil {
		return err
	}
	st, err := datasets.FitStandardizer(parts[0])
	if err != nil {
		return err
	}
	for i := range parts {
		if parts[i], err = st.Transform(parts[i]); err != nil {
			return err
		}
	}
	trainSet, valSet, testSet := parts[0], parts[1], parts[2]
	k := len(iris.Classes)

	// 1. Train the model, and score it on the test set.
	m, err := newMLP(1, iris.D, 16, k)
	if err != nil {
		return err
	}
	hist, err := train.Fit(ctx, m, samplers.NewAdam(0.01), trainSet, valSet, train.Config{Epochs: 30, BatchSize: 16, Seed: 1})
	if err != nil {
		return err
	}
	eval, err := train.NewEvaluator(m, testSet, k, 0)
	if err != nil {
		return err
	}
	acc, _, err := eval.Evaluate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "trained %d epochs: test accuracy %.2f\n", len(hist.Epochs), acc)

	// 2. AHSC over a space: screen N1 configurations by one epoch and μ, fully train the
	// N2 flattest.
	task := &convexity.Task{
		Space: search.Space{search.IntParam("width", 4, 32, true), search.FloatParam("lr", 1e-3, 1e-1, true)},
		Build: func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
			m, err := newMLP(seed, iris.D, cfg.Int("width"), k)
			return &convexity.Candidate{Model: m, Optimizer: samplers.NewAdam(cfg.Float("lr")), BatchSize: 16}, err
		},
		Train: trainSet, Val: valSet, Test: testSet, Metric: convexity.Accuracy, Epochs: 10, Seed: 1,
	}
	ahsc := &convexity.AHSC{Task: task, N1: 8, N2: 2}
	res, err := ahsc.Run(ctx, rand.New(rand.NewPCG(2, 2)), task.Space, task.Objective())
	if err != nil {
		return err
	}
	best, err := search.Best(res.Trials)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "AHSC screened %d, trained %d: best %v\n", len(res.Screenings), len(res.Trials), best.Config)

	// 3. The hypergradient dC/dλ of the validation loss C through one step of training on
	// the loss plus ½λ‖θ‖², at the trained weights (Luketina et al.'s T1–T2).
	net := m.Net()
	wd, err := layers.NewWeightDecay(net, nil, layers.Shared, 1e-3)
	if err != nil {
		return err
	}
	xT, yT, err := train.Bind(net, trainSet, k, "train")
	if err != nil {
		return err
	}
	xV, yV, err := train.Bind(net, valSet, k, "val")
	if err != nil {
		return err
	}
	// risk builds the cross-entropy at parameters theta: the estimator calls it at computed
	// ones (θ after a step), so the forward pass is rebound to them.
	risk := func(theta []*G.Node, x, y *G.Node) (loss *G.Node, err error) {
		err = net.Rebind(theta, func() error {
			logits, err := m.Logits(x, layers.NewPass(layers.Eval))
			if err != nil {
				return err
			}
			loss, err = losses.CrossEntropy(logits, y)
			return err
		})
		return loss, err
	}
	problem := &hypergrad.Problem{
		Params: net.ParamNodes(), Hypers: wd.Nodes(),
		Train: func(theta []*G.Node, _ int) (*G.Node, error) {
			l, err := risk(theta, xT, yT)
			if err != nil {
				return nil, err
			}
			penalty, err := wd.PenaltyAt(theta)
			if err != nil {
				return nil, err
			}
			return graph.Add(l, penalty)
		},
		Val: func(theta []*G.Node) (*G.Node, error) { return risk(theta, xV, yV) },
	}
	est, err := hypergrad.NewT1T2(problem, 0.1)
	if err != nil {
		return err
	}
	e, err := est.Estimate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "validation loss %.4f, dC/dλ %.3g\n", e.Value, e.Grad[0][0])
	return nil
}
