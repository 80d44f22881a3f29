package convexity

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"gorgonia.org/tensor"
)

// divergingTask trains a float32 MLP with SGD (momentum 0.9, batches of 4) at one of six
// learning rates, two of which diverge: on these blobs 300 and 3000 overflow within the first
// epoch (so AHSC's one-epoch screening sees it too) and 0.01 to 0.3 train. Rates in between
// (about 2 to 100) diverge after a seed-dependent number of epochs; they are left out so that
// which configurations fail is certain.
func divergingTask(seed uint64) *Task {
	space := search.Space{
		search.CategoricalParam("lr", "0.01", "0.03", "0.1", "0.3", "300", "3000"),
		search.IntParam("width", 4, 16, false),
	}
	return &Task{
		Space: space, Train: blobs(seed, 40, 3, 5), Val: blobs(seed+1, 20, 3, 5),
		Metric: Accuracy, Epochs: 6, Seed: seed,
		Build: func(cfg search.Config, s uint64) (*Candidate, error) {
			net, err := layers.NewNet(tensor.Float32, s)
			if err != nil {
				return nil, err
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 5, Hidden: []int{cfg.Int("width")}, Out: 3})
			if err != nil {
				return nil, err
			}
			return &Candidate{Model: m, Optimizer: &samplers.SGD{LR: lrOf(cfg), Momentum: 0.9}, BatchSize: 4}, nil
		},
	}
}

// lrOf is a configuration's learning rate.
func lrOf(cfg search.Config) float64 {
	lr, err := strconv.ParseFloat(cfg.Choice("lr"), 64)
	if err != nil {
		panic(err)
	}
	return lr
}

// divergedReason reports whether a failure's text says that training diverged.
func divergedReason(msg string) bool {
	return strings.Contains(msg, "diverged") || strings.Contains(msg, "NaN") || strings.Contains(msg, "Inf")
}

// TestSearchWithDivergingConfigurations is the acceptance test of the reliability issue: a
// search in which about a third of the configurations diverge finishes, reports those as
// failed with the reason, and returns the best finite configuration.
func TestSearchWithDivergingConfigurations(t *testing.T) {
	const budget = 18
	methods := []search.Method{
		search.Sequential{Label: "random", Sampler: search.Random{}},
		search.Sequential{Label: "tpe", Sampler: search.TPE{NStartup: 8}},
	}
	for _, m := range methods {
		t.Run(m.Name(), func(t *testing.T) {
			task := divergingTask(5)
			trials, err := m.Search(context.Background(), rand.New(rand.NewPCG(9, 9)), task.Space, task.Objective(), budget)
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			if len(trials) != budget {
				t.Fatalf("%d trials for a budget of %d (failed ones count)", len(trials), budget)
			}
			failed := 0
			for _, tr := range trials {
				lr := lrOf(tr.Config)
				switch {
				case tr.State == search.Failed:
					failed++
					if !divergedReason(tr.Err) || !math.IsNaN(tr.Value) {
						t.Errorf("lr %.3g failed with value %v and reason %q; want the divergence", lr, tr.Value, tr.Err)
					}
					if lr < 300 {
						t.Errorf("lr %.3g failed: %s", lr, tr.Err)
					}
				case lr >= 300:
					t.Errorf("lr %.3g did not fail: %+v", lr, tr)
				}
			}
			checkBest(t, trials, failed, 0.8)
			// TPE steers away from what fails; random search fails on about a third.
			if m.Name() == "random" && (failed < budget/6 || failed > budget/2) {
				t.Errorf("%d of %d random configurations failed; want about a third", failed, budget)
			}
		})
	}

	t.Run("ahsc", func(t *testing.T) {
		task := divergingTask(5)
		a := &AHSC{Task: task, N1: 15, N2: 4, Workers: 2}
		res, err := a.Run(context.Background(), rand.New(rand.NewPCG(9, 9)), task.Space, task.Objective())
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		trials := res.Trials
		dropped := 0
		for _, s := range res.Screenings {
			lr := lrOf(s.Config)
			if s.Reason == "" {
				if math.IsNaN(s.Score) || lr >= 300 {
					t.Errorf("screening of lr %.3g kept with score %v", lr, s.Score)
				}
				continue
			}
			dropped++
			if !divergedReason(s.Reason) {
				t.Errorf("lr %.3g dropped for %q; want the divergence", lr, s.Reason)
			}
			if lr < 300 {
				t.Errorf("lr %.3g dropped: %s", lr, s.Reason)
			}
		}
		if res.Dropped() != dropped {
			t.Errorf("Dropped() = %d, want %d", res.Dropped(), dropped)
		}
		if dropped < a.N1/6 || dropped > a.N1/2 {
			t.Errorf("%d of %d screenings dropped; want about a third", dropped, a.N1)
		}
		// A configuration that diverges only after the first epoch would pass the screening
		// (its large weights even make μ small) and fail in the full training: a failed trial
		// with the reason, which uses up one of the N2. Here every diverging rate is dropped.
		failed := 0
		for _, tr := range trials {
			lr := lrOf(tr.Config)
			if lr >= 300 {
				t.Errorf("a configuration dropped by the screening was fully trained: %+v", tr)
			}
			if tr.State == search.Failed {
				failed++
				if !divergedReason(tr.Err) {
					t.Errorf("full training of lr %.3g failed: %s", lr, tr.Err)
				}
			}
		}
		checkBest(t, trials, failed, 0.4) // AHSC ranks by flatness, not accuracy; chance is 1/3
	})
}

