package convexity

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/train"
	"gorgonia.org/tensor"
)

func blobs(seed uint64, n, k, d int) *datasets.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	ds := &datasets.Dataset{Name: "blobs", N: n * k, D: d, Shape: []int{d}}
	for c := 0; c < k; c++ {
		ds.Classes = append(ds.Classes, string(rune('a'+c)))
	}
	for i := 0; i < n*k; i++ {
		c := i % k
		for j := 0; j < d; j++ {
			centre := 0.0
			if j%k == c {
				centre = 1.5
			}
			ds.X = append(ds.X, centre+rng.NormFloat64())
		}
		ds.Y = append(ds.Y, c)
	}
	return ds
}

func mlpTask(seed uint64) *Task {
	space := search.Space{
		search.IntParam("depth", 1, 2, false),
		search.IntParam("width", 4, 32, true),
		search.FloatParam("lr", 1e-4, 1e-1, true),
		search.CategoricalParam("batch", "8", "32"),
	}
	return &Task{
		Space: space, Train: blobs(seed, 40, 3, 5), Val: blobs(seed+1, 20, 3, 5), Test: blobs(seed+2, 20, 3, 5),
		Metric: Accuracy, Epochs: 8, Seed: seed,
		Build: func(cfg search.Config, s uint64) (*Candidate, error) {
			net, err := layers.NewNet(tensor.Float64, s)
			if err != nil {
				return nil, err
			}
			hidden := make([]int, cfg.Int("depth"))
			for i := range hidden {
				hidden[i] = cfg.Int("width")
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 5, Hidden: hidden, Out: 3})
			if err != nil {
				return nil, err
			}
			bs := 8
			if cfg.Choice("batch") == "32" {
				bs = 32
			}
			return &Candidate{Model: m, Optimizer: samplers.NewAdam(cfg.Float("lr")), BatchSize: bs}, nil
		},
	}
}

func TestAHSCFindsAGoodConfigurationDeterministically(t *testing.T) {
	run := func(workers int) ([]Screened, []search.Trial) {
		task := mlpTask(3)
		a := &AHSC{Task: task, N1: 8, N2: 3, Workers: workers}
		res, err := a.Run(context.Background(), rand.New(rand.NewPCG(1, 2)), task.Space, task.Objective())
		if err != nil {
			t.Fatal(err)
		}
		return res.Screenings, res.Trials
	}
	s1, t1 := run(1)
	s2, t2 := run(2)
	for i := range s1 {
		if s1[i].Score != s2[i].Score && !(math.IsNaN(s1[i].Score) && math.IsNaN(s2[i].Score)) {
			t.Fatalf("screening %d: μ %v with 1 worker, %v with 2", i, s1[i].Score, s2[i].Score)
		}
	}
	if len(t1) != 3 || len(t2) != 3 {
		t.Fatalf("%d and %d full trainings, want 3", len(t1), len(t2))
	}
	for i := range t1 {
		if t1[i].Value != t2[i].Value || t1[i].Config.String() != t2[i].Config.String() {
			t.Fatalf("trial %d differs between worker counts", i)
		}
	}
	// The kept configurations are the three lowest μ among the screened ones.
	best, err := search.Best(t1)
	if err != nil {
		t.Fatal(err)
	}
	if -best.Value < 0.8 {
		t.Errorf("best validation accuracy %v", -best.Value)
	}
	kept := map[string]bool{}
	for _, tr := range t1 {
		kept[tr.Config.String()] = true
	}
	maxKept, minDropped := math.Inf(-1), math.Inf(1)
	for _, s := range s1 {
		if s.Reason != "" {
			continue
		}
		if kept[s.Config.String()] {
			maxKept = math.Max(maxKept, s.Score)
		} else {
			minDropped = math.Min(minDropped, s.Score)
		}
	}
	if maxKept > minDropped {
		t.Errorf("kept a configuration with μ %v above a dropped one with μ %v", maxKept, minDropped)
	}
}

func TestAHSCAblations(t *testing.T) {
	for _, rank := range []Ranking{ByValLoss, ByHessian} {
		task := mlpTask(5)
		var evals []Evaluation
		task.Observe = func(e Evaluation) { evals = append(evals, e) }
		a := &AHSC{Task: task, N1: 4, N2: 2, Rank: rank, HessianRows: 32, HessianSamples: 4}
		res, err := a.Run(context.Background(), rand.New(rand.NewPCG(2, 2)), task.Space, task.Objective())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Trials) != 2 || a.Name() == "ahsc" {
			t.Errorf("%v: %d trials, name %s", rank, len(res.Trials), a.Name())
		}
		for _, s := range res.Screenings {
			if s.Reason == "" && !(s.Score > 0) {
				t.Errorf("%v: score %v", rank, s.Score)
			}
		}
		// The full trainings went through the task's objective, which reported them.
		if len(evals) != 2 || evals[0].Config.String() != res.Trials[0].Config.String() || math.IsNaN(evals[0].TestMetric) ||
			evals[0].Value != res.Trials[0].Value {
			t.Errorf("%v: observed %+v for the trials %+v", rank, evals, res.Trials)
		}
	}
}

