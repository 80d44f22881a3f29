package convexity

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/search"
)

// TestAHSCResultHoldsEveryScreening: Run returns every screening in sampling order with its
// μ; one refused by the memory budget is dropped with the reason, and the trials are the N2
// ranked configurations of least μ.
func TestAHSCResultHoldsEveryScreening(t *testing.T) {
	task := mlpTask(4)
	task.Epochs = 2
	task.MaxBytes = 1 << 20
	task.Estimate = func(cfg search.Config) (int64, error) {
		if cfg.Int("width") > 12 {
			return 2 << 20, nil
		}
		return 1 << 10, nil
	}
	a := &AHSC{Task: task, N1: 8, N2: 2}
	res, err := a.Run(context.Background(), rand.New(rand.NewPCG(3, 3)), task.Space, task.Objective())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Screenings) != a.N1 {
		t.Fatalf("%d screenings, want %d", len(res.Screenings), a.N1)
	}
	// The same rng samples the same configurations, in the same order.
	rng := rand.New(rand.NewPCG(3, 3))
	dropped := 0
	for i, s := range res.Screenings {
		cfg, _ := (search.Random{}).Ask(rng, task.Space, nil)
		if cfg.String() != s.Config.String() {
			t.Errorf("screening %d is of %v, want %v", i, s.Config, cfg)
		}
		if s.Config.Int("width") > 12 {
			dropped++
			if !strings.Contains(s.Reason, "--max-mem") || !math.IsNaN(s.Score) {
				t.Errorf("screening %d over the budget: score %v, reason %q", i, s.Score, s.Reason)
			}
			continue
		}
		if s.Reason != "" || !(s.Score > 0) || math.IsInf(s.Score, 0) {
			t.Errorf("screening %d: score %v, reason %q", i, s.Score, s.Reason)
		}
		// μ is the one a single screening of the configuration measures.
		if again := a.Screen(context.Background(), s.Config, nil); again.Score != s.Score {
			t.Errorf("screening %d: μ %v, screened again %v", i, s.Score, again.Score)
		}
	}
	if dropped == 0 || dropped == a.N1 || res.Dropped() != dropped {
		t.Fatalf("%d of %d over the budget, Dropped() = %d: pick another seed", dropped, a.N1, res.Dropped())
	}
	if len(res.Trials) != a.N2 {
		t.Fatalf("%d trials, want %d", len(res.Trials), a.N2)
	}
	worstKept := math.Inf(-1)
	for _, tr := range res.Trials {
		for _, s := range res.Screenings {
			if s.Config.String() == tr.Config.String() {
				worstKept = math.Max(worstKept, s.Score)
			}
		}
	}
	ranked := 0
	for _, s := range res.Screenings {
		if s.Reason == "" && s.Score < worstKept {
			ranked++
		}
	}
	if ranked >= a.N2 {
		t.Errorf("%d ranked screenings have a μ below the kept %v", ranked, worstKept)
	}
}

// TestTaskCrossValidation: with folds, the objective is the mean of the folds' scores (each
// fold evaluated as its own task), the validation loss with ByLoss; test results come only
// at full fidelity, and Observe sees every evaluation, failed ones too.
func TestTaskCrossValidation(t *testing.T) {
	task := mlpTask(6)
	task.Epochs = 3
	task.ByLoss = true
	for k := range 2 {
		f := mlpTask(uint64(10 + 3*k))
		f.Epochs, f.Seed = task.Epochs, task.Seed
		task.Folds = append(task.Folds, f)
	}
	var seen []Evaluation
	task.Observe = func(e Evaluation) { seen = append(seen, e) }
	cfg := task.Space.FromUnit([]float64{0.5, 0.5, 0.5, 0.5})
	v, err := task.Objective()(context.Background(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantMetric, wantLoss := 0.0, 0.0
	for _, f := range task.Folds {
		e := f.Evaluate(context.Background(), cfg, 1)
		if e.Err != nil {
			t.Fatal(e.Err)
		}
		wantMetric += e.ValMetric / 2
		wantLoss += e.ValLoss / 2
	}
	e := seen[0]
	if v != wantLoss || e.Value != v || e.ValLoss != wantLoss || e.ValMetric != wantMetric {
		t.Errorf("objective %v, evaluation %+v; want the folds' mean loss %v and metric %v", v, e, wantLoss, wantMetric)
	}
	if math.IsNaN(e.TestMetric) || math.IsNaN(e.TestLoss) || e.TestAccuracy != e.TestMetric {
		t.Errorf("full fidelity without test results: %+v", e)
	}
	if _, err := task.Objective()(context.Background(), cfg, 0.34); err != nil {
		t.Fatal(err)
	}
	if e := seen[1]; e.Epochs != 2 || !math.IsNaN(e.TestMetric) {
		t.Errorf("a low fidelity: %d epochs, test %v; want 2 and NaN", e.Epochs, e.TestMetric)
	}
	task.MaxBytes, task.Estimate = 1, func(search.Config) (int64, error) { return 2, nil }
	if _, err := task.Objective()(context.Background(), cfg, 1); err == nil || len(seen) != 3 || seen[2].Err == nil ||
		!math.IsNaN(seen[2].Value) {
		t.Errorf("a refused configuration: err %v, observed %+v", err, seen[len(seen)-1])
	}
}

// TestHessianProbesComeFromTheSearchStream: the ByHessian screenings draw their Hutchinson
// probes from the rng Run is given, so one stream gives the same scores and another stream's
// probes give other scores for the same configuration.
func TestHessianProbesComeFromTheSearchStream(t *testing.T) {
	task := mlpTask(7)
	a := &AHSC{Task: task, N1: 2, N2: 1, Rank: ByHessian, HessianRows: 32, HessianSamples: 2}
	run := func() Result {
		res, err := a.Run(context.Background(), rand.New(rand.NewPCG(4, 4)), task.Space, task.Objective())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r1, r2 := run(), run()
	s := r1.Screenings[0]
	if s.Reason != "" || s.Score != r2.Screenings[0].Score {
		t.Fatalf("the same stream screened %+v, then %+v", s, r2.Screenings[0])
	}
	other := a.Screen(context.Background(), s.Config, rand.New(rand.NewPCG(5, 5)))
	if other.Reason != "" || other.Score == s.Score {
		t.Errorf("other probes scored %v (%s), the stream's %v: want another estimate", other.Score, other.Reason, s.Score)
	}
}
