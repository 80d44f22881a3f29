package premise

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/experiments/experimenttest"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/stats"
	"github.com/hyperflat/hyperflat/store"
)

// tiny is a run small enough for CI on the embedded iris: four configurations, some of whose
// Hessians are exact (≤ 500 parameters) and some estimated.
var tiny = map[string]string{"datasets": "iris", "configs": "4", "epochs": "3", "probes": "4", "lanczos": "3", "figure": "iris"}

func tinyConfig(t *testing.T) *Config {
	t.Helper()
	cfg, err := Experiment().Configure(experiments.Quick, tiny)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.(*Config)
}

func TestConfig(t *testing.T) {
	experimenttest.CheckConfig(t, Experiment())
	experimenttest.CheckStoredConfig(t, Experiment(), experiments.Options{Preset: experiments.Quick, Seed: 3, Config: tinyConfig(t)}, true)
}

func TestFinishRefuses(t *testing.T) {
	for flags, want := range map[[2]string]string{
		{"datasets", "iris,mnist"}: "datasets",
		{"figure", "australian"}:   "figure",
		{"configs", "1"}:           "configs",
		{"max-log2-width", "11"}:   "max-log2-width",
		{"adam", "keras"}:          "adam",
	} {
		cfg, err := Experiment().Configure(experiments.Quick, map[string]string{flags[0]: flags[1]})
		if err == nil {
			err = cfg.Finish(experiments.Quick)
		}
		var fe *experiments.FlagError
		if !errors.As(err, &fe) || fe.Flag != want {
			t.Errorf("--%s %s: error %v, want one about --%s", flags[0], flags[1], err, want)
		}
	}
	cfg := defaultConfig(t, experiments.PaperScale)
	if cfg.Configs < 50 || len(cfg.Datasets) < 4 || cfg.Figure != "australian" {
		t.Errorf("the paper preset measures %d configurations of %v, figure %q", cfg.Configs, cfg.Datasets, cfg.Figure)
	}
}

// The models train with the Adam form --adam names, through the ahsc experiment's own flag;
// torch is stored as the runs before the flag were (no adam key), so they resume as before.
func TestAdamFlag(t *testing.T) {
	for flag, want := range map[string]string{"": "hat", "hat": "hat", "torch": ""} {
		flags := map[string]string{}
		if flag != "" {
			flags["adam"] = flag
		}
		cfg, err := Experiment().Configure(experiments.Quick, flags)
		if err == nil {
			err = cfg.Finish(experiments.Quick)
		}
		if err != nil {
			t.Fatalf("--adam %q: %v", flag, err)
		}
		c := cfg.(*Config)
		if c.Adam != want {
			t.Errorf("--adam %q: Config.Adam %q, want %q", flag, c.Adam, want)
		}
		ao, err := ahscOptions(experiments.Options{}, c, "iris")
		if err != nil {
			t.Fatal(err)
		}
		ac := ao.Config.(*ahsc.Config)
		if ac.Adam != want {
			t.Errorf("--adam %q: the ahsc experiment's Adam %q, want %q", flag, ac.Adam, want)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(b), `"adam"`); has != (want != "") {
			t.Errorf("--adam %q: stored config %s", flag, b)
		}
	}
}

// TestMeasureAsAHSC checks that a configuration is sampled from the ahsc experiment's space
// by its cell's seed, screened to the μ AHSC ranks it by, and fully trained to the test
// metric the ahsc experiment's objective reports for it.
func TestMeasureAsAHSC(t *testing.T) {
	ctx := context.Background()
	cfg := tinyConfig(t)
	opt := experiments.Options{Preset: experiments.Quick, Seed: 5}
	ao, err := ahscOptions(opt, cfg, "iris")
	if err != nil {
		t.Fatal(err)
	}
	task, err := ahsc.TrialTask(ctx, ao, 0)
	if err != nil {
		t.Fatal(err)
	}
	seed := cellSeed(opt.Seed, "iris", 1)
	r, err := measure(ctx, task, cfg, "iris", 1, seed, true)
	if err != nil || r.Err != "" {
		t.Fatalf("measure: %v %s", err, r.Err)
	}
	hp, _ := (search.Random{}).Ask(rand.New(rand.NewPCG(seed, 0)), ahsc.BayesmarkSpace(), nil)
	if r.Config != hp.String() {
		t.Errorf("configuration %s, want %s", r.Config, hp)
	}
	if s := (&convexity.AHSC{Task: task}).Screen(ctx, hp, nil); float64(r.Mu) != s.Score {
		t.Errorf("μ = %v, AHSC screens %v", r.Mu, s.Score)
	}
	// (Its validation metric is the cross-validation's on Bayesmark's sets; ours is the
	// early-stopping split's.)
	if e := task.Evaluate(ctx, hp, 1); e.Err != nil || float64(r.TestMetric) != e.TestMetric {
		t.Errorf("test metric %v; the ahsc objective's %v (%v)", r.TestMetric, e.TestMetric, e.Err)
	}
	if len(r.Curves) < 2 || r.Curves[0].Epoch != 1 {
		t.Errorf("curves %+v", r.Curves)
	}
	if !(r.Frobenius > 0) || !(r.TopEig <= r.Frobenius*(1+1e-9)) || !(math.Abs(float64(r.Trace)) <= math.Sqrt(float64(r.Params))*float64(r.Frobenius)*(1+1e-9)) {
		t.Errorf("inconsistent Hessian measures: λ_max %v, ‖H‖_F %v, tr %v over %d parameters", r.TopEig, r.Frobenius, r.Trace, r.Params)
	}
}

