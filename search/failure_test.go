package search

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// breaking is a 2-d objective that fails on the third of the square where x > 2/3, in the
// three ways an evaluation can: an error, a NaN and an infinite value. It records every
// configuration it was asked to evaluate, and fails the test if it is ever given one outside
// the space.
func breaking(t *testing.T) Objective {
	return func(_ context.Context, cfg Config, f float64) (float64, error) {
		x, y := cfg.Float("x"), cfg.Float("y")
		if !(x >= 0 && x <= 1 && y >= 0 && y <= 1) || !(f > 0 && f <= 1) {
			t.Errorf("evaluated outside the space: %v at fidelity %v", cfg, f)
		}
		if x > 2.0/3 {
			switch int(y*3) % 3 {
			case 0:
				return 0, errors.New("training diverged: the training loss is NaN")
			case 1:
				return math.NaN(), nil
			default:
				return math.Inf(1), nil
			}
		}
		return (x-0.3)*(x-0.3) + (y-0.5)*(y-0.5) + 0.01*(1-f), nil
	}
}

func TestEveryMethodSurvivesFailingConfigurations(t *testing.T) {
	space := Space{FloatParam("x", 0, 1, false), FloatParam("y", 0, 1, false)}
	const budget = 30
	methods := []Method{
		Sequential{Label: "random", Sampler: Random{}},
		Sequential{Label: "tpe", Sampler: TPE{NStartup: 8}},
		BOHB{},
		HEBO{Candidates: 200, Population: 40, Generations: 5},
		TuRBO{},
	}
	for _, m := range methods {
		t.Run(m.Name(), func(t *testing.T) {
			trials, err := m.Search(context.Background(), rand.New(rand.NewPCG(3, 4)), space, breaking(t), budget)
			if err != nil {
				t.Fatalf("search failed: %v", err)
			}
			cost, failed := 0.0, 0
			for _, tr := range trials {
				cost += tr.Fidelity
				bad := tr.Config.Float("x") > 2.0/3
				switch {
				case bad && (tr.State != Failed || tr.Err == "" || !math.IsNaN(tr.Value)):
					t.Errorf("trial %d at %v should have failed: %+v", tr.ID, tr.Config, tr)
				case !bad && tr.State != Complete:
					t.Errorf("trial %d at %v should be complete: %+v", tr.ID, tr.Config, tr)
				}
				if tr.State == Failed {
					failed++
				}
			}
			if failed != Failures(trials) || failed == 0 {
				t.Errorf("%d failed trials (Failures says %d); the failing third of the space was never tried", failed, Failures(trials))
			}
			// Failed evaluations count against the budget: the evaluations' total fidelity
			// (every one of them, failed or not) is the budget.
			if _, ok := m.(BOHB); ok {
				if cost > budget+1e-6 || cost < budget-1 {
					t.Errorf("BOHB spent %v of a budget of %d", cost, budget)
				}
			} else if len(trials) != budget || cost != budget {
				t.Errorf("%d trials costing %v for a budget of %d", len(trials), cost, budget)
			}
			best, err := Best(trials)
			if err != nil {
				t.Fatal(err)
			}
			if best.State != Complete || math.IsNaN(best.Value) || math.IsInf(best.Value, 0) ||
				best.Config.Float("x") > 2.0/3 || best.Value > 0.05 {
				t.Errorf("best %+v", best)
			}
			t.Logf("%d of %d trials failed; best %v at %v", failed, len(trials), best.Value, best.Config)
		})
	}
}

// TestModelsIgnoreNonFiniteCompleteTrials hands the model-based samplers a history in which
// some "complete" trials carry NaN or infinite values (a hand-built list; Study.Tell never
// makes one): they must still propose a configuration inside the space.
func TestModelsIgnoreNonFiniteCompleteTrials(t *testing.T) {
	space := Space{FloatParam("x", 0, 1, false), FloatParam("y", 0, 1, false)}
	rng := rand.New(rand.NewPCG(5, 6))
	var trials []Trial
	for i := 0; i < 24; i++ {
		cfg, _ := Random{}.Ask(rng, space, nil)
		v := cfg.Float("x") + cfg.Float("y")
		st := Complete
		switch i % 4 {
		case 0: // first, so that a Best comparing with < would keep it
			v = math.NaN()
		case 2:
			v, st = math.NaN(), Failed
		case 3:
			v = math.Inf(1)
		}
		trials = append(trials, Trial{ID: i, Config: cfg, Value: v, Fidelity: 1, State: st})
	}
	samplers := map[string]Sampler{
		"tpe":   TPE{NStartup: 5},
		"hebo":  HEBO{Candidates: 100, Population: 20, Generations: 3},
		"turbo": TuRBO{},
	}
	for name, s := range samplers {
		cfg, err := s.Ask(rng, space, trials)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, v := range cfg.Values {
			if !(v >= 0 && v <= 1) {
				t.Errorf("%s proposed %v", name, cfg)
			}
		}
	}
	best, err := Best(trials)
	if err != nil || math.IsNaN(best.Value) || math.IsInf(best.Value, 0) {
		t.Errorf("Best = %+v, %v; want a finite trial", best, err)
	}
	if _, err := Best(trials[2:3:3]); err == nil || !strings.Contains(err.Error(), "1 of 1 failed") {
		t.Errorf("Best of one failed trial: %v", err)
	}
}
