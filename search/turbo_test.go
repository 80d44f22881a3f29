package search

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

func TestTuRBOBeatsRandom(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prob   func() (Space, Objective)
		factor float64 // TuRBO's mean best must be below factor × Random's
	}{{"quadratic5", quadratic5, 0.3}, {"rosenbrock4", rosenbrock4, 0.5}, {"mixed", mixedSpace, 0.7}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // the slowest tests of the package: use both cores
			if testing.Short() && tc.name != "quadratic5" {
				t.Skip("short mode")
			}
			space, obj := tc.prob()
			m, r := compareWithRandom(t, TuRBO{}, space, obj, 40, 4)
			if !(m < tc.factor*r) {
				t.Errorf("TuRBO mean best %.4g, Random %.4g: want TuRBO below %.2g × Random", m, r, tc.factor)
			}
		})
	}
}

func TestTuRBODeterministic(t *testing.T) {
	space, obj := quadratic5()
	_, a := bestAfter(t, TuRBO{}, space, obj, 20, 7)
	_, b := bestAfter(t, TuRBO{}, space, obj, 20, 7)
	for i := range a {
		if a[i].Config.String() != b[i].Config.String() {
			t.Fatalf("trial %d differs between runs with the same seed: %v vs %v", i, a[i].Config, b[i].Config)
		}
	}
}

// TestTuRBOInitialDesign: the first 2d+1 points form a Latin hypercube.
func TestTuRBOInitialDesign(t *testing.T) {
	space, obj := quadratic5()
	_, trials := bestAfter(t, TuRBO{}, space, obj, 11, 3)
	n := 2*len(space) + 1
	for j := range space {
		used := make([]bool, n)
		for _, tr := range trials[:n] {
			s := min(int(space.ToUnit(tr.Config)[j]*float64(n)), n-1)
			if used[s] {
				t.Fatalf("dimension %d: stratum %d used twice", j, s)
			}
			used[s] = true
		}
	}
}

// TestTuRBOStateMachine replays hand-made histories through the success/failure rules.
func TestTuRBOStateMachine(t *testing.T) {
	space := Space{FloatParam("x", 0, 1, false), FloatParam("y", 0, 1, false)}
	tu := TuRBO{} // d = 2: n_init 5, succ tol 3, fail tol 4
	hist := func(vals ...float64) []Trial {
		var tr []Trial
		for i, v := range vals {
			st := Complete
			if math.IsNaN(v) {
				st = Failed
			}
			tr = append(tr, Trial{ID: i, Config: space.FromUnit([]float64{float64(i) / 100, 0.5}), Value: v, Fidelity: 1, State: st})
		}
		return tr
	}
	init := []float64{5, 4, 6, 7, 8}
	// Three successes double the side.
	s := tu.TrustRegionState(space, hist(append(init, 3, 2, 1)...))
	if s.Length != 1.6 || s.Successes != 0 {
		t.Errorf("after 3 successes: %+v, want length 1.6", s)
	}
	// Four failures (a NaN among them) halve it.
	s = tu.TrustRegionState(space, hist(append(init, 9, math.NaN(), 4, 4)...))
	if s.Length != 0.4 || s.Failures != 0 {
		t.Errorf("after 4 failures: %+v, want length 0.4", s)
	}
	// An improvement by less than 10⁻³ of the incumbent is a failure.
	s = tu.TrustRegionState(space, hist(append(init, 3.9999)...))
	if s.Failures != 1 {
		t.Errorf("tiny improvement: %+v, want a failure", s)
	}
	// 0.8 → below 0.5⁷ takes 7 halvings = 28 failures; then a restart with a fresh design.
	vals := append([]float64(nil), init...)
	for i := 0; i < 28; i++ {
		vals = append(vals, 10)
	}
	s = tu.TrustRegionState(space, hist(vals...))
	if s.Restarts != 1 || s.Start != len(vals) || s.Length != 0.8 {
		t.Errorf("after 28 failures: %+v, want a restart at %d", s, len(vals))
	}
	// An initial design that failed entirely restarts at once.
	s = tu.TrustRegionState(space, hist(math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()))
	if s.Restarts != 1 || s.Start != 5 {
		t.Errorf("failed design: %+v, want a restart", s)
	}
}

