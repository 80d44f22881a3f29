package premise

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/internal/textable"
	"github.com/hyperflat/hyperflat/stats"
)

// TestCorrelationIntervals checks ρ's intervals: a measure that falls as the test metric rises
// has ρ = −1 on every resample of 5 pairs but those of one pair (probability 5/5⁵, inside
// the 2.5% tail), so its interval is [−1, −1]; the others are the pair bootstrap recomputed
// directly with the report's settings, ordered and holding ρ; a dataset of two
// configurations has none (and the page prints its ρ alone).
func TestCorrelationIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var recs []record
	for i := range 5 {
		test := 0.9 - 0.1*float64(i)
		recs = append(recs, record{Dataset: "iris", Index: i, Metric: "accuracy", Mu: f64(float64(i + 1)), Trace: f64(rng.Float64()),
			Frobenius: f64(rng.Float64()), TopEig: f64(rng.Float64()), TrainMetric: f64(0.9 + 0.05*rng.Float64()), TestMetric: f64(test)})
	}
	for i := range 30 {
		x := rng.NormFloat64()
		recs = append(recs, record{Dataset: "wine", Index: i, Metric: "accuracy", Mu: f64(x), Trace: f64(rng.Float64()), Frobenius: f64(x + rng.NormFloat64()),
			TopEig: f64(rng.Float64()), TrainMetric: f64(1), TestMetric: f64(0.8 - 0.05*x + 0.05*rng.NormFloat64())})
	}
	recs = append(recs, record{Dataset: "breast", Index: 0, Metric: "accuracy", Mu: 1, Trace: 1, Frobenius: 1, TopEig: 1, TrainMetric: 1, TestMetric: 0.5},
		record{Dataset: "breast", Index: 1, Metric: "accuracy", Mu: 2, Trace: 2, Frobenius: 2, TopEig: 2, TrainMetric: 1, TestMetric: 0.6})
	cs := correlations([]string{"breast", "iris", "wine"}, recs)
	opt := stats.BootstrapOptions{Resamples: experiments.BootResamples, Seed: experiments.BootSeed}
	for _, c := range cs {
		var x, test, gap []float64
		for _, r := range recs {
			if r.Dataset == c.dataset {
				x, test, gap = append(x, measureOf(c.measure, r)), append(test, float64(r.TestMetric)), append(gap, r.gap())
			}
		}
		if c.dataset == "breast" {
			if c.testCI != nil || c.gapCI != nil {
				t.Errorf("c/%s: two configurations have intervals %v, %v", c.measure, c.testCI, c.gapCI)
			}
			continue
		}
		for _, k := range []struct {
			what string
			rho  float64
			ci   *stats.Interval
			y    []float64
		}{{"test", c.test.Rho, c.testCI, test}, {"gap", c.gap.Rho, c.gapCI, gap}} {
			want, err := stats.SpearmanBootstrap(x, k.y, opt)
			if err != nil {
				t.Fatal(err)
			}
			if k.ci == nil || *k.ci != want {
				t.Errorf("%s/%s, ρ with the %s: interval %v, the pair bootstrap recomputed %v", c.dataset, c.measure, k.what, k.ci, want)
				continue
			}
			if !(k.ci.Low <= k.rho+1e-12 && k.rho <= k.ci.High+1e-12) {
				t.Errorf("%s/%s, ρ with the %s: interval %v misses ρ = %v", c.dataset, c.measure, k.what, *k.ci, k.rho)
			}
		}
		if c.dataset == "iris" && c.measure == "mu" {
			near(t, "iris: ρ(μ, test)'s low end", c.testCI.Low, -1, 1e-12)
			near(t, "iris: ρ(μ, test)'s high end", c.testCI.High, -1, 1e-12)
		}
	}
	// The summary and the page carry the same ends.
	sum := summaryTable(cs)
	md, err := Markdown("cmd", StoredRun{ID: 1, Result: &experiments.Result{Experiment: "premise", Tables: []experiments.Table{sum,
		configurationsTable(recs), settingsTable(&Config{}, nil, recs)}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if lo, hi := sum.Float(i, "rho_gap_low"), sum.Float(i, "rho_gap_high"); c.gapCI != nil && (lo != c.gapCI.Low || hi != c.gapCI.High) {
			t.Errorf("summary row %d: gap interval [%v, %v], want %v", i, lo, hi, *c.gapCI)
		}
		if c.dataset != "wine" {
			continue
		}
		row := fmt.Sprintf("| wine | accuracy | %s | 30 | %.2f [%.2f, %.2f] | %s | %.2f [%.2f, %.2f] |", c.measure, c.test.Rho, c.testCI.Low, c.testCI.High,
			pval(c.test.P), c.gap.Rho, c.gapCI.Low, c.gapCI.High)
		if !strings.Contains(string(md), row) {
			t.Errorf("premise.md lacks %q:\n%s", row, md)
		}
	}
	if !strings.Contains(string(md), "| breast | accuracy | mu | 2 | 1.00 | — |") || !strings.Contains(string(md), "10000 resamples from seed 1") {
		t.Errorf("premise.md: a ρ without an interval, or the interval's making, is not as expected:\n%s", md)
	}
}

func measureOf(name string, r record) float64 {
	for _, m := range measures {
		if m.name == name {
			return m.of(r)
		}
	}
	panic("no measure " + name)
}

// TestAnswerIntervals: the terminal's rows give each ρ its interval, within the terminal's
// width on the study's longest names, and the sentence gives the mean ρ's interval over the
// datasets.
func TestAnswerIntervals(t *testing.T) {
	var cs []correlation
	for _, d := range []string{"blood-transfusion", "australian"} {
		for _, m := range measures {
			cs = append(cs, correlation{dataset: d, metric: "roc-auc", measure: m.name, n: 60,
				test: stats.SpearmanResult{Rho: -0.3512, P: 0.006}, gap: stats.SpearmanResult{Rho: -0.2813, P: 0.03},
				testCI: &stats.Interval{Low: -0.5531, High: -0.1111}, gapCI: &stats.Interval{Low: -0.4999, High: -0.0123}})
		}
	}
	cs[0].test.Rho, cs[4].test.Rho = -0.5, -0.1 // mu: mean −0.3; the others −0.3512
	cs[4].testCI = &stats.Interval{Low: -0.35, High: 0.15}
	sentence, view, legend := answer(cs)
	if got := view.String(1, "rho_test"); got != "-0.35* [-0.55, -0.11]" {
		t.Errorf("rho_test cell %q", got)
	}
	want := experiments.Interval(-0.3, experiments.BootCI([]float64{-0.5, -0.1}, stats.Mean), experiments.Digits(2))
	if !strings.Contains(sentence, "mu last ("+want+")") {
		t.Errorf("the sentence lacks mu's mean with its interval %q: %s", want, sentence)
	}
	// One dataset: the sentence's ρ carry their pair-bootstrap intervals.
	if one, _, _ := answer(cs[4:]); !strings.Contains(one, "mu last (-0.10 [-0.35, 0.15])") ||
		!strings.Contains(one, "ranks first (-0.35 [-0.55, -0.11])") {
		t.Errorf("one dataset: the sentence lacks ρ's intervals: %s", one)
	}
	res := &experiments.Result{Answer: sentence, View: view, Legend: legend}
	var b bytes.Buffer
	if err := res.WriteTables(&b, false); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if utf8.RuneCountInString(line) > textable.Width {
			t.Errorf("a line of %d columns: %q", utf8.RuneCountInString(line), line)
		}
	}
	if !strings.Contains(b.String(), "| -0.28* [-0.50, -0.01] |") && !strings.Contains(b.String(), "-0.28* [-0.50, -0.01]") {
		t.Errorf("the terminal view lacks ρ_gap's interval:\n%s", b.String())
	}
}

