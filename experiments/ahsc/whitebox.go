package ahsc

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/stats"
)

// whiteboxJSON is an evaluation's stored white-box record (convexity.Whitebox); absent from
// the cells of runs without --whitebox and of builds before it, which read as no record.
type whiteboxJSON struct {
	Mu            f64 `json:"mu"`
	Trace         f64 `json:"trace"`
	TraceStdErr   f64 `json:"trace_stderr"`
	Probes        int `json:"probes"`
	TopEigenvalue f64 `json:"top_eigenvalue"`
	// EigenMethod is absent from the records made by power iteration, before Lanczos.
	EigenMethod string `json:"eigen_method,omitempty"`
	PowerIters  int    `json:"power_iters"`
	PowerTol    f64    `json:"power_tol"`
	Eq7         f64    `json:"eq7"`
	Stride      int    `json:"stride"`
	Iterates    int    `json:"iterates"`
	Rows        int    `json:"rows,omitempty"`
	TrainLoss   f64    `json:"train_loss"`
	LossGap     f64    `json:"loss_gap"`
	MetricGap   f64    `json:"metric_gap"`
	Seconds     f64    `json:"seconds"`
}

func whiteboxToJSON(w *convexity.Whitebox) *whiteboxJSON {
	if w == nil {
		return nil
	}
	return &whiteboxJSON{Mu: f64(w.Mu), Trace: f64(w.Trace), TraceStdErr: f64(w.TraceStdErr), Probes: w.Probes,
		TopEigenvalue: f64(w.TopEigenvalue), EigenMethod: w.EigenMethod, PowerIters: w.PowerIters, PowerTol: f64(w.PowerTol), Eq7: f64(w.Eq7),
		Stride: w.Stride, Iterates: w.Iterates, Rows: w.Rows, TrainLoss: f64(w.TrainLoss), LossGap: f64(w.LossGap),
		MetricGap: f64(w.MetricGap), Seconds: f64(w.Seconds)}
}

func (j *whiteboxJSON) whitebox() *convexity.Whitebox {
	if j == nil {
		return nil
	}
	method := j.EigenMethod
	if method == "" {
		method = convexity.EigenPower
	}
	return &convexity.Whitebox{Mu: float64(j.Mu), Trace: float64(j.Trace), TraceStdErr: float64(j.TraceStdErr), Probes: j.Probes,
		TopEigenvalue: float64(j.TopEigenvalue), EigenMethod: method, PowerIters: j.PowerIters, PowerTol: float64(j.PowerTol), Eq7: float64(j.Eq7),
		Stride: j.Stride, Iterates: j.Iterates, Rows: j.Rows, TrainLoss: float64(j.TrainLoss), LossGap: float64(j.LossGap),
		MetricGap: float64(j.MetricGap), Seconds: float64(j.Seconds)}
}

// whiteboxColumns are the evaluations table's columns of the record, in whiteboxValues'
// order; NaN (the method: "") where an evaluation has none.
var whiteboxColumns = []string{"whitebox_mu", "whitebox_trace", "whitebox_trace_stderr", "whitebox_probes",
	"whitebox_top_eigenvalue", "whitebox_power_iters", "whitebox_eq7", "whitebox_stride", "whitebox_iterates", "whitebox_rows",
	"whitebox_train_loss", "whitebox_loss_gap", "whitebox_metric_gap", "whitebox_seconds", "whitebox_eigen_method"}

func whiteboxValues(w *convexity.Whitebox) []any {
	if w == nil {
		out := make([]any, len(whiteboxColumns))
		for i := range out {
			out[i] = math.NaN()
		}
		out[len(out)-1] = ""
		return out
	}
	return []any{w.Mu, w.Trace, w.TraceStdErr, w.Probes, w.TopEigenvalue, w.PowerIters, w.Eq7, w.Stride, w.Iterates, w.Rows,
		w.TrainLoss, w.LossGap, w.MetricGap, w.Seconds, w.EigenMethod}
}

// selection is the configuration one rule returned from a search, and its test results.
type selection struct {
	Rule       string `json:"rule"`
	Zeta       f64    `json:"zeta"`
	Config     string `json:"config"`
	Score      f64    `json:"score"` // what the rule minimized
	TestMetric f64    `json:"test_metric"`
	TestAcc    f64    `json:"test_accuracy"`
	TestNLL    f64    `json:"test_log_loss"`
}

// selectBoth records what each rule returns from the search (validation: search.Best on the
// trials; eq7: convexity.Select on the recorded evaluations at ζ) into r.selections, and
// returns the one rule picks (rule "" is validation).
func (r *run) selectBoth(trials []search.Trial, rule string, zeta float64) (selection, error) {
	best, err := search.Best(trials)
	if err != nil {
		return selection{}, err
	}
	e, ok := r.lastEval(best.Config.String())
	if !ok {
		return selection{}, fmt.Errorf("the selected configuration has no full-fidelity record")
	}
	val := selection{Rule: convexity.ByValidation, Zeta: f64(math.NaN()), Config: e.config, Score: f64(best.Value),
		TestMetric: f64(e.testMetric), TestAcc: f64(e.testAcc), TestNLL: f64(e.testNLL)}
	evals := make([]convexity.Evaluation, len(r.evals))
	for i, e := range r.evals {
		evals[i] = convexity.Evaluation{Fidelity: e.fidelity, ValLoss: e.valLoss, Whitebox: e.wb}
		if e.failed {
			evals[i].Err = fmt.Errorf("failed")
		}
	}
	i, score, err := convexity.Select(evals, convexity.ByEq7, zeta)
	if err != nil {
		if rule == convexity.ByEq7 {
			return selection{}, err
		}
		// A model that trains by its own loop (the sklearn Bayesmark model) has no
		// regularizer: the validation choice stands, the eq7 one is a stated failure.
		r.selections = []selection{val}
		r.failures = append(r.failures, failure{"eq7 selection", "", err.Error()})
		return val, nil
	}
	q := r.evals[i]
	eq7 := selection{Rule: convexity.ByEq7, Zeta: f64(zeta), Config: q.config, Score: f64(score),
		TestMetric: f64(q.testMetric), TestAcc: f64(q.testAcc), TestNLL: f64(q.testNLL)}
	r.selections = []selection{val, eq7}
	if rule == convexity.ByEq7 {
		return eq7, nil
	}
	return val, nil
}