// TestCorrelations checks the summary's Spearman correlations on hand-made records, with
// the values worked out by hand: ρ = 1 − 6Σd²/(n(n²−1)).
func TestCorrelations(t *testing.T) {
	var recs []record
	tests := []float64{0.9, 0.8, 0.7, 0.6, 0.5}
	trains := []float64{0.9, 0.9, 0.9, 0.9, 0.9} // gap = 0, 0.1, …, 0.4
	mus := []float64{1, 2, 3, 4, 5}              // μ rises as the test metric falls: ρ = −1
	fros := []float64{2, 1, 4, 3, 5}             // Σd² = 4: ρ with the gap = 1 − 24/120 = 0.8
	for i := range tests {
		recs = append(recs, record{Dataset: "a", Index: i, Metric: "roc-auc", Mu: f64(mus[i]), Trace: f64(-mus[i]), Frobenius: f64(fros[i]),
			TopEig: f64(mus[i]), TrainMetric: f64(trains[i]), TestMetric: f64(tests[i])})
	}
	recs = append(recs, record{Dataset: "a", Index: 5, Err: "screening: diverged", Mu: f64(math.NaN())},
		record{Dataset: "a", Index: 6, Mu: 1, Trace: 1, Frobenius: f64(math.NaN()), TopEig: 1, TrainMetric: 1, TestMetric: 1})
	cs := correlations([]string{"a"}, recs)
	if len(cs) != len(measures) {
		t.Fatalf("%d rows, want %d", len(cs), len(measures))
	}
	byName := map[string]correlation{}
	for _, c := range cs {
		byName[c.measure] = c
		if c.n != 5 || c.metric != "roc-auc" {
			t.Errorf("%s: n = %d, metric %q; want 5 (two records unusable), roc-auc", c.measure, c.n, c.metric)
		}
	}
	near(t, "ρ(μ, test)", byName["mu"].test.Rho, -1, 1e-12)
	near(t, "p(μ, test)", byName["mu"].test.P, 0, 1e-12)
	near(t, "ρ(μ, gap)", byName["mu"].gap.Rho, 1, 1e-12)
	near(t, "ρ(tr, test)", byName["hessian_trace"].test.Rho, 1, 1e-12)
	near(t, "ρ(‖H‖_F, gap)", byName["hessian_frobenius"].gap.Rho, 0.8, 1e-12)
	// scipy.stats.spearmanr([2, 1, 4, 3, 5], [0, .1, .2, .3, .4]).pvalue
	near(t, "p(‖H‖_F, gap)", byName["hessian_frobenius"].gap.P, 0.10408803866182788, 1e-9)
	near(t, "ρ(‖H‖_F, μ)", byName["hessian_frobenius"].mu.Rho, 0.8, 1e-12)
	if one := correlations([]string{"a"}, recs[:1]); !math.IsNaN(one[0].test.Rho) {
		t.Errorf("one configuration: ρ = %v, want NaN", one[0].test.Rho)
	}
}

