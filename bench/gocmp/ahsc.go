package main

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/search"
	"gorgonia.org/tensor"
)

// The AHSC figures time the experiment's own OpenML MLP space and builder (the AHSC paper's
// Table 2: depth 1..4, width 2^4..2^10, batch 2^2..2^8, learning rate 10^-5..10^0;
// ahsc.OpenMLSpace and ahsc.OpenMLBuild) on the embedded breast-cancer table (569 rows, 30
// features; 60% training split, standardized), binary cross-entropy, in float64: breast is
// one of Bayesmark's sets, which the experiment runs in float64 (its OpenML sets run in
// float32, see ahsc.Config.Dtype), and float64 keeps the figures comparable across revisions.

func breastSplits() (train, val *datasets.Dataset, err error) {
	d, err := datasets.LoadEmbedded("breast")
	if err != nil {
		return nil, nil, err
	}
	parts, err := datasets.Split(d, rand.New(rand.NewPCG(7, 7)), 0.6, 0.2, 0.2)
	if err != nil {
		return nil, nil, err
	}
	st, err := datasets.FitStandardizer(parts[0])
	if err != nil {
		return nil, nil, err
	}
	if train, err = st.Transform(parts[0]); err != nil {
		return nil, nil, err
	}
	if val, err = st.Transform(parts[1]); err != nil {
		return nil, nil, err
	}
	return train, val, nil
}

// muPerBatch is the mean over n configurations of the time convexity.StrongConvexity takes
// per mini-batch (the AHSC paper: 0.03 s/batch/config on 4 vCPUs), in ms.
func muPerBatch(n int) (float64, error) {
	train, _, err := breastSplits()
	if err != nil {
		return 0, err
	}
	build := ahsc.OpenMLBuild(2, tensor.Float64)(train)
	space := ahsc.OpenMLSpace(10)
	rng := rand.New(rand.NewPCG(11, 11))
	ctx := context.Background()
	total := 0.0
	for i := 0; i < n; i++ {
		cfg, err := (search.Random{}).Ask(rng, space, nil)
		if err != nil {
			return 0, err
		}
		c, err := build(cfg, uint64(i))
		if err != nil {
			return 0, err
		}
		t0 := time.Now()
		if _, err := convexity.StrongConvexity(ctx, c.Model, train, convexity.MuOptions{BatchSize: c.BatchSize}); err != nil {
			return 0, err
		}
		el := time.Since(t0)
		batches := (train.N + c.BatchSize - 1) / c.BatchSize
		total += el.Seconds() * 1e3 / float64(batches)
	}
	return total / float64(n), nil
}

// screenTime runs AHSC's screening (one-epoch training and μ of n1 configurations; the full
// trainings are skipped by an objective that returns at once) on the given number of workers.
func screenTime(n1, maxLog2Width, workers int) (time.Duration, error) {
	train, val, err := breastSplits()
	if err != nil {
		return 0, err
	}
	task := &convexity.Task{Space: ahsc.OpenMLSpace(maxLog2Width), Build: ahsc.OpenMLBuild(2, tensor.Float64)(train), Train: train, Val: val,
		Loss: losses.Binary, Metric: convexity.AUC, Epochs: 1, Seed: 3}
	a := &convexity.AHSC{Task: task, N1: n1, N2: 1, Workers: workers}
	obj := func(context.Context, search.Config, float64) (float64, error) { return 0, nil }
	t0 := time.Now()
	// Screenings dropped with a Reason (a failed or not strongly convex configuration) are
	// part of what AHSC does, not a failure of the measurement.
	if _, err := a.Run(context.Background(), rand.New(rand.NewPCG(5, 5)), task.Space, obj); err != nil {
		return 0, err
	}
	el := time.Since(t0)
	return el, nil
}
