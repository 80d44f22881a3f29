package ahsc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/hyperflat/hyperflat/search"
)

// BOHB as the authors' OpenML code runs it, method bohb under --protocol authors on the
// OpenML sets. hpobench/bohb_hpo.py (yrahul3910/flatness-guided-hpo) calls the bohb-hpo
// package (goktug97/bohb-hpo, BOHB.optimize) with min_budget 1 and max_budget 30, its budget
// the epochs of one Keras fit with the protocol's early stopping, scored on the test fold;
// then it trains the configuration of the best score at any budget for the full 200 epochs
// and reports that. The package's optimize is one Hyperband round of s_max + 1 = 4 brackets
// whose rung sizes follow its own recurrence (n ← ⌈n·η^−i/η⌉ with the updated n), so the
// brackets are 27 configurations at 1 epoch, 9 at 3, 1 at 10, 1 at 30; 12 at 3, 4 at 10, 1
// at 29 (int(3.33…·9) = int(29.99…)); 6 at 10, 2 at 30; 4 at 30 — 67 fits, 439 epochs at
// most. A rung's configurations
// are the best of the rung before, drawn in random order; the first rung's are random.
// Its KDE only fits once a rung's best 15% outnumber the dimensions plus 2 (more than 7 of
// the authors' 5 hyperparameters, so rungs of 47 or more): never in this round, so every
// configuration is random or promoted, and authorsBOHBSearch refuses a setting where the
// KDE would fit rather than silently skip it.
const (
	bohbHPOMinBudget    = 1.0
	bohbHPOMaxBudget    = 30.0
	bohbHPOEta          = 3.0
	bohbHPOBestFraction = 0.15
	bohbHPODims         = 5 // the authors' space: depth, width, batch_size, alpha, learning_rate_init
)

// bohbHPORung is one rung of the round: how many configurations, and at how many epochs.
type bohbHPORung struct{ configs, epochs int }

// bohbHPOBrackets is the package's round for its min and max budget and η, brackets in the
// order it runs them (s = s_max, …, 0).
func bohbHPOBrackets() [][]bohbHPORung {
	sMax := int(math.Log(bohbHPOMaxBudget/bohbHPOMinBudget) / math.Log(bohbHPOEta))
	budget := float64(sMax+1) * bohbHPOMaxBudget
	var out [][]bohbHPORung
	for s := sMax; s >= 0; s-- {
		n := int(math.Ceil(budget * math.Pow(bohbHPOEta, float64(s)) / (bohbHPOMaxBudget * float64(s+1))))
		r := bohbHPOMaxBudget * math.Pow(bohbHPOEta, float64(-s))
		var rungs []bohbHPORung
		for i := 0; i <= s; i++ {
			ni := float64(n) * math.Pow(bohbHPOEta, float64(-i))
			ri := r * math.Pow(bohbHPOEta, float64(i))
			rungs = append(rungs, bohbHPORung{configs: n, epochs: int(ri)})
			n = int(math.Ceil(ni / bohbHPOEta))
		}
		out = append(out, rungs)
	}
	return out
}

// authorsBOHBSearch runs the round through obj, whose fidelity f trains ⌈f·epochs⌉ epochs (a
// rung of e epochs is fidelity e/epochs), then evaluates at full fidelity the configuration
// of least value over every rung. A failed fit counts as the worst value, as the authors'
// eval returns a zero AUC on an error.
func authorsBOHBSearch(ctx context.Context, space search.Space, obj search.Objective, rng *rand.Rand, epochs int) ([]search.Trial, error) {
	if epochs < int(bohbHPOMaxBudget) {
		return nil, fmt.Errorf("ahsc: the authors' BOHB trains up to %g epochs a rung; a full training of %d epochs is shorter", bohbHPOMaxBudget, epochs)
	}
	var trials []search.Trial
	evaluate := func(cfg search.Config, fidelity float64) (float64, error) {
		v, err := obj(ctx, cfg, fidelity)
		t := search.Trial{ID: len(trials), Config: cfg, Fidelity: fidelity, Value: v, State: search.Complete}
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = fmt.Errorf("objective value %v", v)
		}
		if err != nil {
			t.State, t.Err, t.Value = search.Failed, err.Error(), math.NaN()
		}
		trials = append(trials, t)
		return t.Value, err
	}
	best, bestValue := search.Config{}, math.Inf(1)
	for _, rungs := range bohbHPOBrackets() {
		var promoted []search.Config
		for i, rung := range rungs {
			if n := int(math.Ceil(bohbHPOBestFraction * float64(rung.configs))); n > bohbHPODims+2 {
				return trials, fmt.Errorf("ahsc: a rung of %d configurations would fit bohb-hpo's KDE, which is not implemented", rung.configs)
			}
			cfgs := make([]search.Config, rung.configs)
			values := make([]float64, rung.configs)
			for j := range cfgs {
				if len(promoted) > 0 {
					k := rng.IntN(len(promoted))
					cfgs[j] = promoted[k]
					promoted = append(promoted[:k], promoted[k+1:]...)
				} else {
					c, err := (search.Random{}).Ask(rng, space, nil)
					if err != nil {
						return trials, err
					}
					cfgs[j] = c
				}
				v, err := evaluate(cfgs[j], float64(rung.epochs)/float64(epochs))
				if ctx.Err() != nil {
					return trials, ctx.Err()
				}
				if err != nil {
					v = math.Inf(1)
				}
				values[j] = v
				if v < bestValue {
					best, bestValue = cfgs[j], v
				}
			}
			// the next rung's configurations: this rung's best, as many as it evaluates
			order := make([]int, len(cfgs))
			for j := range order {
				order[j] = j
			}
			sort.SliceStable(order, func(a, b int) bool { return values[order[a]] < values[order[b]] })
			next := 0
			if i+1 < len(rungs) {
				next = rungs[i+1].configs
			}
			promoted = promoted[:0]
			for _, j := range order[:min(next, len(order))] {
				promoted = append(promoted, cfgs[j])
			}
		}
	}
	if math.IsInf(bestValue, 1) {
		return trials, errors.New("ahsc: every fit of the authors' BOHB failed")
	}
	evaluate(best, 1)
	return trials, ctx.Err()
}

// bohbAuthors names the authors' BOHB among searchWith's algorithms (runOne picks it for
// method bohb under the authors' protocol on the OpenML sets).
const bohbAuthors = "bohb-authors"
