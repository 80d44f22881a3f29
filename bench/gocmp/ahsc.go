package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"gorgonia.org/tensor"
)

// The AHSC figures use the OpenML MLP space of the AHSC paper (Table 2: depth 1..4, width
// 2^4..2^10, batch 2^2..2^8, learning rate 10^-5..10^0; experiments/ahsc_data.go) on the
// embedded breast-cancer table (569 rows, 30 features; 60% training split, standardized),
// binary cross-entropy, float64 as the experiments run it.

func openMLSpace(maxLog2Width int) search.Space {
	return search.Space{
		search.IntParam("depth", 1, 4, false),
		search.IntParam("log2_width", 4, maxLog2Width, false),
		search.IntParam("log2_batch_size", 2, 8, false),
		search.IntParam("log10_learning_rate", -5, 0, false),
	}
}

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

func openMLBuild(train *datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) {
	return func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
		net, err := layers.NewNet(tensor.Float64, seed)
		if err != nil {
			return nil, err
		}
		hidden := make([]int, cfg.Int("depth"))
		for i := range hidden {
			hidden[i] = 1 << cfg.Int("log2_width")
		}
		m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: train.D, Hidden: hidden, Out: 1})
		if err != nil {
			return nil, err
		}
		batch := min(1<<cfg.Int("log2_batch_size"), train.N)
		return &convexity.Candidate{Model: m, Optimizer: samplers.NewAdam(math.Pow(10, float64(cfg.Int("log10_learning_rate")))), BatchSize: batch}, nil
	}
}

// muPerBatch is the mean over n configurations of the time convexity.StrongConvexity takes
// per mini-batch (the AHSC paper: 0.03 s/batch/config on 4 vCPUs), in ms.
func muPerBatch(n int) (float64, error) {
	train, _, err := breastSplits()
	if err != nil {
		return 0, err
	}
	build := openMLBuild(train)
	space := openMLSpace(10)
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
	task := &convexity.Task{Space: openMLSpace(maxLog2Width), Build: openMLBuild(train), Train: train, Val: val,
		Loss: losses.Binary, Metric: convexity.AUC, Epochs: 1, Seed: 3}
	a := &convexity.AHSC{Task: task, N1: n1, N2: 1, Workers: workers}
	obj := func(context.Context, search.Config, float64) (float64, error) { return 0, nil }
	t0 := time.Now()
	if _, err := a.Search(context.Background(), rand.New(rand.NewPCG(5, 5)), task.Space, obj, 0); err != nil {
		return 0, err
	}
	el := time.Since(t0)
	for _, s := range a.Screen {
		if s.Err != "" && !math.IsNaN(s.Score) {
			return 0, fmt.Errorf("screening: %s", s.Err)
		}
	}
	return el, nil
}