// checkBest checks that the best trial is finite, not a diverging configuration, and has a
// validation accuracy of at least minAcc.
func checkBest(t *testing.T, trials []search.Trial, failed int, minAcc float64) {
	t.Helper()
	best, err := search.Best(trials)
	if err != nil {
		t.Fatal(err)
	}
	if best.State != search.Complete || math.IsNaN(best.Value) || math.IsInf(best.Value, 0) || lrOf(best.Config) >= 300 {
		t.Errorf("best %+v", best)
	}
	if -best.Value < minAcc {
		t.Errorf("best validation accuracy %v", -best.Value)
	}
	t.Logf("%d of %d failed; best accuracy %v at %v", failed, len(trials), -best.Value, best.Config)
}

func TestTaskRefusesConfigurationsOverTheMemoryBudget(t *testing.T) {
	task := mlpTask(2)
	var builds atomic.Int32
	build := task.Build
	task.Build = func(cfg search.Config, s uint64) (*Candidate, error) {
		builds.Add(1)
		return build(cfg, s)
	}
	task.Epochs = 1
	task.MaxBytes = 512 << 20
	task.Estimate = func(cfg search.Config) (int64, error) {
		if cfg.Int("width") > 16 {
			return 1288490189, nil // 1.2 GiB
		}
		return 1 << 20, nil
	}
	cfg := task.Space.FromUnit([]float64{0.5, 1, 0.5, 0.5}) // width 32
	_, err := task.Objective()(context.Background(), cfg, 1)
	if !errors.Is(err, ErrTooBig) {
		t.Fatalf("err = %v; want ErrTooBig", err)
	}
	for _, want := range []string{"1.2 GiB", "512.0 MiB", "--max-mem"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if builds.Load() != 0 {
		t.Errorf("the configuration was built %d times before being refused", builds.Load())
	}

	// In a search, refused configurations are failed trials and the search goes on.
	trials, err := search.Sequential{Label: "random", Sampler: search.Random{}}.Search(context.Background(),
		rand.New(rand.NewPCG(1, 1)), task.Space, task.Objective(), 8)
	if err != nil {
		t.Fatal(err)
	}
	tooBig := 0
	for _, tr := range trials {
		big := tr.Config.Int("width") > 16
		if big != (tr.State == search.Failed) || big && !strings.Contains(tr.Err, "over the 512.0 MiB limit") {
			t.Errorf("width %d: %+v", tr.Config.Int("width"), tr)
		}
		if big {
			tooBig++
		}
	}
	if tooBig == 0 || tooBig == len(trials) || int(builds.Load()) != len(trials)-tooBig {
		t.Errorf("%d of %d too big, %d builds", tooBig, len(trials), builds.Load())
	}
	if _, err := search.Best(trials); err != nil {
		t.Error(err)
	}
	// No limit, or no estimator: no check.
	task.MaxBytes = 0
	if err := task.CheckMemory(cfg); err != nil {
		t.Error(err)
	}
}

func TestTrialTimeoutFailsTheTrialButCancellationStopsTheSearch(t *testing.T) {
	task := mlpTask(2)
	task.Epochs = 1_000_000 // far longer than any test should wait
	task.TrialTimeout = 50 * time.Millisecond
	start := time.Now()
	trials, err := search.Sequential{Label: "random", Sampler: search.Random{}}.Search(context.Background(),
		rand.New(rand.NewPCG(1, 1)), task.Space, task.Objective(), 3)
	if err != nil {
		t.Fatalf("a timed-out trial ended the search: %v", err)
	}
	for _, tr := range trials {
		if tr.State != search.Failed || !strings.Contains(tr.Err, "trial timed out after 50ms") {
			t.Errorf("trial %+v; want failed with the timeout", tr)
		}
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("three 50ms trials took %v", el)
	}
	_, err = task.Objective()(context.Background(), trials[0].Config, 1)
	if !errors.Is(err, ErrTrialTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v; want ErrTrialTimeout and context.DeadlineExceeded", err)
	}

	// AHSC's screenings time out one by one; with all of them failed, the search says so.
	task.TrialTimeout = time.Nanosecond
	a := &AHSC{Task: task, N1: 2, N2: 1}
	if res, err := a.Run(context.Background(), rand.New(rand.NewPCG(1, 1)), task.Space, task.Objective()); err == nil ||
		len(res.Screenings) != 2 || !strings.Contains(res.Screenings[0].Reason, "timed out") {
		t.Errorf("AHSC: %v, screenings %+v", err, res.Screenings)
	}

	// Cancelling the search's context stops it: ctx's error, not a string of failed trials.
	task.TrialTimeout = time.Hour
	for _, m := range []search.Method{search.Sequential{Label: "random", Sampler: search.Random{}}, &AHSC{Task: task, N1: 3, N2: 1}} {
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		trials, err := m.Search(ctx, rand.New(rand.NewPCG(1, 1)), task.Space, task.Objective(), 5)
		timer.Stop()
		cancel()
		if !errors.Is(err, context.Canceled) || len(trials) > 1 {
			t.Errorf("%s after cancel: %d trials, err %v", m.Name(), len(trials), err)
		}
		if el := time.Since(start); el > 20*time.Second {
			t.Errorf("%s took %v to stop", m.Name(), el)
		}
	}
}

// TestBuildMisreadingTheConfigFailsTheTrial: a Build that reads a float dimension with
// cfg.Int (search.Config panics rather than round) fails that trial with the accessor's
// message; the search goes on and reports it as a failed trial.
func TestBuildMisreadingTheConfigFailsTheTrial(t *testing.T) {
	task := divergingTask(1)
	task.Space = append(task.Space, search.FloatParam("dropout", 0, 0.5, false))
	build := task.Build
	task.Build = func(cfg search.Config, s uint64) (*Candidate, error) {
		_ = cfg.Int("dropout") // the mistake: a float dimension read as an integer
		return build(cfg, s)
	}
	cfg, err := (search.Random{}).Ask(rand.New(rand.NewPCG(1, 2)), task.Space, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := task.Evaluate(context.Background(), cfg, 1)
	if e.Err == nil || !strings.Contains(e.Err.Error(), `no integer dimension "dropout"`) {
		t.Fatalf("Evaluate: error %v, want the accessor's message", e.Err)
	}
	trials, err := search.Sequential{Label: "random", Sampler: search.Random{}}.Search(context.Background(),
		rand.New(rand.NewPCG(3, 4)), task.Space, task.Objective(), 2)
	if err != nil {
		t.Fatalf("the search stopped: %v", err)
	}
	if len(trials) != 2 {
		t.Fatalf("%d trials, want 2", len(trials))
	}
	for _, tr := range trials {
		if tr.State != search.Failed || !strings.Contains(tr.Err, "no integer dimension") {
			t.Errorf("trial %s: state %v, error %q; want failed with the accessor's message", tr.Config, tr.State, tr.Err)
		}
	}
}
