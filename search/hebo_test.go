package search

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// quadratic5 is a shifted 5-D quadratic on [−5, 5]^5 with minimum 0.
func quadratic5() (Space, Objective) {
	c := []float64{1.2, -2.1, 0.7, 3.0, -0.4}
	var space Space
	for i := range c {
		space = append(space, FloatParam(string(rune('a'+i)), -5, 5, false))
	}
	return space, func(_ context.Context, cfg Config, _ float64) (float64, error) {
		var s float64
		for i, v := range cfg.Values {
			s += (v - c[i]) * (v - c[i])
		}
		return s, nil
	}
}

// rosenbrock4 is the 4-D Rosenbrock function on [−2, 2]^4 with minimum 0 at (1, 1, 1, 1).
func rosenbrock4() (Space, Objective) {
	var space Space
	for i := 0; i < 4; i++ {
		space = append(space, FloatParam(string(rune('a'+i)), -2, 2, false))
	}
	return space, func(_ context.Context, cfg Config, _ float64) (float64, error) {
		x := cfg.Values
		var s float64
		for i := 0; i+1 < len(x); i++ {
			s += 100*(x[i+1]-x[i]*x[i])*(x[i+1]-x[i]*x[i]) + (1-x[i])*(1-x[i])
		}
		return s, nil
	}
}

// mixedSpace is shaped like the paper's OpenML space: an integer, a log-scaled choice, a
// log-scaled real and a log-scaled integer; the loss is smooth in the log coordinates.
func mixedSpace() (Space, Objective) {
	space := Space{
		IntParam("depth", 1, 4, false),
		CategoricalParam("width", "16", "32", "64", "128", "256", "512", "1024"),
		FloatParam("lr", 1e-5, 1, true),
		IntParam("batch", 4, 256, true),
	}
	return space, func(_ context.Context, cfg Config, _ float64) (float64, error) {
		d := float64(cfg.Int("depth"))
		w := cfg.Values[1] // choice index: 16·2^w
		lr := math.Log10(cfg.Float("lr"))
		b := math.Log2(float64(cfg.Int("batch")))
		return (d-3)*(d-3)*0.3 + (w-4)*(w-4)*0.1 + (lr+2.5)*(lr+2.5) + 0.2*(b-5)*(b-5), nil
	}
}

// bestAfter runs m with seed and returns the best value found and the trials.
func bestAfter(t *testing.T, m Method, space Space, obj Objective, budget int, seed uint64) (float64, []Trial) {
	t.Helper()
	trials, err := m.Search(context.Background(), rand.New(rand.NewPCG(seed, 99)), space, obj, budget)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != budget {
		t.Fatalf("%s: %d trials, want %d", m.Name(), len(trials), budget)
	}
	b, err := Best(trials)
	if err != nil {
		t.Fatal(err)
	}
	return b.Value, trials
}

// compareWithRandom returns the mean best value of m and of random search over seeds.
func compareWithRandom(t *testing.T, m Method, space Space, obj Objective, budget int, seeds int) (mean, random float64) {
	t.Helper()
	start := time.Now()
	for s := 0; s < seeds; s++ {
		v, _ := bestAfter(t, m, space, obj, budget, uint64(s))
		mean += v / float64(seeds)
	}
	elapsed := time.Since(start)
	for s := 0; s < seeds; s++ {
		v, _ := bestAfter(t, Sequential{Label: "Random", Sampler: Random{}}, space, obj, budget, uint64(s))
		random += v / float64(seeds)
	}
	t.Logf("%s: mean best %.4g vs Random %.4g over %d seeds × %d evaluations (%.1f ms per suggestion)",
		m.Name(), mean, random, seeds, budget, float64(elapsed.Microseconds())/1e3/float64(seeds*budget))
	return mean, random
}

func TestHEBOBeatsRandom(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prob   func() (Space, Objective)
		factor float64 // HEBO's mean best must be below factor × Random's
	}{{"quadratic5", quadratic5, 0.3}, {"rosenbrock4", rosenbrock4, 0.5}, {"mixed", mixedSpace, 0.7}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // the slowest tests of the package: use both cores
			if testing.Short() && tc.name != "quadratic5" {
				t.Skip("short mode")
			}
			space, obj := tc.prob()
			h, r := compareWithRandom(t, HEBO{}, space, obj, 40, 4)
			if !(h < tc.factor*r) {
				t.Errorf("HEBO mean best %.4g, Random %.4g: want HEBO below %.2g × Random", h, r, tc.factor)
			}
		})
	}
}

