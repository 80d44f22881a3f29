package search

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// shiftedQuadratic is Σ (x_i − c_i)² on [−5, 5]^5 with the optimum off the centre.
var shiftedOptimum = []float64{1.5, -2, 0.5, 3, -1}

func shiftedQuadratic() (Space, Objective) {
	space := make(Space, len(shiftedOptimum))
	for i := range space {
		space[i] = FloatParam(string(rune('a'+i)), -5, 5, false)
	}
	obj := func(_ context.Context, cfg Config, _ float64) (float64, error) {
		s := 0.0
		for i, c := range shiftedOptimum {
			s += (cfg.Values[i] - c) * (cfg.Values[i] - c)
		}
		return s, nil
	}
	return space, obj
}

// bestValueOf runs m and returns the best full-fidelity value.
func bestValueOf(t *testing.T, m Method, space Space, obj Objective, budget int, seed uint64) float64 {
	t.Helper()
	trials, err := m.Search(context.Background(), rand.New(rand.NewPCG(seed, 99)), space, obj, budget)
	if err != nil {
		t.Fatal(err)
	}
	best, err := Best(trials)
	if err != nil {
		t.Fatal(err)
	}
	return best.Value
}

// With the same 60 evaluations, TPE (20 of them random start-up) ends closer to the optimum
// than random search, averaged over 10 seeds.
func TestTPEBeatsRandom(t *testing.T) {
	space, obj := shiftedQuadratic()
	const seeds, budget = 10, 60
	tpe := Sequential{Label: "TPE", Sampler: TPE{}}
	rnd := Sequential{Label: "Random", Sampler: Random{}}
	var sumTPE, sumRandom float64
	wins := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		a, b := bestValueOf(t, tpe, space, obj, budget, seed), bestValueOf(t, rnd, space, obj, budget, seed)
		sumTPE += a
		sumRandom += b
		if a < b {
			wins++
		}
	}
	t.Logf("5-D shifted quadratic, %d evaluations, mean best over %d seeds: TPE %.3f, Random %.3f; TPE better on %d seeds",
		budget, seeds, sumTPE/seeds, sumRandom/seeds, wins)
	if !(sumTPE < 0.6*sumRandom) || wins < seeds*7/10 {
		t.Errorf("TPE mean %.3f vs Random %.3f (wins %d/%d)", sumTPE/seeds, sumRandom/seeds, wins, seeds)
	}
}

// A seed fixes TPE's proposals over a space with every kind of dimension.
func TestTPEDeterministic(t *testing.T) {
	space := allKindsSpace()
	obj := func(_ context.Context, cfg Config, _ float64) (float64, error) {
		v := math.Log10(cfg.Float("lr")) + 3 + cfg.Float("lin")*cfg.Float("lin") + float64(cfg.Int("depth"))
		if cfg.Choice("act") == "elu" {
			v -= 2
		}
		return v, nil
	}
	run := func(seed uint64) []float64 {
		trials, err := Sequential{Sampler: TPE{NStartup: 5}}.Search(context.Background(), rand.New(rand.NewPCG(seed, 1)), space, obj, 25)
		if err != nil {
			t.Fatal(err)
		}
		var vals []float64
		for _, tr := range trials {
			vals = append(vals, tr.Config.Values...)
		}
		return vals
	}
	a, b, c := run(11), run(11), run(12)
	if !sameFloats(a, b) {
		t.Error("TPE differs between runs with the same seed")
	}
	if sameFloats(a, c) {
		t.Error("TPE is the same for different seeds")
	}
}

