package ahsc

import (
	"math"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
)

// screening is one of an AHSC variant's N1 screenings (convexity.Screened) and, when it was
// among the N2 fully trained, that training's validation objective and test metric.
type screening struct {
	config     string
	score      float64 // μ (ahsc), the validation loss (ahsc-valloss) or ‖H‖_F² (ahsc-hessian); NaN when it failed
	reason     string  // why it was dropped before the ranking; "" when ranked
	trained    bool    // among the configurations trained fully (a failed training too)
	objective  float64 // the full training's validation objective (NaN when not trained or failed)
	testMetric float64 // its test metric, from the run's evaluations (NaN when not trained or failed)
}

type screeningJSON struct {
	Config     string          `json:"config"`
	Score      experiments.F64 `json:"score"`
	Reason     string          `json:"dropped_reason,omitempty"`
	Trained    bool            `json:"trained,omitempty"`
	Objective  experiments.F64 `json:"val_objective"`
	TestMetric experiments.F64 `json:"test_metric"`
}

// matchScreenings pairs the full trainings with the screenings by configuration (each trial
// with the first ranked screening of its configuration not yet paired) and takes each trained
// configuration's test metric from the run's full-fidelity evaluations.
func (r *run) matchScreenings(screened []convexity.Screened, trials []search.Trial) {
	r.screenings = make([]screening, len(screened))
	for i, s := range screened {
		r.screenings[i] = screening{config: s.Config.String(), score: s.Score, reason: s.Reason, objective: math.NaN(), testMetric: math.NaN()}
	}
	for _, t := range trials {
		c := t.Config.String()
		for i := range r.screenings {
			s := &r.screenings[i]
			if s.trained || s.reason != "" || s.config != c {
				continue
			}
			s.trained = true
			if t.State == search.Complete {
				s.objective = t.Value
				if e, ok := r.lastEval(c); ok {
					s.testMetric = e.testMetric
				}
			}
			break
		}
	}
}

func screeningsToJSON(ss []screening) []screeningJSON {
	var out []screeningJSON
	for _, s := range ss {
		out = append(out, screeningJSON{Config: s.config, Score: f64(s.score), Reason: s.reason, Trained: s.trained,
			Objective: f64(s.objective), TestMetric: f64(s.testMetric)})
	}
	return out
}

func screeningsFromJSON(js []screeningJSON) []screening {
	var out []screening
	for _, j := range js {
		out = append(out, screening{config: j.Config, score: float64(j.Score), reason: j.Reason, trained: j.Trained,
			objective: float64(j.Objective), testMetric: float64(j.TestMetric)})
	}
	return out
}

// screeningsTable lists every screening of every AHSC variant's search, in sampling order,
// with the full training's validation objective and test metric where it was trained (issue
// 18: μ against the final metric).
func screeningsTable(runs []run) experiments.Table {
	t := experiments.Table{Name: "screenings", Detail: true, Columns: []string{"dataset", "repeat", "method", "index", "config", "score",
		"dropped_reason", "trained", "val_objective", "test_metric"}}
	for _, r := range runs {
		if r.hidden {
			continue
		}
		for i, s := range r.screenings {
			t.Add(r.dataset, r.repeat, r.method, i, s.config, s.score, s.reason, s.trained, s.objective, s.testMetric)
		}
	}
	return t
}