// EarlyAtEveryFidelity gives a rung the task's early stopping: with a min_delta no epoch can
// meet and patience 1, a 20-epoch rung stops after 2 epochs, as a 2-epoch rung trains.
func TestEarlyAtEveryFidelity(t *testing.T) {
	ctx := context.Background()
	task := mlpTask(5)
	task.Epochs = 40
	task.Early = &train.EarlyStopping{Monitor: "loss", Patience: 1, MinDelta: 1e9}
	cfg, err := (search.Random{}).Ask(rand.New(rand.NewPCG(1, 1)), task.Space, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := task.Evaluate(ctx, cfg, 0.5)
	two := task.Evaluate(ctx, cfg, 2.0/40)
	task.EarlyAtEveryFidelity = true
	stopped := task.Evaluate(ctx, cfg, 0.5)
	for _, e := range []Evaluation{full, two, stopped} {
		if e.Err != nil {
			t.Fatal(e.Err)
		}
	}
	if stopped.ValLoss != two.ValLoss {
		t.Errorf("an early-stopped 20-epoch rung: validation loss %v, want the 2-epoch rung's %v", stopped.ValLoss, two.ValLoss)
	}
	if full.ValLoss == two.ValLoss {
		t.Errorf("without the flag the 20-epoch rung stopped early too (validation loss %v)", full.ValLoss)
	}
}

// TestCandidateFit checks that a Candidate with its own Fit trains in place of the task's
// loop: on the task's training data (every fold's own), for the epochs asked, whatever the
// task's Holdout and early stopping; the task scores the model it leaves, and AHSC screens
// through it.
func TestCandidateFit(t *testing.T) {
	ctx := context.Background()
	task := mlpTask(6)
	type call struct {
		rows, epochs int
	}
	var calls []call
	build := task.Build
	task.Build = func(cfg search.Config, s uint64) (*Candidate, error) {
		c, err := build(cfg, s)
		if err != nil {
			return nil, err
		}
		c.Optimizer = nil // never used
		c.Fit = func(_ context.Context, data *datasets.Dataset, epochs int) error {
			calls = append(calls, call{data.N, epochs})
			// "training": the head's kernel set to one constant (equal logits), which the scores see
			d := c.Model.Head().W.Value.Data().([]float64)
			for i := range d {
				d[i] = 0.1
			}
			return nil
		}
		return c, nil
	}
	task.Holdout = func(search.Config, *datasets.Dataset) (*datasets.Dataset, *datasets.Dataset, *train.EarlyStopping, error) {
		t.Fatal("Holdout called for a candidate with its own Fit")
		return nil, nil, nil, nil
	}
	task.Early = &train.EarlyStopping{Monitor: "val_loss", Patience: 1}
	cfg, err := (search.Random{}).Ask(rand.New(rand.NewPCG(2, 1)), task.Space, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := task.Evaluate(ctx, cfg, 1)
	if e.Err != nil {
		t.Fatal(e.Err)
	}
	if len(calls) != 1 || calls[0] != (call{task.Train.N, task.Epochs}) {
		t.Fatalf("Fit calls %v; want one on the %d training rows for %d epochs", calls, task.Train.N, task.Epochs)
	}
	// equal columns predict every class equally (up to the biases): log loss near log 3
	if math.Abs(e.ValLoss-math.Log(3)) > 0.5 {
		t.Errorf("validation loss %v; want about log 3 = %v from the constant head", e.ValLoss, math.Log(3))
	}
	calls = nil
	a := &AHSC{Task: task, N1: 3, N2: 1}
	if _, err := a.Run(ctx, rand.New(rand.NewPCG(3, 3)), task.Space, task.Objective()); err != nil {
		t.Fatal(err)
	}
	oneEpoch := 0
	for _, c := range calls {
		if c.epochs == 1 {
			oneEpoch++
		}
	}
	if oneEpoch != 3 {
		t.Errorf("AHSC's screenings: %d one-epoch fits, want 3 (calls %v)", oneEpoch, calls)
	}
}
