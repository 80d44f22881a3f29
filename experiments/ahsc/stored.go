package ahsc

import "github.com/hyperflat/hyperflat/experiments"

// evalJSON and runJSON are a cell's stored output.
type evalJSON struct {
	Config     string          `json:"config"`
	Fidelity   experiments.F64 `json:"fidelity"`
	ValMetric  experiments.F64 `json:"val_metric"`
	ValLoss    experiments.F64 `json:"val_loss"`
	TestMetric experiments.F64 `json:"test_metric"`
	TestAcc    experiments.F64 `json:"test_accuracy"`
	TestNLL    experiments.F64 `json:"test_log_loss"`
	Failed     bool            `json:"failed,omitempty"`
	Whitebox   *whiteboxJSON   `json:"whitebox,omitempty"`
}

type runJSON struct {
	Dataset    string          `json:"dataset"`
	Repeat     int             `json:"repeat"`
	Method     string          `json:"method"`
	Hidden     bool            `json:"hidden,omitempty"`
	Seconds    experiments.F64 `json:"seconds"`
	Config     string          `json:"config"`
	Objective  experiments.F64 `json:"val_objective"`
	TestMetric experiments.F64 `json:"test_metric"`
	TestAcc    experiments.F64 `json:"test_accuracy"`
	TestNLL    experiments.F64 `json:"test_log_loss"`
	Value      experiments.F64 `json:"value"`
	GenScore   experiments.F64 `json:"generalization_score"`
	Evals      []evalJSON      `json:"evaluations"`
	Calls      int             `json:"calls"`
	Failed     int             `json:"failed"`
	Screened   int             `json:"screened"`
	ScreenLost int             `json:"screen_dropped"`
	Screenings []screeningJSON `json:"screenings,omitempty"`
	Failures   []failure       `json:"failures,omitempty"`
	Err        string          `json:"error,omitempty"`
	Selections []selection     `json:"selections,omitempty"`
}

type f64 = experiments.F64

func (r run) toJSON() runJSON {
	j := runJSON{Dataset: r.dataset, Repeat: r.repeat, Method: r.method, Hidden: r.hidden, Seconds: f64(r.seconds),
		Config: r.config, Objective: f64(r.objective), TestMetric: f64(r.testMetric), TestAcc: f64(r.testAcc), TestNLL: f64(r.testNLL),
		Value: f64(r.value), GenScore: f64(r.genScore), Calls: r.calls, Failed: r.failed, Screened: r.screened, ScreenLost: r.screenLost, Err: r.err, Failures: r.failures,
		Evals: []evalJSON{}, Screenings: screeningsToJSON(r.screenings), Selections: r.selections}
	for _, e := range r.evals {
		j.Evals = append(j.Evals, evalJSON{Config: e.config, Fidelity: f64(e.fidelity), ValMetric: f64(e.valMetric), ValLoss: f64(e.valLoss),
			TestMetric: f64(e.testMetric), TestAcc: f64(e.testAcc), TestNLL: f64(e.testNLL), Failed: e.failed, Whitebox: whiteboxToJSON(e.wb)})
	}
	return j
}

func (j runJSON) run() run {
	r := run{dataset: j.Dataset, repeat: j.Repeat, method: j.Method, hidden: j.Hidden, seconds: float64(j.Seconds),
		config: j.Config, objective: float64(j.Objective), testMetric: float64(j.TestMetric), testAcc: float64(j.TestAcc),
		testNLL: float64(j.TestNLL), value: float64(j.Value), genScore: float64(j.GenScore), calls: j.Calls, failed: j.Failed, screened: j.Screened,
		screenLost: j.ScreenLost, err: j.Err, failures: j.Failures, screenings: screeningsFromJSON(j.Screenings), selections: j.Selections}
	for _, e := range j.Evals {
		r.evals = append(r.evals, eval{config: e.Config, fidelity: float64(e.Fidelity), valMetric: float64(e.ValMetric),
			valLoss: float64(e.ValLoss), testMetric: float64(e.TestMetric), testAcc: float64(e.TestAcc), testNLL: float64(e.TestNLL), failed: e.Failed,
			wb: e.Whitebox.whitebox()})
	}
	return r
}