func TestHEBODeterministic(t *testing.T) {
	space, obj := mixedSpace()
	_, a := bestAfter(t, HEBO{}, space, obj, 16, 7)
	_, b := bestAfter(t, HEBO{}, space, obj, 16, 7)
	for i := range a {
		if a[i].Config.String() != b[i].Config.String() || a[i].Value != b[i].Value {
			t.Fatalf("trial %d differs between runs with the same seed: %v vs %v", i, a[i].Config, b[i].Config)
		}
	}
	_, c := bestAfter(t, HEBO{}, space, obj, 16, 8)
	same := true
	for i := range a {
		same = same && a[i].Config.String() == c[i].Config.String()
	}
	if same {
		t.Error("different seeds gave the same trials")
	}
}

// TestHEBOBatches checks the paper's protocol: 5 batches of 6 distinct, new configs, the first
// one the random design.
func TestHEBOBatches(t *testing.T) {
	space, obj := mixedSpace()
	rng := rand.New(rand.NewPCG(1, 2))
	var trials []Trial
	seen := map[string]bool{}
	for b := 0; b < 5; b++ {
		cfgs, err := HEBO{}.AskBatch(rng, space, trials, 6)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfgs) != 6 {
			t.Fatalf("batch %d has %d configs", b, len(cfgs))
		}
		for _, c := range cfgs {
			k := c.String()
			if seen[k] {
				t.Errorf("batch %d repeats %s", b, k)
			}
			seen[k] = true
			v, _ := obj(context.Background(), c, 1)
			trials = append(trials, Trial{ID: len(trials), Config: c, Value: v, Fidelity: 1, State: Complete})
		}
	}
	// Budgets that are not a multiple of the batch size are honoured exactly.
	_, tr := bestAfter(t, HEBO{}, space, obj, 14, 3)
	if len(tr) != 14 {
		t.Errorf("%d trials for a budget of 14", len(tr))
	}
}

// TestHEBOPendingTrials: trials still running are not proposed again.
func TestHEBOPendingTrials(t *testing.T) {
	space, obj := quadratic5()
	rng := rand.New(rand.NewPCG(4, 5))
	var trials []Trial
	for i := 0; i < 10; i++ {
		c, _ := Random{}.Ask(rng, space, nil)
		v, _ := obj(context.Background(), c, 1)
		trials = append(trials, Trial{ID: i, Config: c, Value: v, Fidelity: 1, State: Complete})
	}
	a, err := HEBO{}.Ask(rand.New(rand.NewPCG(1, 1)), space, trials)
	if err != nil {
		t.Fatal(err)
	}
	trials = append(trials, Trial{ID: 10, Config: a, Fidelity: 1, State: Running})
	b, err := HEBO{}.Ask(rand.New(rand.NewPCG(1, 1)), space, trials)
	if err != nil {
		t.Fatal(err)
	}
	if a.String() == b.String() {
		t.Errorf("pending config %s proposed again", a)
	}
}

// failing wraps an objective so that it errors on a quarter of the space and returns NaN on
// another slice of it, both away from quadratic5's minimum.
func failing(space Space, obj Objective) Objective {
	return func(ctx context.Context, cfg Config, f float64) (float64, error) {
		u := space.ToUnit(cfg)
		switch {
		case u[0] < 0.25:
			return 0, errors.New("training diverged")
		case u[1] > 0.85:
			return math.NaN(), nil
		}
		return obj(ctx, cfg, f)
	}
}