// TestVerdictIntervals: the verdict cites each significant ρ with its interval, as the table
// writes it (a hand-made summary: μ significant with the test metric, the trace against the
// premise with the gap).
func TestVerdictIntervals(t *testing.T) {
	s := experiments.Table{Name: "summary", Columns: []string{"dataset", "metric", "measure", "n",
		"rho_test", "rho_test_low", "rho_test_high", "p_test", "rho_gap", "rho_gap_low", "rho_gap_high", "p_gap", "rho_mu"}}
	s.Add("australian", "roc-auc", "mu", 60, -0.35, -0.58, -0.08, 0.006, 0.15, -0.15, 0.45, 0.257, 1.0)
	s.Add("australian", "roc-auc", "hessian_trace", 60, 0.10, -0.2, 0.4, 0.4, -0.42, -0.66, -0.13, 0.001, 0.33)
	res := &experiments.Result{Experiment: "premise", Tables: []experiments.Table{s}}
	v := verdict([]datasetRows{{dataset: "australian", run: StoredRun{ID: 1, Result: res}, rows: []int{0, 1}}}, nil)
	for _, want := range []string{"(australian ρ = -0.35 [-0.58, -0.08], p = 0.006)", "hessian_trace on australian, ρ_gap = -0.42 [-0.66, -0.13]"} {
		if !strings.Contains(v, want) {
			t.Errorf("the verdict lacks %q:\n%s", want, v)
		}
	}
}
