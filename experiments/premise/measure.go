package premise

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/train"
)

type f64 = experiments.F64

// point is one epoch of a Figure 1 training: the model's losses and metric after it.
type point struct {
	Epoch       int `json:"epoch"`
	TrainLoss   f64 `json:"train_loss"`
	ValLoss     f64 `json:"val_loss"`
	TestLoss    f64 `json:"test_loss"`
	TrainMetric f64 `json:"train_metric"`
	TestMetric  f64 `json:"test_metric"`
}

// record is one configuration's measurements: a cell's stored output.
type record struct {
	Dataset string `json:"dataset"`
	Index   int    `json:"index"`
	Config  string `json:"config"`
	Metric  string `json:"metric"`
	Params  int    `json:"params"`
	Dtype   string `json:"dtype"` // what the model computes in (the ahsc experiment's choice)
	// Mu is the one-epoch strong convexity as AHSC screens by it; the Hessian measures are
	// of the same model's training loss.
	Mu          f64  `json:"mu"`
	Trace       f64  `json:"hessian_trace"`
	Frobenius   f64  `json:"hessian_frobenius"`
	TopEig      f64  `json:"hessian_top_eig"`
	TraceSE     f64  `json:"hessian_trace_se"`
	FrobeniusSE f64  `json:"hessian_frobenius_se"`
	Exact       bool `json:"exact,omitempty"`
	Products    int  `json:"hessian_products"`
	// The fully trained model's scores.
	TrainMetric f64 `json:"train_metric"`
	ValMetric   f64 `json:"val_metric"`
	TestMetric  f64 `json:"test_metric"`
	TrainLoss   f64 `json:"train_loss"`
	TestLoss    f64 `json:"test_loss"`
	// Seconds is the whole cell's time, HessianSeconds the Hessian measures'.
	Seconds        f64    `json:"seconds"`
	HessianSeconds f64    `json:"hessian_seconds"`
	Err            string `json:"error,omitempty"`
	// Curves are the Figure 1 training's epochs (the figure's dataset only), CurvesErr why
	// that training stopped short.
	Curves    []point `json:"curves,omitempty"`
	CurvesErr string  `json:"curves_error,omitempty"`
}

// gap is the generalization gap: the training metric minus the test metric.
func (r record) gap() float64 { return float64(r.TrainMetric - r.TestMetric) }

// measure samples configuration index of a dataset from the cell's seed and measures it: one
// epoch of training as AHSC's screening does, μ there (convexity.StrongConvexity at the
// configuration's batch size, as AHSC.Screen) and the Hessian of the training loss at the
// same weights, then a full training as every method of the ahsc experiment trains
// (Task.Fit, early-stopped) scored on the training, validation and test data; with curves,
// also Figure 1's epoch-by-epoch training. A configuration that fails (diverges, μ not
// positive) is a record with its error, not a failed cell; a cancelled ctx is.
func measure(ctx context.Context, task *convexity.Task, cfg *Config, dataset string, index int, seed uint64, curves bool) (record, error) {
	start := time.Now()
	hp, err := (search.Random{}).Ask(rand.New(rand.NewPCG(seed, 0)), task.Space, nil)
	if err != nil {
		return record{}, err
	}
	nan := f64(math.NaN())
	r := record{Dataset: dataset, Index: index, Config: hp.String(), Metric: string(task.Metric), Mu: nan, Trace: nan,
		Frobenius: nan, TopEig: nan, TraceSE: nan, FrobeniusSE: nan, TrainMetric: nan, ValMetric: nan, TestMetric: nan,
		TrainLoss: nan, TestLoss: nan, HessianSeconds: nan}
	err = r.screen(ctx, task, cfg, hp, rand.New(rand.NewPCG(seed, 1)))
	if err == nil {
		err = r.train(ctx, task, hp)
	}
	if err == nil && curves {
		var cerr error
		r.Curves, cerr = figureCurves(ctx, task, hp, experiments.DeriveSeed(seed, "curves"))
		if cerr != nil {
			r.CurvesErr = cerr.Error()
		}
	}
	r.Seconds = f64(time.Since(start).Seconds())
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if err != nil {
		r.Err = err.Error()
	}
	return r, nil
}