func TestHEBOFailures(t *testing.T) {
	space, obj := quadratic5()
	obj = failing(space, obj)
	trials, err := HEBO{}.Search(context.Background(), rand.New(rand.NewPCG(2, 3)), space, obj, 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 30 {
		t.Fatalf("%d trials, want 30 (failures count toward the budget)", len(trials))
	}
	var failed, lateFailed int
	for i, tr := range trials {
		if tr.State == Failed {
			failed++
			if i >= 15 {
				lateFailed++
			}
		}
	}
	if failed == 0 {
		t.Fatal("no failures: the test objective is wrong")
	}
	if _, err := Best(trials); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d failures, %d in the second half", failed, lateFailed)
	// Imputing failures with the worst loss teaches the model to avoid them.
	if lateFailed > 5 {
		t.Errorf("%d of the last 15 trials failed: the search did not learn to avoid failures", lateFailed)
	}
}

func TestAcquisitionsStable(t *testing.T) {
	for _, z := range []float64{3, 0, -5, -8, -20, -24.9, -25.1, -40, -1e3} {
		mean, sd, best := -z, 1.0, 0.0
		le := LogExpectedImprovement(mean, sd, best)
		lp := LogProbabilityOfImprovement(mean, sd, best)
		if math.IsInf(le, 0) || math.IsNaN(le) || math.IsInf(lp, 0) || math.IsNaN(lp) {
			t.Fatalf("z=%v: log EI %v, log PI %v", z, le, lp)
		}
		if z > -30 {
			if e := ExpectedImprovement(mean, sd, best); e > 1e-300 && math.Abs(math.Log(e)-le) > 1e-6*math.Abs(le) {
				t.Errorf("z=%v: log EI %v, log(EI) %v", z, le, math.Log(e))
			}
		}
	}
	// Continuity across the switch to the asymptotic forms (the slope, about −z, accounts
	// for 5·10⁻⁸ of the difference).
	if d := LogExpectedImprovement(25+1e-9, 1, 0) - LogExpectedImprovement(25-1e-9, 1, 0); math.Abs(d) > 1e-6 {
		t.Errorf("log EI jumps by %v at z = −25", d)
	}
	if d := LogProbabilityOfImprovement(30+1e-9, 1, 0) - LogProbabilityOfImprovement(30-1e-9, 1, 0); math.Abs(d) > 1e-6 {
		t.Errorf("log PI jumps by %v at z = −30", d)
	}
	if !(LowerConfidenceBound(1, 2, 2) < LowerConfidenceBound(1, 1, 2)) {
		t.Error("LCB does not reward uncertainty")
	}
}

func TestLatinHypercubeDesign(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n, d = 7, 3
	var prev [][]float64
	for i := 0; i < n; i++ {
		prev = append(prev, lhsNext(rng, prev, n, d))
	}
	for j := 0; j < d; j++ {
		seen := make([]bool, n)
		for _, p := range prev {
			s := int(p[j] * n)
			if seen[s] {
				t.Fatalf("dimension %d: stratum %d used twice", j, s)
			}
			seen[s] = true
		}
	}
}

var (
	_ Sampler = HEBO{}
	_ Method  = HEBO{}
	_ Sampler = TuRBO{}
	_ Method  = TuRBO{}
)

// TestSamplersDriveAStudy: both work through the ask/tell interface one suggestion at a time
// (the Bayesmark protocol, 1 suggestion per call).
func TestSamplersDriveAStudy(t *testing.T) {
	space, obj := mixedSpace()
	for _, s := range []Sampler{HEBO{}, TuRBO{}} {
		st, err := NewStudy(space, s, 11)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 14; i++ {
			tr, err := st.Ask()
			if err != nil {
				t.Fatal(err)
			}
			v, err := obj(context.Background(), tr.Config, 1)
			if err := st.Tell(tr.ID, v, err); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]bool{}
		for _, tr := range st.Trials() {
			if tr.State != Complete {
				t.Errorf("%T: trial %d is %v", s, tr.ID, tr.State)
			}
			if seen[tr.Config.String()] {
				t.Errorf("%T: %s proposed twice", s, tr.Config)
			}
			seen[tr.Config.String()] = true
		}
	}
}

// TestHEBOTinySpace: asking for more configs than remain untried still returns a full batch,
// the untried ones first.
func TestHEBOTinySpace(t *testing.T) {
	space := Space{IntParam("a", 1, 2, false), CategoricalParam("b", "x", "y")}
	var trials []Trial
	for i, u := range [][]float64{{0.1, 0.1}, {0.9, 0.1}, {0.1, 0.9}} {
		trials = append(trials, Trial{ID: i, Config: space.FromUnit(u), Value: float64(i), Fidelity: 1, State: Complete})
	}
	cfgs, err := HEBO{}.AskBatch(rand.New(rand.NewPCG(1, 1)), space, trials, 6)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 6 {
		t.Fatalf("%d configs, want 6", len(cfgs))
	}
	if got := cfgs[0].String(); got != "a=2 b=y" {
		t.Errorf("first config %s, want the untried a=2 b=y", got)
	}
}
