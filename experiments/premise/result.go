package premise

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// measureDef is one quantity the table correlates with generalization.
type measureDef struct {
	name string
	of   func(record) float64
}

// measures are μ and the three Hessian measures, in the table's order.
var measures = []measureDef{
	{"mu", func(r record) float64 { return float64(r.Mu) }},
	{"hessian_trace", func(r record) float64 { return float64(r.Trace) }},
	{"hessian_frobenius", func(r record) float64 { return float64(r.Frobenius) }},
	{"hessian_top_eig", func(r record) float64 { return float64(r.TopEig) }},
}

// usable says whether a record enters the correlations: measured, fully trained and scored.
func usable(r record) bool {
	if r.Err != "" {
		return false
	}
	for _, x := range []float64{float64(r.Mu), float64(r.Trace), float64(r.Frobenius), float64(r.TopEig), float64(r.TrainMetric), float64(r.TestMetric)} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// correlation is one dataset × measure row of the summary: Spearman's ρ of the measure with
// the test metric, with the generalization gap and with μ, over n configurations, and the
// intervals of the first two (spearmanCI; nil where there is none).
type correlation struct {
	dataset, metric, measure string
	n                        int
	test, gap, mu            stats.SpearmanResult
	testCI, gapCI            *stats.Interval
}

// spearman is stats.Spearman, NaN where it is undefined (fewer than two pairs, a constant
// input).
func spearman(x, y []float64) stats.SpearmanResult {
	r, err := stats.Spearman(x, y)
	if err != nil {
		return stats.SpearmanResult{Rho: math.NaN(), P: math.NaN()}
	}
	return r
}

// spearmanCI is ρ's pair-bootstrap 95% interval (stats.SpearmanBootstrap, the pairs of
// configurations resampled, percentile method, experiments.BootResamples resamples from
// experiments.BootSeed); nil where ρ is undefined or there are fewer than three pairs.
func spearmanCI(x, y []float64) *stats.Interval {
	iv, err := stats.SpearmanBootstrap(x, y, stats.BootstrapOptions{Resamples: experiments.BootResamples, Seed: experiments.BootSeed})
	if err != nil {
		return nil
	}
	return &iv
}

// correlations are the summary's rows: for each dataset (in order) and measure, Spearman's ρ
// over the dataset's usable records. The premise holds where ρ with the test metric is
// negative and ρ with the gap positive: the lower the measure, the better the configuration
// generalizes.
func correlations(datasets []string, recs []record) []correlation {
	var out []correlation
	for _, d := range datasets {
		var rs []record
		metric := ""
		for _, r := range recs {
			if r.Dataset == d && usable(r) {
				rs = append(rs, r)
				metric = r.Metric
			}
		}
		test, gap, mu := make([]float64, len(rs)), make([]float64, len(rs)), make([]float64, len(rs))
		for i, r := range rs {
			test[i], gap[i], mu[i] = float64(r.TestMetric), r.gap(), float64(r.Mu)
		}
		for _, m := range measures {
			x := make([]float64, len(rs))
			for i, r := range rs {
				x[i] = m.of(r)
			}
			out = append(out, correlation{dataset: d, metric: metric, measure: m.name, n: len(rs),
				test: spearman(x, test), gap: spearman(x, gap), mu: spearman(x, mu), testCI: spearmanCI(x, test), gapCI: spearmanCI(x, gap)})
		}
	}
	return out
}

// result builds the run's tables from its records.
func result(opt experiments.Options, cfg *Config, tasks []*convexity.Task, recs []record) *experiments.Result {
	res := &experiments.Result{Experiment: "premise", Preset: opt.Preset, Seed: opt.Seed}
	// A run in progress (storedResult) summarizes the datasets it has reached.
	measured := slices.DeleteFunc(slices.Clone(cfg.Datasets), func(d string) bool {
		return !slices.ContainsFunc(recs, func(r record) bool { return r.Dataset == d })
	})
	cs := correlations(measured, recs)
	res.Tables = append(res.Tables, summaryTable(cs))
	res.Answer, res.View, res.Legend = answer(cs)
	if t := figureTable(cfg, recs); len(t.Rows) > 0 {
		res.Tables = append(res.Tables, t)
	}
	configs := configurationsTable(recs)
	configs.AddParams("config") // a param_ column per hyperparameter, for pandas
	res.Tables = append(res.Tables, configs, settingsTable(cfg, tasks, recs))
	if t := curvesTable(recs); len(t.Rows) > 0 {
		res.Tables = append(res.Tables, t)
	}
	if t := notesTable(cfg, recs); len(t.Rows) > 0 {
		res.Tables = append(res.Tables, t)
	}
	return res
}

// summaryTable is the correlations, each ρ with the test metric and the gap followed by its
// interval's ends (NaN where it has none).
func summaryTable(cs []correlation) experiments.Table {
	t := experiments.Table{Name: "summary", Headline: true, Columns: []string{"dataset", "metric", "measure", "n",
		"rho_test", "rho_test_low", "rho_test_high", "p_test", "rho_gap", "rho_gap_low", "rho_gap_high", "p_gap", "rho_mu"}}
	ends := func(ci *stats.Interval) (float64, float64) {
		if ci == nil {
			return math.NaN(), math.NaN()
		}
		return ci.Low, ci.High
	}
	for _, c := range cs {
		tl, th := ends(c.testCI)
		gl, gh := ends(c.gapCI)
		t.Add(c.dataset, c.metric, c.measure, c.n, c.test.Rho, tl, th, c.test.P, c.gap.Rho, gl, gh, c.gap.P, c.mu.Rho)
	}
	return t
}

func configurationsTable(recs []record) experiments.Table {
	t := experiments.Table{Name: "configurations", Detail: true, Columns: []string{"dataset", "index", "config", "params", "mu",
		"hessian_trace", "hessian_trace_se", "hessian_frobenius", "hessian_frobenius_se", "hessian_top_eig", "exact", "hessian_products",
		"metric", "train_metric", "val_metric", "test_metric", "gap", "train_loss", "test_loss", "seconds", "hessian_seconds", "error"}}
	for _, r := range recs {
		t.Add(r.Dataset, r.Index, r.Config, r.Params, float64(r.Mu), float64(r.Trace), float64(r.TraceSE), float64(r.Frobenius),
			float64(r.FrobeniusSE), float64(r.TopEig), r.Exact, r.Products, r.Metric, float64(r.TrainMetric), float64(r.ValMetric),
			float64(r.TestMetric), r.gap(), float64(r.TrainLoss), float64(r.TestLoss), float64(r.Seconds), float64(r.HessianSeconds), r.Err)
	}
	return t
}

func curvesTable(recs []record) experiments.Table {
	t := experiments.Table{Name: "curves", Detail: true, Columns: []string{"dataset", "index", "epoch", "train_loss", "val_loss", "test_loss",
		"train_metric", "test_metric"}}
	for _, r := range recs {
		for _, p := range r.Curves {
			t.Add(r.Dataset, r.Index, p.Epoch, float64(p.TrainLoss), float64(p.ValLoss), float64(p.TestLoss), float64(p.TrainMetric), float64(p.TestMetric))
		}
	}
	return t
}

// fitTraining is the final training metric Figure 1's high-μ configuration must reach: the
// paper's figure contrasts a configuration that generalizes well with one that fits its
// training data yet generalizes worse, which a configuration that never trains (a training
// ROC-AUC of 0.5) cannot show.
const fitTraining = 0.9

// figure1Rule is the rule the high-μ configuration was chosen by, and how many configurations
// met it.
type figure1Rule struct {
	rule       string
	candidates int
}

// figureExtremes are Figure 1's two configurations among the figure dataset's usable records
// with curves ("a landscape with lower strong convexity … with high strong convexity"): lo
// the least μ; hi the greatest μ among those that fit their training data (final training
// metric ≥ fitTraining) and generalize worse than lo (a lower final test metric), or where
// none does, the greatest μ among those that fit, or else the greatest μ of all (the rule
// says which).
func figureExtremes(cfg *Config, recs []record) (lo, hi record, rule figure1Rule, ok bool) {
	var rs []record
	for _, r := range recs {
		if r.Dataset == cfg.Figure && usable(r) && len(r.Curves) > 0 {
			rs = append(rs, r)
		}
	}
	if len(rs) < 2 {
		return lo, hi, rule, false
	}
	byMu := func(a, b record) int { return cmpFloat(float64(a.Mu), float64(b.Mu)) }
	lo = slices.MinFunc(rs, byMu)
	final := func(r record) point { return r.Curves[len(r.Curves)-1] }
	var fit, worse []record
	for _, r := range rs {
		if r.Index == lo.Index || !(float64(final(r).TrainMetric) >= fitTraining) {
			continue
		}
		fit = append(fit, r)
		if final(r).TestMetric < final(lo).TestMetric {
			worse = append(worse, r)
		}
	}
	switch {
	case len(worse) > 0:
		return lo, slices.MaxFunc(worse, byMu), figure1Rule{fmt.Sprintf("the greatest μ among the configurations that fit their training data "+
			"(final training metric ≥ %.2g) and generalize worse than the low-μ one (a lower final test metric)", fitTraining), len(worse)}, true
	case len(fit) > 0:
		return lo, slices.MaxFunc(fit, byMu), figure1Rule{fmt.Sprintf("the greatest μ among the configurations that fit their training data "+
			"(final training metric ≥ %.2g); none of them generalizes worse than the low-μ one", fitTraining), len(fit)}, true
	}
	return lo, slices.MaxFunc(rs, byMu), figure1Rule{fmt.Sprintf("the greatest μ: no other configuration reaches a final training metric "+
		"of %.2g", fitTraining), len(rs) - 1}, true
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// figureTable lists Figure 1's two configurations.
func figureTable(cfg *Config, recs []record) experiments.Table {
	t := experiments.Table{Name: "figure1", Headline: true, Columns: []string{"dataset", "strong_convexity", "index", "config", "mu",
		"hessian_frobenius", "metric", "train_metric", "test_metric", "gap", "epochs", "chosen_by", "candidates"}}
	lo, hi, rule, ok := figureExtremes(cfg, recs)
	if !ok {
		return t
	}
	for _, x := range []struct {
		label string
		r     record
		rule  figure1Rule
	}{{"low", lo, figure1Rule{"the least μ", 1}}, {"high", hi, rule}} {
		last := x.r.Curves[len(x.r.Curves)-1]
		t.Add(x.r.Dataset, x.label, x.r.Index, x.r.Config, float64(x.r.Mu), float64(x.r.Frobenius), x.r.Metric,
			float64(last.TrainMetric), float64(last.TestMetric), float64(last.TrainMetric-last.TestMetric), last.Epoch, x.rule.rule, x.rule.candidates)
	}
	return t
}

func settingsTable(cfg *Config, tasks []*convexity.Task, recs []record) experiments.Table {
	t := experiments.Table{Name: "settings", Columns: []string{"dataset", "metric", "loss", "train", "val", "test", "space", "configs",
		"repeat", "epochs", "hessian_rows", "dtype"}}
	for i, task := range tasks {
		dtype := ""
		for _, r := range recs {
			if r.Dataset == cfg.Datasets[i] && r.Dtype != "" {
				dtype = r.Dtype
				break
			}
		}
		var dims []string
		for _, p := range task.Space {
			dims = append(dims, p.Name)
		}
		rows := task.Train.N
		if cfg.HessianRows > 0 {
			rows = min(rows, cfg.HessianRows)
		}
		t.Add(cfg.Datasets[i], string(task.Metric), string(task.Loss), task.Train.N, task.Val.N, task.Test.N, strings.Join(dims, ","),
			cfg.Configs, cfg.Repeat, task.Epochs, rows, dtype)
	}
	return t
}

// notesTable says, per dataset, how many configurations the correlations leave out and why,
// and where Figure 1's training stopped short.
func notesTable(cfg *Config, recs []record) experiments.Table {
	t := experiments.Table{Name: experiments.NotesTable, Columns: []string{"dataset", "note"}}
	for _, d := range cfg.Datasets {
		var reasons []string
		n := 0
		for _, r := range recs {
			if r.Dataset != d {
				continue
			}
			n++
			if !usable(r) {
				reasons = append(reasons, fmt.Sprintf("%d (%s)", r.Index, firstLine(r.Err)))
			}
			if r.CurvesErr != "" {
				t.Add(d, fmt.Sprintf("configuration %d: Figure 1's training stopped at epoch %d: %s", r.Index, len(r.Curves), firstLine(r.CurvesErr)))
			}
		}
		if len(reasons) > 0 {
			t.Add(d, fmt.Sprintf("%d of %d configurations left out of the correlations: %s", len(reasons), n, strings.Join(reasons, "; ")))
		}
	}
	return t
}

func firstLine(s string) string {
	if s == "" {
		return "a measure or score is not finite"
	}
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:157]) + "..."
	}
	return s
}
