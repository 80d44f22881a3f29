package weightdecay

import (
	"context"
	"math"
	"time"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/hypergrad"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/train"
	G "gorgonia.org/gorgonia"
)

// checkpoint is what one hyper-step logs, as compute_and_log_statistics in weight_decay.py
// (plus the selection images' accuracy, which picks ζ without the test set). The accuracies
// are the protocol's (Config.evaluation); a ResNet under the authors' protocol also logs its
// validation and test accuracy as the clean protocol computes them (eval-mode BatchNorm) in
// valEval and testEval, NaN otherwise: the same weights scored both ways measure what the
// BatchNorm mode alone changes.
type checkpoint struct {
	step                     int
	valAcc, testAcc, selAcc  float64
	testLoss, distance, norm float64
	valEval, testEval        float64
}

// fit is one bilevel optimization: a replicate at one ζ (run_fit in weight_decay.py).
type fit struct {
	replicate int
	zeta      float64
	history   []checkpoint
	seconds   float64
}

// sameCheckpoint tells whether two checkpoints hold the same numbers, NaN equal to NaN (the
// eval-mode accuracies a run does not log).
func sameCheckpoint(a, b checkpoint) bool {
	eq := func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }
	return a.step == b.step && eq(a.valAcc, b.valAcc) && eq(a.testAcc, b.testAcc) && eq(a.selAcc, b.selAcc) &&
		eq(a.testLoss, b.testLoss) && eq(a.distance, b.distance) && eq(a.norm, b.norm) && eq(a.valEval, b.valEval) && eq(a.testEval, b.testEval)
}

func (f fit) final() checkpoint { return f.history[len(f.history)-1] }

// runFit performs one bilevel optimization of the per-entry weight decays λ, from the initial
// weights that seed draws: Algorithm 1 with K = 0, offline (the code's default) or online
// (Algorithm C.3, --online), on Eq. 1 when ζ = 0 and on Eq. 7 otherwise.
func runFit(ctx context.Context, cfg *Config, d *subsets, replicate int, zeta float64, seed uint64) (fit, error) {
	start := time.Now()
	out := fit{replicate: replicate, zeta: zeta}
	m, err := buildModel(cfg, d, seed)
	if err != nil {
		return out, err
	}
	chain, wd, err := NewChain(m, d.train, d.val, cfg.LR)
	if err != nil {
		return out, err
	}
	logCheckpoint, err := newLogger(m, d, cfg, &out.history)
	if err != nil {
		return out, err
	}
	penalty, form := cfg.penalty(zeta)
	b := &hypergrad.Bilevel{
		Chains:     []*hypergrad.Chain{chain},
		Lambda:     wd.Values(),
		Outer:      samplers.NewRMSprop(cfg.OuterLR),
		InnerSteps: cfg.InnerSteps, HyperSteps: cfg.OuterSteps,
		RiskLR: cfg.LR,
		T1T2:   cfg.t1t2(),
		// run_fit scales ζ by η²: offline it steps on X/(2√Y), the gradient of
		// (ζη²/2)·√Σ‖a_t‖²; online on ζη²∇‖a_t‖ at every inner step.
		Zeta:    penalty,
		Form:    form,
		Monitor: true, // Eq. 1 runs report their Fisher distance too (Figure 4.3 uses every run)
		OnHyperStep: func(h hypergrad.HyperStep) error {
			return logCheckpoint(ctx, h)
		},
	}
	if _, err := b.Run(ctx); err != nil {
		return out, err
	}
	out.seconds = time.Since(start).Seconds()
	return out, nil
}

