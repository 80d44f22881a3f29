package ahsc

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/experimenttest"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
)

// testRun runs the quick preset with two repeats and the given flags.
func testRun(t *testing.T, opt experiments.Options, flags map[string]string) *experiments.Result {
	t.Helper()
	e := Experiment()
	if _, ok := flags["repeats"]; !ok {
		flags = withDefault(flags, "repeats", "2")
	}
	opt.Preset = experiments.Quick
	return experimenttest.Run(t, e, opt, flags)
}

// withDefault is a copy of m with k set to v unless m sets it.
func withDefault(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

// withoutColumns copies a table's rows without the named (timing) columns.
func withoutColumns(t *testing.T, tab *experiments.Table, drop ...string) [][]any {
	t.Helper()
	if tab == nil {
		t.Fatal("missing table")
	}
	var out [][]any
	for _, row := range tab.Rows {
		var r []any
		for i, c := range row {
			if !slices.Contains(drop, tab.Columns[i]) {
				r = append(r, c)
			}
		}
		out = append(out, r)
	}
	return out
}

func TestConfig(t *testing.T) {
	experimenttest.CheckConfig(t, Experiment())
	q, p := defaultConfig(t, experiments.Quick), defaultConfig(t, experiments.PaperScale)
	// TPE's start-up trials derive from the budget: the old presets' 7 and 20.
	if q.TPEStartup != 7 || p.TPEStartup != 20 {
		t.Errorf("tpe-startup %d (quick), %d (paper); want 7 and 20", q.TPEStartup, p.TPEStartup)
	}
	c, err := Experiment().Configure(experiments.Quick, map[string]string{"methods": "tpe,ahsc,tpe", "budget": "30"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(experiments.Quick); err != nil {
		t.Fatal(err)
	}
	if cc := c.(*Config); !reflect.DeepEqual(cc.Methods, []string{"tpe", "ahsc"}) || cc.TPEStartup != 20 || cc.BayesmarkBudget != 15 {
		t.Errorf("methods %v, tpe-startup %d, bayesmark-budget %d", cc.Methods, cc.TPEStartup, cc.BayesmarkBudget)
	}
	for flag, v := range map[string]string{"n1": "0", "folds": "1", "max-log2-width": "11", "target": "y"} {
		c, err := Experiment().Configure(experiments.Quick, map[string]string{flag: v})
		if err == nil {
			err = c.Finish(experiments.Quick)
		}
		if fe, ok := err.(*experiments.FlagError); !ok || fe.Flag != flag {
			t.Errorf("--%s %s: error %v, want a FlagError naming it", flag, v, err)
		}
	}
}

func TestStoredConfig(t *testing.T) {
	cfg, err := Experiment().Configure(experiments.Quick, map[string]string{"repeats": "1", "methods": "ahsc,random",
		"budget": "2", "bayesmark-budget": "2", "n1": "3", "n2": "1", "epochs": "2", "folds": "2"})
	if err != nil {
		t.Fatal(err)
	}
	experimenttest.CheckStoredConfig(t, Experiment(), experiments.Options{Preset: experiments.Quick, Seed: 3, Config: cfg}, true)
}

func TestIrisQuickIsSaneAndWorkerIndependent(t *testing.T) {
	// The quick preset (the README's first command), with two repeats instead of five.
	res1 := testRun(t, experiments.Options{Seed: 7, Workers: 1, DataDir: t.TempDir()}, nil)
	res2 := testRun(t, experiments.Options{Seed: 7, Workers: 2, DataDir: t.TempDir()}, nil)

	sum := res1.Table("summary")
	if sum == nil || len(sum.Rows) != 6 {
		t.Fatalf("summary: %+v", sum)
	}
	var methods []string
	for i := range sum.Rows {
		m := sum.String(i, "method")
		methods = append(methods, m)
		if sum.String(i, "dataset") != "iris" || sum.String(i, "metric") != "score" {
			t.Errorf("row %v", sum.Rows[i])
		}
		if med := sum.Float(i, "median"); !(med >= 0 && med <= 100) {
			t.Errorf("%s: median score %v outside [0, 100]", m, med)
		}
		if n := sum.Int(i, "n"); n != 2 {
			t.Errorf("%s: n = %d, want 2", m, n)
		}
		if math.IsNaN(sum.Float(i, "paper")) {
			t.Errorf("%s: no paper value", m)
		}
		if s := sum.Float(i, "seconds"); !(s > 0) {
			t.Errorf("%s: %v seconds", m, s)
		}
	}
	if !reflect.DeepEqual(methods, DefaultMethods) {
		t.Errorf("methods %v, want %v", methods, DefaultMethods)
	}
	runs := res1.Table("runs")
	for i := range runs.Rows {
		if acc := runs.Float(i, "test_accuracy"); !(acc >= 0.5 && acc <= 1) {
			t.Errorf("%v: test accuracy %v", runs.String(i, "method"), acc)
		}
		if e := runs.String(i, "error"); e != "" {
			t.Errorf("%v: %s", runs.String(i, "method"), e)
		}
		if runs.String(i, "method") == "ahsc" && runs.Int(i, "screened") != 15 {
			t.Errorf("ahsc screened %d, want N1 = 15", runs.Int(i, "screened"))
		}
	}
	if tab := res1.Table("table1"); tab == nil || len(tab.Rows) != 1 || len(tab.Columns) != 8 {
		t.Errorf("table1: %+v", tab)
	}
	if tab := res1.Table("runtime"); tab == nil || len(tab.Rows) != 6 {
		t.Errorf("runtime: %+v", tab)
	}

	// Same seed, other worker count: the same results (wall times aside).
	for _, name := range []string{"summary", "runs", "table1"} {
		a := withoutColumns(t, res1.Table(name), "seconds")
		b := withoutColumns(t, res2.Table(name), "seconds")
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s differs between 1 and 2 workers:\n%v\n%v", name, a, b)
		}
	}
}

// TestCellSeeds: the AHSC variants share AHSC's stream, so that they screen the same N1
// configurations (and the Hessian ranking draws its probes from it); other methods get
// their own stream but the repeat's initial weights; another --seed, dataset or repeat
// changes every stream, and --seed 2's repeat 0 is not --seed 1's repeat 1.
func TestCellSeeds(t *testing.T) {
	base := repeatSeed(2, "iris", 0)
	a, h, r := cellSeeds(base, "ahsc"), cellSeeds(base, "ahsc-hessian"), cellSeeds(base, "random")
	if a != h || a != cellSeeds(base, "ahsc-valloss") {
		t.Errorf("the AHSC variants' seeds differ: %+v, %+v", a, h)
	}
	if r.search == a.search || r.weights != a.weights {
		t.Errorf("random's seeds %+v, ahsc's %+v: want another stream and the same weights", r, a)
	}
	seen := map[uint64]string{}
	for _, c := range []struct {
		root    uint64
		dataset string
		repeat  int
	}{{2, "iris", 0}, {3, "iris", 0}, {2, "wine", 0}, {2, "iris", 1}, {1, "iris", 1}} {
		s := repeatSeed(c.root, c.dataset, c.repeat)
		for _, v := range []uint64{s, cellSeeds(s, "ahsc").search, cellSeeds(s, "ahsc").weights, dataSeed(c.root, c.dataset, c.repeat)} {
			if prev, ok := seen[v]; ok {
				t.Errorf("%+v repeats the seed of %s", c, prev)
			}
			seen[v] = fmt.Sprint(c)
		}
	}
}

func TestUserCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "blobs.csv")
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("x1,label,x2,x3\n")
	for i := 0; i < 120; i++ {
		c := i % 2
		fmt.Fprintf(&b, "%.4f,%d,%.4f,%.4f\n", rng.NormFloat64()+1.2*float64(c), c, rng.NormFloat64()-0.8*float64(c), rng.NormFloat64())
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := map[string]string{"data": path, "target": "label", "methods": "ahsc,ahsc-valloss,random",
		"budget": "3", "n1": "4", "n2": "2", "epochs": "5"}
	res := testRun(t, experiments.Options{Seed: 7, Workers: 2, DataDir: dir}, flags)
	sum := res.Table("summary")
	if sum == nil || len(sum.Rows) != 3 {
		t.Fatalf("summary %+v", sum)
	}
	for i := range sum.Rows {
		if sum.String(i, "dataset") != "blobs" || sum.String(i, "metric") != "roc-auc" {
			t.Errorf("row %v", sum.Rows[i])
		}
		if med := sum.Float(i, "median"); !(med > 0.6 && med <= 1) {
			t.Errorf("%s: median AUC %v", sum.String(i, "method"), med)
		}
		if p := sum.Float(i, "paper"); !math.IsNaN(p) {
			t.Errorf("paper value %v for a user's table", p)
		}
	}
	flags["metric"] = "accuracy"
	flags["methods"] = "random"
	res = testRun(t, experiments.Options{Seed: 7, Workers: 1, DataDir: dir}, flags)
	if m := res.Table("summary").String(0, "metric"); m != "accuracy" {
		t.Errorf("metric %v, want accuracy", m)
	}
}

func TestMissingDataIsReportedAndTheRunContinues(t *testing.T) {
	// An empty data directory: MNIST, SVHN and the OpenML sets are missing; the embedded
	// Bayesmark sets still run.
	flags := map[string]string{"dataset": "all", "methods": "ahsc,random", "budget": "2", "bayesmark-budget": "2",
		"n1": "3", "n2": "1", "epochs": "2", "repeats": "1"}
	opt := experiments.Options{Seed: 1, Workers: 2, DataDir: t.TempDir()}
	{ // without --skip-missing the run fails before computing anything, naming every missing set
		e := Experiment()
		cfg, err := e.Configure(experiments.Quick, flags)
		if err != nil {
			t.Fatal(err)
		}
		o := opt
		o.Config = cfg
		_, err = e.Run(context.Background(), o)
		for _, d := range []string{"mnist", "svhn", "phoneme", "skip-missing"} {
			if err == nil || !strings.Contains(err.Error(), d) {
				t.Errorf("without --skip-missing: error %v does not name %s", err, d)
			}
		}
	}
	flags["skip-missing"] = "true"
	res := testRun(t, opt, flags)
	notes := res.Table("notes")
	if notes == nil {
		t.Fatal("no notes table")
	}
	found := false
	for i := range notes.Rows {
		if notes.String(i, "dataset") == "svhn" {
			found = true
			if msg := notes.String(i, "note"); !strings.Contains(msg, "svhn") || !strings.Contains(msg, "train_32x32.mat") {
				t.Errorf("svhn note %q does not name the missing file", msg)
			}
		}
	}
	if !found {
		t.Errorf("no svhn note: %v", notes.Rows)
	}
	got := map[string]bool{}
	sum := res.Table("summary")
	for i := range sum.Rows {
		got[sum.String(i, "dataset")] = true
	}
	for _, d := range bayesmarkSets {
		if !got[d] {
			t.Errorf("no results for %s", d)
		}
	}
	// A lone missing dataset is an error.
	e := Experiment()
	flags["dataset"] = "svhn"
	cfg, err := e.Configure(experiments.Quick, flags)
	if err != nil {
		t.Fatal(err)
	}
	opt.Config = cfg
	if _, err := e.Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "svhn") {
		t.Errorf("svhn alone: error %v", err)
	}
}

