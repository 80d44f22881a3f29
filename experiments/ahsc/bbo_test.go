package ahsc

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
)

// TestBBOSearch checks the authors' Bayesmark optimizer's protocol: 15 calls, each screening
// 30 fresh configurations on breast cancer's 455-row training part and evaluating exactly the
// one of least score (the largest −ratio/n), whatever the objective says; and that a screening
// score is the minimum over batches of the ratio, divided by the 455 rows.
func TestBBOSearch(t *testing.T) {
	breast, err := datasets.LoadEmbedded("breast")
	if err != nil {
		t.Fatal(err)
	}
	if tr := bboSplit(breast, rand.New(rand.NewPCG(1, 1))); tr.N != 455 {
		t.Fatalf("training part of 569 rows: %d rows, want 455 (test_size=0.2 rounds the test part up)", tr.N)
	}
	var evaluated []string
	obj := func(_ context.Context, cfg search.Config, _ float64) (float64, error) {
		evaluated = append(evaluated, cfg.String())
		return float64(len(evaluated)), nil // the objective never steers the optimizer
	}
	trials, screened, err := bboSearch(context.Background(), AuthorsBayesmarkSpace(), obj, rand.New(rand.NewPCG(7, 8)), 1, func(b Builder) Builder { return b }, convexity.MinOverBatches)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != bboCalls || len(screened) != bboCalls*bboPerCall || len(evaluated) != bboCalls {
		t.Fatalf("%d trials, %d screenings, %d evaluations; want %d, %d, %d", len(trials), len(screened), len(evaluated), bboCalls, bboCalls*bboPerCall, bboCalls)
	}
	for c := 0; c < bboCalls; c++ {
		low, best := math.Inf(1), ""
		for _, s := range screened[c*bboPerCall : (c+1)*bboPerCall] {
			if s.Reason == "" && s.Score < low {
				low, best = s.Score, s.Config.String()
			}
		}
		if best == "" || trials[c].Config.String() != best || evaluated[c] != best {
			t.Errorf("call %d evaluated %s, want the least score's %s", c+1, evaluated[c], best)
		}
	}

	// one screening by hand: μ = min over batches of ‖a_B‖/‖W‖, over the 455 training rows
	rng := rand.New(rand.NewPCG(3, 3))
	train := bboSplit(breast, rng)
	space := AuthorsBayesmarkSpace()
	cfg, err := (search.Random{}).Ask(rng, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Values[space.Index("hidden_layer_sizes")], cfg.Values[space.Index("batch_size")] = 60, 100
	task := &convexity.Task{Space: space, Build: bboBuild(train), Train: train, Loss: "cross-entropy",
		Metric: convexity.Accuracy, Epochs: 1, Seed: 5}
	c, _, err := task.Fit(context.Background(), cfg, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	minOnly, err := convexity.StrongConvexity(context.Background(), c.Model, train, convexity.MuOptions{BatchSize: 100, Reduce: convexity.MinOverBatches})
	if err != nil {
		t.Fatal(err)
	}
	perSample, err := convexity.StrongConvexity(context.Background(), c.Model, train, convexity.MuOptions{BatchSize: 100, Reduce: convexity.MinOverBatches, PerSample: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(perSample - minOnly/455); d > 1e-12*minOnly || !(minOnly > 0) {
		t.Errorf("per-sample μ %v, want %v / 455", perSample, minOnly)
	}
}

// TestBBOOnlyOnBayesmark: the authors' Bayesmark optimizer refuses the other tables before
// anything runs.
func TestBBOOnlyOnBayesmark(t *testing.T) {
	finish := func(d string) error {
		cfg, err := Experiment().Configure(experiments.Quick, map[string]string{"dataset": d, "methods": "ahsc,ahsc-bbo"})
		if err != nil {
			return err
		}
		return cfg.Finish(experiments.Quick)
	}
	for _, d := range []string{"blood-transfusion", "all-tabular", "mnist"} {
		if err := finish(d); err == nil || !strings.Contains(err.Error(), "ahsc-bbo") {
			t.Errorf("ahsc-bbo on %s: error %v, want one naming ahsc-bbo", d, err)
		}
	}
	if err := finish("wine"); err != nil {
		t.Errorf("ahsc-bbo on wine: %v", err)
	}
}

// TestBBOScreenOption: --bbo-screen picks ahsc-bbo's reduction and is part of the run's
// identity, except committed, stored as "" so that the runs stored before the flag keep
// their identity; it is refused without ahsc-bbo and for unknown values.
func TestBBOScreenOption(t *testing.T) {
	e := Experiment()
	identity := func(flags map[string]string) (string, *Config, error) {
		cfg, err := e.Configure(experiments.Quick, flags)
		if err != nil {
			return "", nil, err
		}
		opt, err := e.Resolve(experiments.Options{Preset: experiments.Quick, Seed: 1, Config: cfg})
		if err != nil {
			return "", nil, err
		}
		id, err := experiments.Identity("ahsc", opt)
		return id, opt.Config.(*Config), err
	}
	base := map[string]string{"dataset": "iris", "methods": "ahsc-bbo"}
	with := func(v string) map[string]string {
		m := map[string]string{"bbo-screen": v}
		for k, x := range base {
			m[k] = x
		}
		return m
	}
	none, _, err := identity(base)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, c := range []struct {
		v      string
		stored string
		reduce convexity.Reduce
	}{{"committed", "", convexity.MinOverBatches}, {"max", "max", convexity.MaxOverBatches}, {"min-full", "min-full", convexity.MinOverFullBatches}} {
		id, cfg, err := identity(with(c.v))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.BBOScreen != c.stored || cfg.bboReduce() != c.reduce {
			t.Errorf("%s: stored %q, reduce %v; want %q, %v", c.v, cfg.BBOScreen, cfg.bboReduce(), c.stored, c.reduce)
		}
		ids[c.v] = id
	}
	if ids["committed"] != none || ids["max"] == none || ids["min-full"] == none || ids["max"] == ids["min-full"] {
		t.Errorf("identities %v, without the flag %s: committed must keep it, the others differ", ids, none)
	}
	if _, _, err := identity(with("median")); err == nil || !strings.Contains(err.Error(), "bbo-screen") {
		t.Errorf("--bbo-screen median: %v", err)
	}
	if _, _, err := identity(map[string]string{"dataset": "iris", "methods": "ahsc", "bbo-screen": "max"}); err == nil || !strings.Contains(err.Error(), "applies to method ahsc-bbo") {
		t.Errorf("--bbo-screen without ahsc-bbo: %v", err)
	}
}

// TestBBOScreenReductions runs ahsc-bbo's screenings under the three reductions from the same
// stream: the same configurations and trained models, so every screening's score orders as
// min over all batches ≤ min over the full batches ≤ max over batches, and the partial batch
// makes the first strictly smaller somewhere.
func TestBBOScreenReductions(t *testing.T) {
	obj := func(context.Context, search.Config, float64) (float64, error) { return 0, nil }
	scores := map[convexity.Reduce][]convexity.Screened{}
	for _, r := range []convexity.Reduce{convexity.MinOverBatches, convexity.MinOverFullBatches, convexity.MaxOverBatches} {
		_, s, err := bboSearch(context.Background(), AuthorsBayesmarkSpace(), obj, rand.New(rand.NewPCG(5, 6)), 2, func(b Builder) Builder { return b }, r)
		if err != nil {
			t.Fatal(err)
		}
		scores[r] = s
	}
	all, full, mx := scores[convexity.MinOverBatches], scores[convexity.MinOverFullBatches], scores[convexity.MaxOverBatches]
	strict := 0
	for i := range all {
		if all[i].Config.String() != full[i].Config.String() || all[i].Config.String() != mx[i].Config.String() {
			t.Fatalf("screening %d screened different configurations", i)
		}
		if all[i].Reason != "" || full[i].Reason != "" || mx[i].Reason != "" {
			continue
		}
		if !(all[i].Score <= full[i].Score && full[i].Score <= mx[i].Score) {
			t.Errorf("screening %d (%s): min %v, min over full %v, max %v", i, all[i].Config, all[i].Score, full[i].Score, mx[i].Score)
		}
		if all[i].Score < full[i].Score {
			strict++
		}
	}
	if strict == 0 {
		t.Error("the partial last batch never decided the minimum")
	}
}