// On a mixed space TPE's proposals stay valid and, over a few seeds, favour the best choice
// more than uniform sampling's 1 in 5.
func TestTPEMixedSpace(t *testing.T) {
	space := Space{
		CategoricalParam("act", "relu", "tanh", "elu", "gelu", "selu"),
		IntParam("width", 16, 1024, true),
		FloatParam("lr", 1e-5, 1, true),
	}
	obj := func(_ context.Context, cfg Config, _ float64) (float64, error) {
		v := math.Abs(math.Log2(float64(cfg.Int("width"))/128)) + math.Abs(math.Log10(cfg.Float("lr"))+3)
		if cfg.Choice("act") != "gelu" {
			v += 3
		}
		return v, nil
	}
	const seeds = 6
	gelu, late, sumBest := 0, 0, 0.0
	for seed := uint64(1); seed <= seeds; seed++ {
		trials, err := Sequential{Sampler: TPE{NStartup: 10}}.Search(context.Background(), rand.New(rand.NewPCG(seed, 5)), space, obj, 60)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trials[30:] {
			late++
			if tr.Config.Choice("act") == "gelu" {
				gelu++
			}
			w, lr := tr.Config.Float("width"), tr.Config.Float("lr")
			if w != math.Round(w) || w < 16 || w > 1024 || lr < 1e-5 || lr > 1 {
				t.Fatalf("invalid proposal %v", tr.Config)
			}
		}
		best, err := Best(trials)
		if err != nil {
			t.Fatal(err)
		}
		sumBest += best.Value
	}
	t.Logf("gelu in %d of the last %d proposals; mean best %.3f", gelu, late, sumBest/seeds)
	if float64(gelu) < 0.3*float64(late) || sumBest/seeds > 1 {
		t.Errorf("gelu in %d of %d late proposals, mean best %.3f", gelu, late, sumBest/seeds)
	}
}

// Failures count against the budget, the search goes on, and, counted as the worst losses,
// they push TPE away from the region that fails.
func TestTPEFailures(t *testing.T) {
	space := Space{FloatParam("x", 0, 1, false), FloatParam("y", 0, 1, false)}
	calls := 0
	obj := func(_ context.Context, cfg Config, _ float64) (float64, error) {
		calls++
		x, y := cfg.Float("x"), cfg.Float("y")
		switch {
		case x > 0.6:
			return 0, errors.New("diverged")
		case y > 0.8:
			return math.NaN(), nil
		}
		return (x-0.5)*(x-0.5) + (y-0.3)*(y-0.3), nil
	}
	const seeds, budget = 8, 80
	early, late := 0, 0
	for seed := uint64(1); seed <= seeds; seed++ {
		calls = 0
		trials, err := Sequential{Sampler: TPE{}}.Search(context.Background(), rand.New(rand.NewPCG(seed, 3)), space, obj, budget)
		if err != nil {
			t.Fatal(err)
		}
		if calls != budget || len(trials) != budget {
			t.Fatalf("%d calls and %d trials for a budget of %d", calls, len(trials), budget)
		}
		for i, tr := range trials {
			if tr.State == Failed {
				if i < 20 {
					early++
				} else if i >= budget-20 {
					late++
				}
			}
		}
		if best, err := Best(trials); err != nil || best.Value > 0.01 {
			t.Errorf("seed %d: best %v (%v)", seed, best.Value, err)
		}
	}
	t.Logf("failures: %d in the first 20 trials, %d in the last 20 (%d seeds)", early, late, seeds)
	if float64(late) > 0.75*float64(early) {
		t.Errorf("failures went from %d to %d", early, late)
	}
}

// Until NStartup trials have finished TPE is random search, draw for draw; running trials do
// not count.
func TestTPEStartupIsRandom(t *testing.T) {
	space := allKindsSpace()
	var trials []Trial
	for i := range 7 {
		trials = append(trials, Trial{ID: i, Config: space.FromUnit(make([]float64, len(space))), Fidelity: 1, State: Running})
	}
	trials[0].State, trials[0].Value = Complete, 1
	a, _ := TPE{NStartup: 2}.Ask(rand.New(rand.NewPCG(1, 2)), space, trials)
	b, _ := Random{}.Ask(rand.New(rand.NewPCG(1, 2)), space, trials)
	if !sameFloats(a.Values, b.Values) {
		t.Errorf("start-up proposal %v, random %v", a, b)
	}
	trials[1].State, trials[1].Value = Failed, math.NaN()
	c, _ := TPE{NStartup: 2}.Ask(rand.New(rand.NewPCG(1, 2)), space, trials)
	if sameFloats(a.Values, c.Values) {
		t.Error("TPE still random after start-up")
	}
	if _, err := (TPE{}).Ask(rand.New(rand.NewPCG(1, 2)), space, []Trial{{State: Complete, Fidelity: 1, Config: Config{Values: []float64{1}}}}); err == nil {
		t.Error("a trial of the wrong dimension was accepted")
	}
}