// TestMemoryBudgetFailsTrialsWithTheReason runs random search and AHSC on iris under a
// memory budget that about half the configurations exceed: those trials (and screenings) are
// refused before their model is built, listed in the failures table with the estimate, and
// the search still returns a finite configuration that fits.
func TestMemoryBudgetFailsTrialsWithTheReason(t *testing.T) {
	res := testRun(t, experiments.Options{Seed: 5, Workers: 2, MaxMem: 300 << 10},
		map[string]string{"dataset": "iris", "methods": "random,ahsc", "repeats": "1"})
	f := res.Table("failures")
	if f == nil || len(f.Rows) == 0 {
		t.Fatal("no failures table: the budget should refuse some configurations")
	}
	for i := range f.Rows {
		if reason := f.String(i, "reason"); !strings.Contains(reason, "--max-mem") || !strings.Contains(reason, "KiB") {
			t.Errorf("failure reason %q should name the limit and the estimate", reason)
		}
	}
	runs := res.Table("runs")
	for i := range runs.Rows {
		method, failed, evals := runs.String(i, "method"), runs.Int(i, "failed"), runs.Int(i, "evaluations")
		// The selection, not the Bayesmark score: with most random calls failed, the random
		// median is infinite and the score undefined, as Bayesmark's baseline refuses it.
		if runs.String(i, "config") == "" || math.IsNaN(runs.Float(i, "test_accuracy")) {
			t.Errorf("%v selected nothing: %v", method, runs.String(i, "error"))
		}
		if method == "random" && (failed == 0 || failed == evals) {
			t.Errorf("random: %d of %d evaluations failed; want some, not all", failed, evals)
		}
		if method == "ahsc" && runs.Int(i, "screen_dropped") == 0 {
			t.Errorf("ahsc: no screening dropped over the budget")
		}
	}
	t.Logf("%d failures, e.g. %v", len(f.Rows), f.Rows[0])
}