// TestTinyRun runs the experiment on iris and checks its summary against the
// configurations table it reports, Figure 1's choice, the figures and the Markdown.
func TestTinyRun(t *testing.T) {
	dir := t.TempDir()
	res := experimenttest.Run(t, Experiment(), experiments.Options{Seed: 2, Out: dir}, tiny)
	sum, confs := res.Table("summary"), res.Table("configurations")
	if sum == nil || confs == nil || len(sum.Rows) != len(measures) || len(confs.Rows) != 4 {
		t.Fatalf("tables: %+v", res.Tables)
	}
	for i := range sum.Rows {
		m := sum.String(i, "measure")
		var x, test, gap []float64
		for j := range confs.Rows {
			if confs.String(j, "error") == "" {
				x, test, gap = append(x, confs.Float(j, m)), append(test, confs.Float(j, "test_metric")), append(gap, confs.Float(j, "gap"))
			}
		}
		if sum.Int(i, "n") != len(x) || len(x) < 3 {
			t.Errorf("%s: n = %d, the configurations table has %d usable", m, sum.Int(i, "n"), len(x))
		}
		wantTest, errT := stats.Spearman(x, test)
		wantGap, errG := stats.Spearman(x, gap)
		if errT == nil && sum.Float(i, "rho_test") != wantTest.Rho || errG == nil && sum.Float(i, "p_gap") != wantGap.P {
			t.Errorf("%s: ρ_test %v, p_gap %v; recomputed %v, %v", m, sum.Float(i, "rho_test"), sum.Float(i, "p_gap"), wantTest.Rho, wantGap.P)
		}
	}
	fig := res.Table("figure1")
	if fig == nil || len(fig.Rows) != 2 || !(fig.Float(0, "mu") < fig.Float(1, "mu")) {
		t.Fatalf("figure1: %+v", fig)
	}
	for j := range confs.Rows {
		if mu := confs.Float(j, "mu"); confs.String(j, "error") == "" && mu < fig.Float(0, "mu") {
			t.Errorf("configuration %d's μ %v lies below Figure 1's least", j, mu)
		}
	}
	if fig.String(1, "chosen_by") == "" || fig.Int(1, "candidates") < 1 {
		t.Errorf("Figure 1's high-μ configuration has no rule: %v", fig.Rows[1])
	}
	for _, name := range []string{"premise_figure1_iris.png", "premise_measures_iris.png"} {
		if st, err := os.Stat(dir + "/" + name); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Another worker count gives the same measurements, bit for bit.
	res2 := experimenttest.Run(t, Experiment(), experiments.Options{Seed: 2, Workers: 2}, tiny)
	c2 := res2.Table("configurations")
	for j := range confs.Rows {
		for _, col := range []string{"config", "mu", "hessian_trace", "hessian_frobenius", "hessian_top_eig", "test_metric", "gap"} {
			if a, b := fmt.Sprint(confs.Value(j, col)), fmt.Sprint(c2.Value(j, col)); a != b { // the shortest exact form
				t.Errorf("configuration %d, %s: %s with 1 worker, %s with 2", j, col, a, b)
			}
		}
	}
	md, err := Markdown("hyperflat report --markdown docs", StoredRun{ID: 1, Result: res})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| iris | accuracy | mu | 4 |", "Figure 1", "premise_figure1_iris.png",
		"`hyperflat report --markdown docs`; do not edit by hand. " + experiments.RegenerationData(true) + " The experiment is",
		"(AHSC's premise)\n\n**Verdict.** AHSC's premise, that a low one-epoch strong convexity μ predicts better generalization,"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestWriteMarkdownOfPartialRun stores half of a tiny run (shard 0 of 2) and checks that the
// document is written from the cells done so far, with Figure 1.
func TestWriteMarkdownOfPartialRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &experiments.Runner{Store: st, Experiments: experiments.Registry{Experiment()}}
	opt := experiments.Options{Preset: experiments.Quick, Seed: 4, Config: tinyConfig(t)}
	if _, err := r.Start(ctx, Experiment(), opt, experiments.Mode{Shard: 0, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	path, err := WriteMarkdown(ctx, st, 0, "", filepath.Join(dir, "docs"), "hyperflat report --markdown docs")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| iris | accuracy | mu | 2 |", "| 2 of 4 |", "![Figure 1](premise_figure1_iris.png)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("premise.md lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "docs", "premise_figure1_iris.png")); err != nil {
		t.Error(err)
	}
	if p, err := WriteMarkdown(ctx, st, 99, "", dir, "x"); p != "" || err != nil {
		t.Errorf("run 99: %q, %v; want nothing written", p, err)
	}
}

// TestFigure1Rule checks the rule that picks Figure 1's high-μ configuration, on records made
// by hand: the greatest μ among those that fit their training data (final training metric
// ≥ 0.9) and end below the low-μ one's test metric; failing that, the greatest μ that fits;
// failing that, the greatest μ.
func TestFigure1Rule(t *testing.T) {
	rec := func(i int, mu, train, test float64) record {
		return record{Dataset: "australian", Index: i, Mu: f64(mu), Trace: 1, Frobenius: 1, TopEig: 1, TrainMetric: f64(train), TestMetric: f64(test),
			Curves: []point{{Epoch: 1, TrainMetric: f64(train), TestMetric: f64(test)}}}
	}
	cfg := &Config{Figure: "australian"}
	low := rec(0, 1, 0.95, 0.93)
	never := rec(1, 1000, 0.5, 0.5)     // the greatest μ, but never trains
	worse := rec(2, 50, 0.96, 0.90)     // fits, generalizes worse
	better := rec(3, 80, 0.97, 0.94)    // fits, generalizes better
	lessWorse := rec(4, 20, 0.92, 0.80) // fits, generalizes worse, smaller μ
	for _, c := range []struct {
		recs       []record
		want       int
		candidates int
		rule       string
	}{
		{[]record{low, never, worse, better, lessWorse}, 2, 2, "generalize worse than the low-μ one"},
		{[]record{low, never, better}, 3, 1, "none of them generalizes worse"},
		{[]record{low, never}, 1, 1, "no other configuration reaches"},
	} {
		lo, hi, rule, ok := figureExtremes(cfg, c.recs)
		if !ok || lo.Index != 0 || hi.Index != c.want || rule.candidates != c.candidates || !strings.Contains(rule.rule, c.rule) {
			t.Errorf("%d records: low %d, high %d, rule %+v; want low 0, high %d, %d candidates, %q", len(c.recs), lo.Index, hi.Index, rule,
				c.want, c.candidates, c.rule)
		}
	}
}
