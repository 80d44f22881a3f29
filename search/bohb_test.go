package search

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// multiFidelity is a 4-D shifted quadratic whose low-fidelity versions are biased and noisy:
// at fidelity z the loss gains (1−z)·(3 + 2·Σ sin(3x_i) + 4·h(x)) with h a deterministic
// pseudo-random value in [−1, 1], so cheap evaluations rank configurations only roughly, as
// short training runs do.
func multiFidelity() (Space, Objective) {
	c := []float64{1.5, -2, 0.5, 3}
	space := make(Space, len(c))
	for i := range space {
		space[i] = FloatParam(string(rune('a'+i)), -5, 5, false)
	}
	obj := func(_ context.Context, cfg Config, z float64) (float64, error) {
		f, wiggle, h := 0.0, 0.0, 0.0
		for i, x := range cfg.Values {
			f += (x - c[i]) * (x - c[i])
			wiggle += math.Sin(3 * x)
			h += x * float64(7919*(i+1))
		}
		h = 2*(h-math.Floor(h)) - 1
		return f + (1-z)*(3+2*wiggle+4*h), nil
	}
	return space, obj
}

func TestBOHBFidelities(t *testing.T) {
	for _, c := range []struct {
		b    BOHB
		want []float64
	}{
		{BOHB{}, []float64{1.0 / 27, 1.0 / 9, 1.0 / 3, 1}},
		{BOHB{MinFidelity: 1.0 / 27}, []float64{1.0 / 27, 1.0 / 9, 1.0 / 3, 1}},
		{BOHB{MinFidelity: 0.5}, []float64{1}},
		{BOHB{MinFidelity: 1}, []float64{1}},
		{BOHB{Eta: 2, MinFidelity: 1.0 / 8}, []float64{0.125, 0.25, 0.5, 1}},
	} {
		got, err := c.b.Fidelities()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%+v: rungs %v, want %v", c.b, got, c.want)
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-15 {
				t.Errorf("%+v: rungs %v, want %v", c.b, got, c.want)
			}
		}
		if got[len(got)-1] != 1 {
			t.Errorf("%+v: top rung %v", c.b, got[len(got)-1])
		}
	}
	for _, b := range []BOHB{{Eta: 1}, {MinFidelity: 2}, {MinFidelity: -1}, {TopNPercent: 100}} {
		if _, err := b.Search(context.Background(), rand.New(rand.NewPCG(1, 1)), Space{FloatParam("x", 0, 1, false)},
			func(context.Context, Config, float64) (float64, error) { return 0, nil }, 10); err == nil {
			t.Errorf("%+v accepted", b)
		}
	}
}

// One Hyperband round is the four brackets of hpbandster with η = 3 and four rungs.
func TestBOHBBrackets(t *testing.T) {
	space, obj := multiFidelity()
	trials, err := BOHB{}.Search(context.Background(), rand.New(rand.NewPCG(1, 1)), space, obj, 15)
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for _, bracket := range [][][2]float64{
		{{27, 1.0 / 27}, {9, 1.0 / 9}, {3, 1.0 / 3}, {1, 1}},
		{{9, 1.0 / 9}, {3, 1.0 / 3}, {1, 1}},
		{{6, 1.0 / 3}, {2, 1}},
		{{4, 1}},
	} {
		for _, rung := range bracket {
			for range int(rung[0]) {
				want = append(want, rung[1])
			}
		}
	}
	if len(trials) != len(want) {
		t.Fatalf("%d trials, want %d", len(trials), len(want))
	}
	for i, tr := range trials {
		if math.Abs(tr.Fidelity-want[i]) > 1e-15 {
			t.Fatalf("trial %d at fidelity %v, want %v", i, tr.Fidelity, want[i])
		}
	}
	for i, tr := range trials {
		if tr.ID != i || tr.State != Complete {
			t.Fatalf("trial %d: %+v", i, tr)
		}
	}
	// Successive halving: the first bracket's 9 second-rung configurations are the 9 best of
	// its 27 first-rung ones, in order of loss.
	first := slices.Clone(trials[:27])
	slices.SortStableFunc(first, func(a, b Trial) int { return cmp.Compare(a.Value, b.Value) })
	for i, tr := range trials[27:36] {
		if !sameFloats(tr.Config.Values, first[i].Config.Values) {
			t.Errorf("promotion %d is %v, want %v", i, tr.Config, first[i].Config)
		}
	}
}