// TestTrialIsTheRunsObjective: `hyperflat trial` evaluates a configuration exactly as a run's
// search does — the same split, initial weights and objective — so the value it reports for
// random search's only configuration is the run's validation objective for it.
func TestTrialIsTheRunsObjective(t *testing.T) {
	flags := map[string]string{"methods": "random", "repeats": "1", "bayesmark-budget": "1", "epochs": "4"}
	res := testRun(t, experiments.Options{Seed: 4, Workers: 1}, flags)
	runs := res.Table("runs")
	cfg, err := Experiment().Configure(experiments.Quick, flags)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Finish(experiments.Quick); err != nil {
		t.Fatal(err)
	}
	space, err := TrialSpace(cfg.(*Config))
	if err != nil {
		t.Fatal(err)
	}
	// Random search's first configuration, drawn from the cell's stream.
	rng := rand.New(rand.NewPCG(cellSeeds(repeatSeed(4, "iris", 0), "random").search, 0))
	hp, err := (search.Random{}).Ask(rng, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := runs.String(0, "config"); got != hp.String() {
		t.Fatalf("the run selected %s, the stream's first draw is %s", got, hp)
	}
	ms, err := Trial(context.Background(), experiments.Options{Preset: experiments.Quick, Seed: 4, Config: cfg}, hp, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	if want := []string{"objective", "val_accuracy", "val_loss", "test_accuracy", "test_log_loss", "strong_convexity", "seconds"}; !reflect.DeepEqual(names, want) {
		t.Errorf("metrics %v, want %v", names, want)
	}
	if ms[0].Value != runs.Float(0, "val_objective") || ms[3].Value != runs.Float(0, "test_accuracy") || !(ms[5].Value > 0) {
		t.Errorf("trial %v; the run's objective %v, test accuracy %v", ms, runs.Float(0, "val_objective"), runs.Float(0, "test_accuracy"))
	}
}

// TestAdamFlag: --adam hat (the default) gives every builder's Adam the ε̂ of Keras and
// scikit-learn; --adam torch gives PyTorch's placement and is stored as the runs before the
// flag were (no "adam" key, so their identity is unchanged); a value outside the two is an
// error naming the flag.
func TestAdamFlag(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		value   string
		hat     bool
		stored  string
		present bool
	}{{"", true, "hat", true}, {"hat", true, "hat", true}, {"torch", false, "", false}} {
		params := map[string]string{}
		if c.value != "" {
			params["adam"] = c.value
		}
		cfg, err := Experiment().Configure(experiments.Quick, params)
		if err != nil {
			t.Fatal(err)
		}
		opt, err := Experiment().Resolve(experiments.Options{Preset: experiments.Quick, Seed: 1, Config: cfg, DataDir: datasets.ResolveDir("")})
		if err != nil {
			t.Fatal(err)
		}
		conf := opt.Config.(*Config)
		if conf.Adam != c.stored {
			t.Errorf("--adam %q: Config.Adam %q; want %q", c.value, conf.Adam, c.stored)
		}
		js, err := json.Marshal(conf)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(js), `"adam"`); got != c.present {
			t.Errorf("--adam %q: stored options %s; want an adam key: %v", c.value, js, c.present)
		}
		for _, dataset := range []string{"iris", "blood-transfusion"} {
			conf.Dataset = dataset
			p, err := loadProblem(ctx, opt, conf, dataset)
			if err != nil {
				if dataset != "iris" {
					t.Logf("%s: %v", dataset, err) // the OpenML files may be absent here
					continue
				}
				t.Fatal(err)
			}
			sp, err := p.split(0)
			if err != nil {
				t.Fatal(err)
			}
			u := make([]float64, len(p.space))
			for i := range u {
				u[i] = 0.5
			}
			cand, err := p.build(sp.train)(p.space.FromUnit(u), 1)
			if err != nil {
				t.Fatal(err)
			}
			a, ok := cand.Optimizer.(*samplers.Adam)
			if !ok {
				t.Fatalf("%s: optimizer %T; want *samplers.Adam", dataset, cand.Optimizer)
			}
			if a.EpsHat != c.hat {
				t.Errorf("--adam %q, %s: EpsHat %v; want %v", c.value, dataset, a.EpsHat, c.hat)
			}
		}
	}
	cfg, err := Experiment().Configure(experiments.Quick, map[string]string{"adam": "keras"})
	if err == nil {
		_, err = Experiment().Resolve(experiments.Options{Preset: experiments.Quick, Seed: 1, Config: cfg})
	}
	if err == nil || !strings.Contains(err.Error(), "adam") {
		t.Errorf("--adam keras: error %v; want one naming the flag", err)
	}
}