// NewChain states one fit's bilevel problem on model m with full-batch training and validation
// sets, for hypergrad.Bilevel (the benchmarks time this same chain): the inner objective is
// the plain training cross-entropy that Adam at step lr descends, the decay decoupled (applied
// after each Adam step, as run_fit in weight_decay.py); the training risk of the Fisher
// distance and of T1–T2 carries ½Σλθ², whose θ-gradient λ⊙θ is what compute_auxiliary adds to
// the training gradient. λ, one entry per parameter entry, starts at 0.
func NewChain(m layers.FeatureModel, trainSet, valSet *datasets.Dataset, lr float64) (*hypergrad.Chain, *layers.WeightDecay, error) {
	net := m.Net()
	k := m.Head().Out
	xT, yT, err := train.Bind(net, trainSet, k, "train")
	if err != nil {
		return nil, nil, err
	}
	xV, yV, err := train.Bind(net, valSet, k, "val")
	if err != nil {
		return nil, nil, err
	}
	wd, err := layers.NewWeightDecay(net, nil, layers.PerElement, 0)
	if err != nil {
		return nil, nil, err
	}
	ce := func(theta []*G.Node, x, y *G.Node, pass *layers.Pass) (*G.Node, error) {
		var out *G.Node
		err := net.Rebind(theta, func() error {
			logits, err := m.Logits(x, pass)
			if err != nil {
				return err
			}
			out, err = losses.CrossEntropy(logits, y)
			return err
		})
		return out, err
	}
	problem := &hypergrad.Problem{
		Params: net.ParamNodes(),
		Hypers: wd.Nodes(),
		Train: func(theta []*G.Node, _ int) (*G.Node, error) {
			l, err := ce(theta, xT, yT, layers.NewPass(layers.Train))
			if err != nil {
				return nil, err
			}
			pen, err := wd.PenaltyAt(theta)
			if err != nil {
				return nil, err
			}
			return graph.Add(l, pen)
		},
		Val: func(theta []*G.Node) (*G.Node, error) { return ce(theta, xV, yV, layers.NewPass(layers.Train)) },
	}
	var innerPass *layers.Pass
	return &hypergrad.Chain{
		Problem: problem,
		InnerLoss: func(theta []*G.Node, _ int) (*G.Node, error) {
			innerPass = layers.NewPass(layers.Train)
			return ce(theta, xT, yT, innerPass)
		},
		Extra:     func() []*G.Node { return innerPass.StatNodes() },
		AfterRun:  func(p *graph.Program) error { return innerPass.Update(p) },
		Inner:     samplers.NewAdam(lr),
		AfterStep: func() error { return wd.ApplyDecoupled(lr) },
	}, wd, nil
}

// newLogger returns the hyper-step hook that appends a checkpoint to history: the accuracies
// on the validation, selection and test images as cfg's protocol evaluates them, the test
// loss, the regularizer √Σ_t‖a_t‖² and the weight norm.
func newLogger(m layers.FeatureModel, d *subsets, cfg *Config, history *[]checkpoint) (func(context.Context, hypergrad.HyperStep) error, error) {
	ev := cfg.evaluation()
	k := m.Head().Out
	evalVal, err := train.NewEvaluatorMode(m, d.val, k, ev.valBatch, ev.mode)
	if err != nil {
		return nil, err
	}
	evalSel, err := train.NewEvaluatorMode(m, d.sel, k, ev.valBatch, ev.mode)
	if err != nil {
		return nil, err
	}
	evalTest, err := train.NewEvaluatorMode(m, d.test, k, ev.tBatch, ev.mode)
	if err != nil {
		return nil, err
	}
	// The BatchNorm comparison: only a model with BatchNorm has one, only a protocol that
	// does not already evaluate in eval mode needs it.
	var cleanVal, cleanTest *train.Evaluator
	if cfg.resnet() && ev.mode != layers.Eval {
		if cleanVal, err = train.NewEvaluator(m, d.val, k, cleanBatch); err != nil {
			return nil, err
		}
		if cleanTest, err = train.NewEvaluator(m, d.test, k, cleanBatch); err != nil {
			return nil, err
		}
	}
	return func(ctx context.Context, h hypergrad.HyperStep) error {
		c := checkpoint{step: h.Step, distance: h.Distance, valEval: math.NaN(), testEval: math.NaN()}
		var err error
		if c.valAcc, _, err = evalVal.Evaluate(ctx); err != nil {
			return err
		}
		if c.selAcc, _, err = evalSel.Evaluate(ctx); err != nil {
			return err
		}
		if c.testAcc, c.testLoss, err = evalTest.Evaluate(ctx); err != nil {
			return err
		}
		if cleanVal != nil {
			if c.valEval, _, err = cleanVal.Evaluate(ctx); err != nil {
				return err
			}
			if c.testEval, _, err = cleanTest.Evaluate(ctx); err != nil {
				return err
			}
		}
		c.norm = weightNorm(m.Net())
		*history = append(*history, c)
		return nil
	}, nil
}

func weightNorm(net *layers.Net) float64 {
	s := 0.0
	for _, p := range net.Params() {
		v, _ := graph.ToFloat64s(p.Value)
		for _, x := range v {
			s += x * x
		}
	}
	return math.Sqrt(s)
}