// Whatever the budget, BOHB spends at most it, leaves less than one full evaluation unspent
// and evaluates at least one configuration at full fidelity.
func TestBOHBBudget(t *testing.T) {
	space, obj := multiFidelity()
	for budget := 0; budget <= 33; budget++ {
		trials, err := BOHB{}.Search(context.Background(), rand.New(rand.NewPCG(uint64(budget), 2)), space, obj, budget)
		if err != nil {
			t.Fatal(err)
		}
		spent, full := 0.0, 0
		for _, tr := range trials {
			spent += tr.Fidelity
			if tr.Fidelity == 1 {
				full++
			}
		}
		if spent > float64(budget)+1e-9 || float64(budget)-spent >= 1 {
			t.Errorf("budget %d: spent %v", budget, spent)
		}
		if budget >= 1 && full == 0 {
			t.Errorf("budget %d: no full-fidelity evaluation", budget)
		}
		if budget >= 1 {
			if _, err := Best(trials); err != nil {
				t.Errorf("budget %d: %v", budget, err)
			}
		}
	}
}

func TestBOHBDeterministic(t *testing.T) {
	space := allKindsSpace()
	obj := func(_ context.Context, cfg Config, z float64) (float64, error) {
		v := math.Abs(math.Log10(cfg.Float("lr"))+3) + cfg.Float("lin")*cfg.Float("lin") + float64(cfg.Int("depth"))
		if cfg.Choice("act") == "elu" {
			v -= 2
		}
		return v + (1-z)*math.Sin(float64(cfg.Int("width"))), nil
	}
	run := func(seed uint64) []float64 {
		trials, err := BOHB{}.Search(context.Background(), rand.New(rand.NewPCG(seed, 1)), space, obj, 20)
		if err != nil {
			t.Fatal(err)
		}
		var vals []float64
		for _, tr := range trials {
			vals = append(vals, tr.Fidelity, tr.Value)
			vals = append(vals, tr.Config.Values...)
		}
		return vals
	}
	a, b, c := run(4), run(4), run(5)
	if !sameFloats(a, b) {
		t.Error("BOHB differs between runs with the same seed")
	}
	if sameFloats(a, c) {
		t.Error("BOHB is the same for different seeds")
	}
}

// With the training budget of 30 full evaluations, BOHB's best full-fidelity loss beats 30
// random full evaluations, averaged over seeds.
func TestBOHBBeatsRandom(t *testing.T) {
	space, obj := multiFidelity()
	const seeds, budget = 10, 30
	rnd := Sequential{Label: "Random", Sampler: Random{}}
	var sumBOHB, sumRandom, sumHyperband float64
	wins := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		a := bestValueOf(t, BOHB{}, space, obj, budget, seed)
		b := bestValueOf(t, rnd, space, obj, budget, seed)
		sumHyperband += bestValueOf(t, BOHB{RandomFraction: 1}, space, obj, budget, seed)
		sumBOHB += a
		sumRandom += b
		if a < b {
			wins++
		}
	}
	t.Logf("4-D multi-fidelity quadratic, budget %d, mean best over %d seeds: BOHB %.3f, Hyperband (no model) %.3f, Random %.3f; BOHB better on %d seeds",
		budget, seeds, sumBOHB/seeds, sumHyperband/seeds, sumRandom/seeds, wins)
	if !(sumBOHB < 0.7*sumRandom) || wins < seeds*7/10 {
		t.Errorf("BOHB mean %.3f vs Random %.3f (wins %d/%d)", sumBOHB/seeds, sumRandom/seeds, wins, seeds)
	}
}