// screen trains hp for one epoch and measures μ and the Hessian there.
func (r *record) screen(ctx context.Context, task *convexity.Task, cfg *Config, hp search.Config, rng *rand.Rand) error {
	c, _, err := task.Fit(ctx, hp, 1, false)
	if err != nil {
		return fmt.Errorf("screening: %w", err)
	}
	r.Params, r.Dtype = c.Model.Net().NumParams(), c.Model.Net().Dtype().String()
	mu, err := convexity.StrongConvexity(ctx, c.Model, task.Train, convexity.MuOptions{BatchSize: c.BatchSize})
	if err != nil {
		return fmt.Errorf("screening: %w", err)
	}
	r.Mu = f64(mu)
	if !(mu > 0) || math.IsInf(mu, 0) {
		return fmt.Errorf("screening: μ = %v is not positive and finite (AHSC drops the configuration)", mu)
	}
	start := time.Now()
	cv, err := convexity.NewTrainingCurvature(c.Model, task, cfg.HessianRows)
	if err != nil {
		return fmt.Errorf("hessian: %w", err)
	}
	h, err := measureHessian(ctx, cv.HVP, cv.Dim(), rng, hessianOptions{exactParams: cfg.ExactParams, probes: cfg.Probes, lanczos: cfg.Lanczos})
	if err != nil {
		return fmt.Errorf("hessian: %w", err)
	}
	r.HessianSeconds = f64(time.Since(start).Seconds())
	r.Trace, r.Frobenius, r.TopEig, r.Exact, r.Products = f64(h.Trace), f64(h.Frobenius), f64(h.TopEig), h.Exact, h.Products
	r.TraceSE, r.FrobeniusSE = f64(h.TraceSE), f64(h.FrobeniusSE)
	return nil
}

// train trains hp fully through the task, as the ahsc experiment's objective does, and scores
// the model.
func (r *record) train(ctx context.Context, task *convexity.Task, hp search.Config) error {
	_, tr, err := task.Fit(ctx, hp, task.Epochs, true)
	if err != nil {
		return fmt.Errorf("full training: %w", err)
	}
	var m, l [3]float64
	for i, ds := range []*datasets.Dataset{task.Train, task.Val, task.Test} {
		if m[i], l[i], err = score(ctx, tr, task, ds); err != nil {
			return fmt.Errorf("scoring: %w", err)
		}
	}
	r.TrainMetric, r.ValMetric, r.TestMetric = f64(m[0]), f64(m[1]), f64(m[2])
	r.TrainLoss, r.TestLoss = f64(l[0]), f64(l[2])
	return nil
}

// score is the task's metric and mean loss of a trained model on ds (convexity.Task scores
// with the same two metrics).
func score(ctx context.Context, tr *train.Trainer, task *convexity.Task, ds *datasets.Dataset) (metric, loss float64, err error) {
	res, err := tr.Evaluate(ctx, ds, task.EvalBatch)
	if err != nil {
		return 0, 0, err
	}
	switch task.Metric {
	case convexity.Accuracy:
		return res.Accuracy, res.Loss, nil
	case convexity.AUC:
		auc, err := res.AUC(ds.Y)
		return auc, res.Loss, err
	}
	return 0, 0, fmt.Errorf("premise: metric %q is not supported", task.Metric)
}

// figureCurves trains hp epoch by epoch for Figure 1: from the screening point (the same one
// epoch, bit for bit), on for up to the task's epochs with its early stopping, scoring the
// model on the training, validation and test data after every epoch. The epochs after the
// first reshuffle from seed, so the curve's end differs from the full training's only by
// the order of the batches. What was traced before an error is returned with it.
func figureCurves(ctx context.Context, task *convexity.Task, hp search.Config, seed uint64) ([]point, error) {
	c, tr, err := task.Fit(ctx, hp, 1, false)
	if err != nil {
		return nil, err
	}
	var pts []point
	snap := func(epoch int) error {
		var m, l [3]float64
		for i, ds := range []*datasets.Dataset{task.Train, task.Val, task.Test} {
			var err error
			if m[i], l[i], err = score(ctx, tr, task, ds); err != nil {
				return err
			}
		}
		pts = append(pts, point{Epoch: epoch, TrainLoss: f64(l[0]), ValLoss: f64(l[1]), TestLoss: f64(l[2]), TrainMetric: f64(m[0]), TestMetric: f64(m[2])})
		return nil
	}
	if err := snap(1); err != nil || task.Epochs == 1 {
		return pts, err
	}
	tc := train.Config{Epochs: task.Epochs - 1, BatchSize: c.BatchSize, Seed: seed,
		OnEpoch: func(m train.EpochMetrics) error { return snap(m.Epoch + 1) }}
	if task.Early != nil {
		e := *task.Early
		tc.Early = &e
	}
	_, err = tr.Fit(ctx, c.Optimizer, task.Train, task.Val, tc)
	return pts, err
}