// TestTuRBOStaysInTrustRegion: after the design, proposals lie in the box around the best
// point (side ≤ Length·max weight, here bounded loosely by the maximal side 1.6 × d).
func TestTuRBOProposalsNearIncumbent(t *testing.T) {
	space, obj := quadratic5()
	_, trials := bestAfter(t, TuRBO{}, space, obj, 11, 5)
	tu := TuRBO{LengthInit: 0.1}
	// With a small region, the next proposal stays close to the incumbent in every dimension.
	best, _ := Best(trials)
	c, err := tu.Ask(rand.New(rand.NewPCG(1, 2)), space, trials)
	if err != nil {
		t.Fatal(err)
	}
	ub, uc := space.ToUnit(best.Config), space.ToUnit(c)
	for j := range ub {
		// Weights have geometric mean 1 and lengthscales within [0.005, 2]: a weight is at
		// most (2/0.005)^(4/5) ≈ 120, so this is loose; in practice it is far tighter.
		if math.Abs(ub[j]-uc[j]) > 0.5 {
			t.Errorf("dimension %d: proposal %.3f far from incumbent %.3f", j, uc[j], ub[j])
		}
	}
}

func TestTuRBOFailures(t *testing.T) {
	space, obj := quadratic5()
	obj = failing(space, obj)
	trials, err := TuRBO{}.Search(context.Background(), rand.New(rand.NewPCG(2, 3)), space, obj, 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 30 {
		t.Fatalf("%d trials, want 30 (failures count toward the budget)", len(trials))
	}
	failed := 0
	for _, tr := range trials {
		if tr.State == Failed {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no failures: the test objective is wrong")
	}
	if _, err := Best(trials); err != nil {
		t.Fatal(err)
	}
}

// TestTuRBODiscreteNoRepeats: on a small discrete space TuRBO does not re-evaluate configs
// while new ones remain.
func TestTuRBODiscreteNoRepeats(t *testing.T) {
	space := Space{IntParam("a", 1, 4, false), CategoricalParam("b", "x", "y", "z"), IntParam("c", 1, 3, false)}
	obj := func(_ context.Context, cfg Config, _ float64) (float64, error) {
		return math.Abs(float64(cfg.Int("a"))-3) + cfg.Values[1] + math.Abs(float64(cfg.Int("c"))-2), nil
	}
	trials, err := TuRBO{}.Search(context.Background(), rand.New(rand.NewPCG(1, 1)), space, obj, 30)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tr := range trials {
		k := tr.Config.String()
		if seen[k] {
			t.Errorf("%s evaluated twice (36 configs, 30 trials)", k)
		}
		seen[k] = true
	}
	if b, _ := Best(trials); b.Value != 0 {
		t.Errorf("best %v, want the optimum 0", b.Value)
	}
}

// benchHistory is n random trials of quadratic5.
func benchHistory(n int) (Space, []Trial) {
	space, obj := quadratic5()
	rng := rand.New(rand.NewPCG(1, 1))
	var trials []Trial
	for i := 0; i < n; i++ {
		c, _ := Random{}.Ask(rng, space, nil)
		v, _ := obj(context.Background(), c, 1)
		trials = append(trials, Trial{ID: i, Config: c, Value: v, Fidelity: 1, State: Complete})
	}
	return space, trials
}

// BenchmarkHEBOAsk is one suggestion after 30 trials in 5-D.
func BenchmarkHEBOAsk(b *testing.B) {
	space, trials := benchHistory(30)
	rng := rand.New(rand.NewPCG(2, 2))
	for b.Loop() {
		if _, err := (HEBO{}).Ask(rng, space, trials); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHEBOAskBatch6 is one batch of 6 after 30 trials in 5-D.
func BenchmarkHEBOAskBatch6(b *testing.B) {
	space, trials := benchHistory(30)
	rng := rand.New(rand.NewPCG(2, 2))
	for b.Loop() {
		if _, err := (HEBO{}).AskBatch(rng, space, trials, 6); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTuRBOAsk is one trust-region suggestion after 30 trials in 5-D (500 candidates).
func BenchmarkTuRBOAsk(b *testing.B) {
	space, trials := benchHistory(30)
	rng := rand.New(rand.NewPCG(2, 2))
	for b.Loop() {
		if _, err := (TuRBO{}).Ask(rng, space, trials); err != nil {
			b.Fatal(err)
		}
	}
}