// Failed evaluations cost their fidelity, are never promoted, and the search goes on; an
// objective that always fails still ends within the budget.
func TestBOHBFailures(t *testing.T) {
	space, inner := multiFidelity()
	obj := func(ctx context.Context, cfg Config, z float64) (float64, error) {
		switch a := cfg.Float("a"); {
		case a > 3:
			return 0, errors.New("diverged")
		case a < -3:
			return math.Inf(1), nil
		}
		return inner(ctx, cfg, z)
	}
	const budget = 30
	trials, err := BOHB{}.Search(context.Background(), rand.New(rand.NewPCG(9, 9)), space, obj, budget)
	if err != nil {
		t.Fatal(err)
	}
	spent, failed := 0.0, 0
	var failedConfigs [][]float64
	for _, tr := range trials {
		spent += tr.Fidelity
		if slices.ContainsFunc(failedConfigs, func(v []float64) bool { return sameFloats(v, tr.Config.Values) }) {
			t.Errorf("trial %d re-evaluates a configuration that failed", tr.ID)
		}
		if tr.State == Failed {
			failed++
			failedConfigs = append(failedConfigs, tr.Config.Values)
		}
	}
	if failed == 0 || spent > budget+1e-9 || budget-spent >= 1 {
		t.Errorf("%d failures, spent %v of %d", failed, spent, budget)
	}
	if best, err := Best(trials); err != nil || best.Value > 5 {
		t.Errorf("best %v (%v)", best.Value, err)
	}

	calls := 0
	always := func(context.Context, Config, float64) (float64, error) { calls++; return math.NaN(), nil }
	trials, err = BOHB{}.Search(context.Background(), rand.New(rand.NewPCG(9, 9)), space, always, 5)
	spent, full := 0.0, 0
	for _, tr := range trials {
		spent += tr.Fidelity
		if tr.Fidelity == 1 {
			full++
		}
		if tr.State != Failed {
			t.Fatalf("trial %d is %v", tr.ID, tr.State)
		}
	}
	if err != nil || calls != len(trials) || spent > 5+1e-9 || full == 0 {
		t.Errorf("always failing: %v, %d calls, %d trials, spent %v, %d at full fidelity", err, calls, len(trials), spent, full)
	}
}

func TestBOHBCancel(t *testing.T) {
	space, inner := multiFidelity()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	obj := func(ctx context.Context, cfg Config, z float64) (float64, error) {
		if calls++; calls == 5 {
			cancel()
		}
		return inner(ctx, cfg, z)
	}
	trials, err := BOHB{}.Search(ctx, rand.New(rand.NewPCG(1, 1)), space, obj, 30)
	if !errors.Is(err, context.Canceled) || len(trials) != 5 || trials[4].State != Failed {
		t.Errorf("after cancel: %v, %d trials, last %+v", err, len(trials), trials[len(trials)-1])
	}
}

// The product KDE is a density: on one continuous and one categorical dimension it
// integrates to 1.
func TestProductKDE(t *testing.T) {
	data := [][]float64{{0.2, 0}, {0.25, 2}, {0.7, 2}, {0.9, 1}, {0.5, 2}}
	k := newProductKDE(data, []int{0, 3}, 1e-3)
	for j, bw := range k.bw {
		if !(bw > 0) {
			t.Fatalf("bandwidth %d is %v", j, bw)
		}
	}
	if k.bw[1] > 2.0/3 {
		t.Errorf("categorical bandwidth %v above (k−1)/k", k.bw[1])
	}
	total := 0.0
	const n = 4000
	for c := range 3 {
		for i := range n {
			x := -3 + 7*(float64(i)+0.5)/n
			total += math.Exp(k.logPDF([]float64{x, float64(c)})) * 7 / n
		}
	}
	if math.Abs(total-1) > 1e-6 {
		t.Errorf("density integrates to %v", total)
	}
	same := newProductKDE([][]float64{{0.5}, {0.5}, {0.5}}, []int{0}, 1e-3)
	if same.bw[0] != 1e-3 {
		t.Errorf("bandwidth of identical points %v, want the minimum", same.bw[0])
	}
}
