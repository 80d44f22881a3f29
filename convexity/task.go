package convexity

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"sync"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/train"
)

// Metric scores a trained model on labelled data; higher is better.
type Metric string

// Metrics.
const (
	Accuracy Metric = "accuracy"
	AUC      Metric = "roc-auc" // binary, or one-vs-rest macro
)

// Candidate is a configuration made concrete: a fresh model and how to train it.
type Candidate struct {
	Model     layers.FeatureModel
	Optimizer samplers.Optimizer
	BatchSize int
}

// Task is a supervised problem whose configurations a white-box search can build, train and
// look inside. Black-box methods see it through Objective.
type Task struct {
	Space search.Space
	// Build makes a fresh model for cfg with weights initialized from seed.
	Build func(cfg search.Config, seed uint64) (*Candidate, error)
	// Train fits the models, Val selects among them, Test (optional) is only reported.
	Train, Val, Test *datasets.Dataset
	Loss             losses.Kind
	Metric           Metric
	Epochs           int                  // epochs of a full training
	Early            *train.EarlyStopping // optional, for full trainings
	Seed             uint64

	mu      sync.Mutex
	reports map[string]Report
}

// Report is what one training of a configuration achieved.
type Report struct {
	Config                search.Config
	Epochs                int
	ValMetric, TestMetric float64 // TestMetric is NaN without test data
	ValLoss               float64
}

// seedFor derives the initialization seed of a configuration, so that every method trains the
// same configuration from the same weights.
func (t *Task) seedFor(cfg search.Config) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%v", t.Seed, cfg.Values)
	return h.Sum64()
}

func (t *Task) score(ctx context.Context, tr *train.Trainer, ds *datasets.Dataset, batch int) (metric, loss float64, err error) {
	res, err := tr.Evaluate(ctx, ds, batch)
	if err != nil {
		return 0, 0, err
	}
	switch t.Metric {
	case AUC:
		metric, err = res.AUC(ds.Y)
	default:
		metric = res.Accuracy
	}
	return metric, res.Loss, err
}

// Fit builds cfg and trains it for the given number of epochs (with the task's early stopping
// when full is set), returning the trained candidate and its trainer.
func (t *Task) Fit(ctx context.Context, cfg search.Config, epochs int, full bool) (*Candidate, *train.Trainer, error) {
	c, err := t.Build(cfg, t.seedFor(cfg))
	if err != nil {
		return nil, nil, err
	}
	tr, err := train.NewTrainer(c.Model, t.Loss, nil)
	if err != nil {
		return nil, nil, err
	}
	tc := train.Config{Epochs: epochs, BatchSize: c.BatchSize, Seed: t.seedFor(cfg) ^ 0x7a11}
	if full && t.Early != nil {
		e := *t.Early
		tc.Early = &e
	}
	val := t.Val
	if tc.Early != nil && tc.Early.Monitor == "loss" {
		val = nil
	}
	if _, err := tr.Fit(ctx, c.Optimizer, t.Train, val, tc); err != nil {
		return nil, nil, err
	}
	return c, tr, nil
}

// Objective is the task as a black-box objective: train for ⌈fidelity·Epochs⌉ epochs and
// return minus the validation metric. Every evaluation's report is kept (see Reports).
func (t *Task) Objective() search.Objective {
	return func(ctx context.Context, cfg search.Config, fidelity float64) (float64, error) {
		epochs := max(1, int(math.Ceil(fidelity*float64(t.Epochs)-1e-9)))
		c, tr, err := t.Fit(ctx, cfg, epochs, fidelity >= 1)
		if err != nil {
			return math.NaN(), err
		}
		r := Report{Config: cfg, Epochs: epochs, TestMetric: math.NaN()}
		if r.ValMetric, r.ValLoss, err = t.score(ctx, tr, t.Val, c.BatchSize); err != nil {
			return math.NaN(), err
		}
		if t.Test != nil {
			if r.TestMetric, _, err = t.score(ctx, tr, t.Test, c.BatchSize); err != nil {
				return math.NaN(), err
			}
		}
		if fidelity >= 1 {
			t.mu.Lock()
			if t.reports == nil {
				t.reports = map[string]Report{}
			}
			t.reports[cfg.String()] = r
			t.mu.Unlock()
		}
		return -r.ValMetric, nil
	}
}

// Report returns the full-training report of cfg, if Objective evaluated it.
func (t *Task) Report(cfg search.Config) (Report, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.reports[cfg.String()]
	return r, ok
}