// selectionsTable lists, for every run of a --whitebox run, the configuration each rule
// returned and its test results, side by side; empty for runs without records.
func selectionsTable(runs []run) experiments.Table {
	t := experiments.Table{Name: "selections", Detail: true, Columns: []string{"dataset", "repeat", "method", "zeta",
		"validation_config", "validation_test_metric", "eq7_config", "eq7_score", "eq7_test_metric", "same"}}
	for _, r := range runs {
		if r.hidden || len(r.selections) != 2 {
			continue
		}
		v, e := r.selections[0], r.selections[1]
		t.Add(r.dataset, r.repeat, r.method, float64(e.Zeta), v.Config, float64(v.TestMetric), e.Config, float64(e.Score),
			float64(e.TestMetric), v.Config == e.Config)
	}
	return t
}

// selectionRulesTable compares the rules per dataset and method over the repeats: the median
// test metric of what each returned, and on how many repeats they differ.
func selectionRulesTable(runs []run) experiments.Table {
	t := experiments.Table{Name: "selection_rules", Columns: []string{"dataset", "method", "zeta", "n",
		"validation_median_test_metric", "eq7_median_test_metric", "median_difference", "differ"}}
	type key struct{ dataset, method string }
	var order []key
	groups := map[key][]run{}
	for _, r := range runs {
		if r.hidden || len(r.selections) != 2 {
			continue
		}
		k := key{r.dataset, r.method}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		var val, eq7, diff []float64
		differ := 0
		zeta := math.NaN()
		for _, r := range groups[k] {
			v, e := r.selections[0], r.selections[1]
			zeta = float64(e.Zeta)
			val, eq7 = append(val, float64(v.TestMetric)), append(eq7, float64(e.TestMetric))
			diff = append(diff, float64(e.TestMetric-v.TestMetric))
			if v.Config != e.Config {
				differ++
			}
		}
		t.Add(k.dataset, k.method, zeta, len(val), stats.Median(val), stats.Median(eq7), stats.Median(diff), differ)
	}
	return t
}

// selectionSentence adds the other rule to a --whitebox run's answer: what returning every
// search's configuration by Eq. 7 instead of by validation would have changed ("" for runs
// without records).
func selectionSentence(runs []run) string {
	var val, eq7 []float64
	differ, zeta := 0, math.NaN()
	for _, r := range runs {
		if r.hidden || len(r.selections) != 2 {
			continue
		}
		v, e := r.selections[0], r.selections[1]
		val, eq7, zeta = append(val, float64(v.TestMetric)), append(eq7, float64(e.TestMetric)), float64(e.Zeta)
		if v.Config != e.Config {
			differ++
		}
	}
	if len(val) == 0 {
		return ""
	}
	return fmt.Sprintf("By Eq. 7 (validation loss + %g × regularizer) the searches return another configuration on %d of %d "+
		"runs, with median test metric %s against validation's %s (table selection_rules).", zeta, differ, len(val),
		num(stats.Median(eq7), 4), num(stats.Median(val), 4))
}

// recordSeconds sums the records' seconds per dataset and method of runs, in the order they
// first appear, against the searches' wall seconds (nil when no run recorded).
func recordSeconds(runs []run) []costRow {
	var out []costRow
	at := map[[2]string]int{}
	for _, r := range runs {
		if r.hidden {
			continue
		}
		var records int
		var record float64
		for _, e := range r.evals {
			if e.wb != nil && !math.IsNaN(e.wb.Seconds) {
				records++
				record += e.wb.Seconds
			}
		}
		if records == 0 {
			continue
		}
		k := [2]string{r.dataset, r.method}
		i, ok := at[k]
		if !ok {
			i, at[k] = len(out), len(out)
			out = append(out, costRow{dataset: r.dataset, method: r.method})
		}
		c := &out[i]
		c.records, c.repeats, c.record, c.total = c.records+records, c.repeats+1, c.record+record, c.total+r.seconds
	}
	return out
}

// recordCostSentence adds to a --whitebox run's answer what the records cost: their share of
// the rest of the searches' time, a record's mean milliseconds, and the dataset and method
// where the share was largest ("" for runs without records).
func recordCostSentence(runs []run) string {
	costs := recordSeconds(runs)
	if len(costs) == 0 {
		return ""
	}
	var all costRow
	worst := -1
	for i, c := range costs {
		all.records, all.record, all.total = all.records+c.records, all.record+c.record, all.total+c.total
		if worst < 0 || c.share() > costs[worst].share() {
			worst = i
		}
	}
	s := fmt.Sprintf("The white-box records took %s of the rest of the searches' time (%s ms each, %d records",
		percent(all.share()), num(1000*all.record/float64(all.records), 1), all.records)
	if len(costs) > 1 {
		s += fmt.Sprintf("; most on %s / %s, %s", costs[worst].dataset, costs[worst].method, percent(costs[worst].share()))
	}
	return s + "; table runtime)."
}

// percent writes a share as a whole percentage ("?" when undefined).
func percent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "?"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}
