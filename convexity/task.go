package convexity

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sync"
	"time"

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

// ErrTooBig is wrapped by the error Fit returns for a configuration whose estimated memory
// exceeds Task.MaxBytes; the configuration is refused before it is built.
var ErrTooBig = errors.New("convexity: configuration too big")

// ErrTrialTimeout is wrapped (together with context.DeadlineExceeded) by the error a trial
// returns when it runs past Task.TrialTimeout.
var ErrTrialTimeout = errors.New("trial timed out")

// Task is a supervised problem whose configurations a white-box search can build, train and
// look inside. Black-box methods see it through Objective.
//
// Every trial of every method, and every AHSC screening, trains through Fit, which enforces
// the task's resource limits: a configuration whose Estimate exceeds MaxBytes is refused
// before Build with an error wrapping ErrTooBig that gives both sizes, and a trial running
// longer than TrialTimeout is stopped with an error wrapping ErrTrialTimeout. Both are
// ordinary trial failures — the search records them (search.Failed, Screened.Err) and goes
// on — whereas cancelling the context passed to the search stops the whole search, which
// then returns ctx.Err().
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

	// MaxBytes is the memory budget of one trial in bytes (the --max-mem flag); 0 means no
	// limit. It is enforced only when Estimate is set.
	MaxBytes int64
	// Estimate returns the bytes cfg's training would hold (layers.EstimateMLPBytes and
	// layers.EstimateConvNetBytes compute it for the package's models without building them).
	Estimate func(cfg search.Config) (int64, error)
	// TrialTimeout bounds one trial — Objective's training and scoring, or an AHSC screening
	// (one-epoch training and its score); 0 means no limit.
	TrialTimeout time.Duration

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

// CheckMemory refuses cfg, with an error wrapping ErrTooBig that gives the estimate and the
// limit, when MaxBytes and Estimate are set and the estimate exceeds MaxBytes.
func (t *Task) CheckMemory(cfg search.Config) error {
	if t.MaxBytes <= 0 || t.Estimate == nil {
		return nil
	}
	need, err := t.Estimate(cfg)
	if err != nil {
		return fmt.Errorf("convexity: estimating the memory of %v: %w", cfg, err)
	}
	if need > t.MaxBytes {
		return fmt.Errorf("%w: %v needs about %s, over the %s limit (--max-mem)", ErrTooBig, cfg, FormatBytes(need), FormatBytes(t.MaxBytes))
	}
	return nil
}

// FormatBytes writes n in binary units with one decimal ("1.2 GiB", "512.0 MiB", "900 B").
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for math.Abs(v) >= unit && i < 5 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[i])
}

// trial runs f under the task's TrialTimeout. If f fails after the timeout expired (and ctx
// itself is still live), the error is replaced by one wrapping ErrTrialTimeout and
// context.DeadlineExceeded; if ctx was cancelled, it is ctx's error, so that the search stops.
func (t *Task) trial(ctx context.Context, f func(ctx context.Context) error) error {
	tctx := ctx
	if t.TrialTimeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, t.TrialTimeout)
		defer cancel()
	}
	err := f(tctx)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case tctx.Err() != nil:
		return fmt.Errorf("convexity: %w after %v (%w)", ErrTrialTimeout, t.TrialTimeout, context.DeadlineExceeded)
	}
	return err
}

// Fit builds cfg and trains it for the given number of epochs (with the task's early stopping
// when full is set), returning the trained candidate and its trainer. It is where every trial
// trains, and enforces the task's limits: a configuration over MaxBytes (by Estimate) is
// refused before it is built (ErrTooBig), and training longer than TrialTimeout is stopped
// (ErrTrialTimeout). When ctx is cancelled, the error is ctx.Err().
func (t *Task) Fit(ctx context.Context, cfg search.Config, epochs int, full bool) (*Candidate, *train.Trainer, error) {
	if err := t.CheckMemory(cfg); err != nil {
		return nil, nil, err
	}
	var c *Candidate
	var tr *train.Trainer
	err := t.trial(ctx, func(ctx context.Context) error {
		var err error
		c, tr, err = t.fit(ctx, cfg, epochs, full)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return c, tr, nil
}

func (t *Task) fit(ctx context.Context, cfg search.Config, epochs int, full bool) (*Candidate, *train.Trainer, error) {
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
//
// An evaluation fails (the search records a failed trial with the error's text) when training
// diverges (train.ErrDiverged: a NaN or infinite loss, gradient or parameter, or a NaN or
// infinite validation loss after training), when the configuration is over the memory budget
// (ErrTooBig) or when it runs past TrialTimeout (ErrTrialTimeout); the whole evaluation,
// scoring included, runs under the timeout.
func (t *Task) Objective() search.Objective {
	return func(ctx context.Context, cfg search.Config, fidelity float64) (float64, error) {
		epochs := max(1, int(math.Ceil(fidelity*float64(t.Epochs)-1e-9)))
		r := Report{Config: cfg, Epochs: epochs, TestMetric: math.NaN()}
		err := t.trial(ctx, func(ctx context.Context) error {
			c, tr, err := t.Fit(ctx, cfg, epochs, fidelity >= 1)
			if err != nil {
				return err
			}
			if r.ValMetric, r.ValLoss, err = t.score(ctx, tr, t.Val, c.BatchSize); err != nil {
				return err
			}
			if math.IsNaN(r.ValLoss) || math.IsInf(r.ValLoss, 0) {
				return fmt.Errorf("convexity: %w: the validation loss is %v after %d epochs", train.ErrDiverged, r.ValLoss, epochs)
			}
			if t.Test != nil {
				if r.TestMetric, _, err = t.score(ctx, tr, t.Test, c.BatchSize); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return math.NaN(), err
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