func TestGamma(t *testing.T) {
	for _, c := range []struct{ n, hyperopt, optuna int }{
		{1, 1, 1}, {20, 2, 2}, {30, 2, 3}, {60, 2, 6}, {100, 3, 10}, {1000, 8, 25}, {100000, 25, 25},
	} {
		if h, o := HyperoptGamma(c.n), OptunaGamma(c.n); h != c.hyperopt || o != c.optuna {
			t.Errorf("n=%d: HyperoptGamma %d, OptunaGamma %d; want %d, %d", c.n, h, o, c.hyperopt, c.optuna)
		}
	}
}

// The estimator's components follow Hyperopt's adaptive_parzen_normal.
func TestParzenBandwidths(t *testing.T) {
	pz := newParzen([]float64{0.2, 0.9, 0.6}, 1, 25)
	wantMu := []float64{0.2, 0.5, 0.6, 0.9}
	wantSigma := []float64{0.3, 1, 0.3, 0.3}
	for i := range wantMu {
		if math.Abs(pz.mu[i]-wantMu[i]) > 1e-12 || math.Abs(pz.sigma[i]-wantSigma[i]) > 1e-12 || math.Abs(pz.w[i]-0.25) > 1e-12 {
			t.Errorf("component %d: w %v mu %v sigma %v; want 0.25 %v %v", i, pz.w[i], pz.mu[i], pz.sigma[i], wantMu[i], wantSigma[i])
		}
	}
	one := newParzen([]float64{0.2}, 1, 25)
	if one.mu[0] != 0.2 || one.sigma[0] != 0.5 || one.mu[1] != 0.5 || one.sigma[1] != 1 {
		t.Errorf("one observation: mu %v sigma %v", one.mu, one.sigma)
	}
	// Close observations are clipped to the prior over min(100, components + 1).
	tight := newParzen([]float64{0.1, 0.1001, 0.1002}, 1, 25)
	if tight.sigma[0] != 0.2 {
		t.Errorf("tight sigmas %v, want at least 0.2", tight.sigma)
	}
	w := forgettingWeights(30, 25)
	if w[0] != 1.0/30 || w[4] != 1 || w[5] != 1 || math.Abs(w[2]-(1.0/30+1)/2) > 1e-12 {
		t.Errorf("forgetting weights %v", w)
	}
	sum := 1.0 // the prior
	for _, x := range w {
		sum += x
	}
	if lf := newParzen(make([]float64, 30), 1, 25); math.Abs(lf.w[0]*sum*30-1) > 1e-12 {
		t.Errorf("forgetting weight of the oldest observation %v", lf.w[0])
	}
}

// The truncated mixture is a density on [0, 1], integer cells carry all its mass, and its
// sampler draws from it.
func TestParzenIsADistribution(t *testing.T) {
	pz := newParzen([]float64{0.05, 0.3, 0.32, 0.97, 0.6}, 1, 25)
	const n = 20000
	integral := 0.0
	for k := range n {
		integral += math.Exp(pz.logPDF((float64(k)+0.5)/n)) / n
	}
	if math.Abs(integral-1) > 1e-4 {
		t.Errorf("density integrates to %v", integral)
	}
	p := IntParam("w", 16, 1024, true)
	mass, u := 0.0, 0.0
	for u < 1 {
		a, b, c := intCell(p, u+1e-12)
		if !(a <= c && c <= b) || math.Abs(a-u) > 1e-9 {
			t.Fatalf("cell [%v, %v] with centre %v after %v", a, b, c, u)
		}
		mass += math.Exp(pz.logMass(a, b))
		u = b
	}
	if math.Abs(mass-1) > 1e-9 {
		t.Errorf("integer cells hold mass %v", mass)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	below := 0
	const draws = 20000
	for range draws {
		x := pz.sample(rng)
		if x < 0 || x > 1 {
			t.Fatalf("draw %v outside [0, 1]", x)
		}
		if x < 0.4 {
			below++
		}
	}
	if want := math.Exp(pz.logMass(0, 0.4)); math.Abs(float64(below)/draws-want) > 0.015 {
		t.Errorf("P(x < 0.4): sampled %v, density %v", float64(below)/draws, want)
	}
}
