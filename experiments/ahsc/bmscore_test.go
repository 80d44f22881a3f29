package ahsc

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// The fixture testdata/bayesmark is a hand-made Bayesmark output folder (written by a
// Python script in uber/bayesmark's XRSerializer layout): problem MLP-adam_toy, functions
// acc and nll, optimizers RandomSearch and ahsc, 2 studies of 2 calls each, and a stored
// baseline that differs from the recomputed one. The expected scores are worked by hand:
//
// Recomputed, visible. acc: random losses −.8 −.9 −.7 −.6 → clip −.8 (the 2nd of 4), opt −.95,
// scale .15; perfs random −.9 → ⅓, −.7 → 5/3 → 1; ahsc −.95 → 0, −.85 → ⅔. nll: random
// .5 .4 .7 .6 → clip .5, opt .3, scale .2; random .4 → ½, .6 → 1; ahsc .3 → 0, .45 → ¾.
// Study scores: random 100(1 − 5/12) and 0, mean 29.1667; ahsc 100 and 100(1 − 17/24),
// mean 64.5833. Generalization (the test loss of the cumulatively best visible call, ties to
// the later call): acc clip −.75, opt −.9: random ⅓, 1; ahsc 0, 0 (the tie at −.85 takes
// call 2's −.9); nll clip .55, opt .35: random ½, 1; ahsc 0, ¾. Scores: random 58.33, 0 →
// 29.1667; ahsc 100, 62.5 → 81.25.
//
// Stored baseline: acc best −1, clip −.5; nll best .2, clip .7 (both objectives). Visible:
// random (.2+.4)/2 → 70, (.6+.8)/2 → 30, mean 50; ahsc (.1+.2)/2 → 85, (.3+.5)/2 → 60, mean
// 72.5. Generalization: random 60, 20 → 40; ahsc 75, 60 → 67.5.
func TestScoreBayesmarkFixture(t *testing.T) {
	fsys := os.DirFS(filepath.Join("testdata", "bayesmark"))
	type want struct{ random, ahsc, genRandom, genAHSC float64 }
	recomputed := want{100 * (1 - 5.0/12) / 2, (100 + 100*(1-17.0/24)) / 2, 100 * (1 - 5.0/12) / 2, 81.25}
	stored := want{50, 72.5, 40, 67.5}
	for _, c := range []struct {
		raw      bool
		baseline string
		want     want
		files    int
	}{
		{false, "", stored, 1}, // auto: the stored baseline, as Bayesmark's analysis
		{false, BaselineRecompute, recomputed, 1},
		{true, BaselineStored, stored, 8},
		{true, BaselineRecompute, recomputed, 8},
	} {
		db, err := ReadBayesmarkDB(fsys, ".", c.raw)
		if err != nil {
			t.Fatal(err)
		}
		if len(db.EvalFiles) != c.files || db.BaselineFile != "derived/baseline.json" {
			t.Errorf("raw %v: read %v and %q", c.raw, db.EvalFiles, db.BaselineFile)
		}
		scores, err := ScoreBayesmark(db, BayesmarkScoreOptions{Baseline: c.baseline, Resamples: 1000, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(scores) != 2 {
			t.Fatalf("%d rows, want 2", len(scores))
		}
		for _, s := range scores {
			w, g := c.want.ahsc, c.want.genAHSC
			if s.Method == "RandomSearch" {
				w, g = c.want.random, c.want.genRandom
			}
			// The recomputed opt is padded by 10⁴ spacings (~1e-12 here).
			if math.Abs(s.Mean-w) > 1e-9 || math.Abs(s.GenMean-g) > 1e-9 || math.Abs(s.Median-w) > 1e-9 {
				t.Errorf("raw %v baseline %q %s: mean %v median %v generalization %v, want %v, %v, %v", c.raw, c.baseline, s.Method, s.Mean, s.Median, s.GenMean, w, w, g)
			}
			// Random's acc losses −.8 −.9 −.7 −.6: accuracies whose median is .75.
			if s.Method == "RandomSearch" && math.Abs(s.CVAccuracyMedian-0.75) > 1e-12 {
				t.Errorf("random's median CV accuracy %v, want 0.75", s.CVAccuracyMedian)
			}
			if s.Problem != "MLP-adam_toy" || s.Dataset != "toy" || s.Studies != 2 || s.CallsMin != 2 || s.CallsMax != 2 {
				t.Errorf("%+v", s)
			}
			if !(s.MeanLow <= s.Mean && s.Mean <= s.MeanHigh) || s.MeanLow == s.MeanHigh {
				t.Errorf("%s: interval %v–%v around %v", s.Method, s.MeanLow, s.MeanHigh, s.Mean)
			}
			if wantBase := map[bool]string{true: "stored", false: "recomputed"}[c.want == stored]; s.Baseline != wantBase {
				t.Errorf("baseline %q, want %q", s.Baseline, wantBase)
			}
		}
	}
}

func TestBootstrapInterval(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	est, lo, hi := bootstrap(xs, stats.Mean, 2000, 7)
	est2, lo2, hi2 := bootstrap(xs, stats.Mean, 2000, 7)
	if est != 5.5 || lo != lo2 || hi != hi2 || est2 != est {
		t.Fatalf("not deterministic or wrong: %v %v %v / %v %v %v", est, lo, hi, est2, lo2, hi2)
	}
	// The mean's sampling sd is σ/√n ≈ 2.87/3.16 ≈ 0.91: a 95% interval of about ±1.8.
	if !(lo > 3.2 && lo < 4.2 && hi > 6.8 && hi < 7.8) {
		t.Errorf("interval %v–%v, want about 3.7–7.3", lo, hi)
	}
	if _, lo3, _ := bootstrap(xs, stats.Mean, 2000, 8); lo3 == lo {
		t.Log("another seed gave the same lower bound (possible, unlikely)")
	}
	if e, l, h := bootstrap([]float64{2, math.NaN()}, stats.Mean, 100, 1); !math.IsNaN(e) || !math.IsNaN(l) || !math.IsNaN(h) {
		t.Error("a NaN score should leave the interval undefined")
	}
}

// fixtureFS is the fixture in memory, with edits.
func fixtureFS(t *testing.T, edit func(m fstest.MapFS)) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	root := filepath.Join("testdata", "bayesmark")
	err := fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(root, p))
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	return m
}

func TestReadBayesmarkMalformed(t *testing.T) {
	replace := func(name, old, new string) func(fstest.MapFS) {
		return func(m fstest.MapFS) {
			s := string(m[name].Data)
			if !strings.Contains(s, old) {
				t.Fatalf("%s has no %q", name, old)
			}
			m[name] = &fstest.MapFile{Data: []byte(strings.Replace(s, old, new, 1))}
		}
	}
	for _, c := range []struct {
		name string
		edit func(fstest.MapFS)
		raw  bool
		want string
	}{
		{"truncated", func(m fstest.MapFS) { m["derived/eval.json"].Data = m["derived/eval.json"].Data[:100] }, false, "derived/eval.json: not a Bayesmark (xarray JSON) file"},
		{"NaN loss", replace("derived/eval.json", "-0.95", "NaN"), false, "holds NaN"},
		{"short list", replace("derived/eval.json", "[-0.8, -0.7]", "[-0.8]"), false, "a list of 2 along \"study_id\""},
		{"no generalization", replace("derived/eval.json", `"generalization"`, `"other"`), false, `no variable "generalization"`},
		{"wrong dims", replace("derived/eval.json", `"dims": ["iter", "suggestion", "function", "optimizer", "study_id"]`, `"dims": ["iter", "suggestion", "function", "optimizer"]`), false, "has dims"},
		{"no coordinate", replace("derived/eval.json", `"study_id": {"dims"`, `"trial": {"dims"`), false, `no coordinate "study_id"`},
		{"baseline clip below best", replace("derived/baseline.json", `"data": [[-0.5, -0.5]`, `"data": [[-2, -0.5]`), false, "clip -2 is not above best -1"},
		{"study without metric", replace("eval/000000000000000000000000000000a0.json", `"--metric": "acc", `, ``), true, "lacks --opt, --data, --classifier or --metric"},
		{"uneven studies", func(m fstest.MapFS) { delete(m, "eval/000000000000000000000000000000a0.json") }, true, "Bayesmark pairs them and refuses uneven counts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fixtureFS(t, c.edit)
			db, err := ReadBayesmarkDB(fsys, ".", c.raw)
			if err == nil {
				_, err = ScoreBayesmark(db, BayesmarkScoreOptions{Resamples: 100})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
	// Python's bare NaN and Infinity tokens are JSON here; an infinite loss is a failed call.
	fsys := fixtureFS(t, replace("derived/eval.json", "-0.6]", "Infinity]"))
	db, err := ReadBayesmarkDB(fsys, ".", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ScoreBayesmark(db, BayesmarkScoreOptions{Resamples: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := ScoreBayesmark(db, BayesmarkScoreOptions{Resamples: 5}); err == nil {
		t.Error("5 resamples accepted")
	}
	noBase := fixtureFS(t, func(m fstest.MapFS) { delete(m, "derived/baseline.json") })
	db, err = ReadBayesmarkDB(noBase, ".", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ScoreBayesmark(db, BayesmarkScoreOptions{Baseline: BaselineStored, Resamples: 100}); err == nil || !strings.Contains(err.Error(), "no derived/baseline.json") {
		t.Errorf("--baseline stored without one: %v", err)
	}
}

func TestPythonJSON(t *testing.T) {
	in := `{"a": [NaN, Infinity, -Infinity, 1.5], "s": "NaN \"Infinity\""}`
	want := `{"a": ["NaN", "+Inf", "-Inf", 1.5], "s": "NaN \"Infinity\""}`
	if got := string(pythonJSON([]byte(in))); got != want {
		t.Errorf("pythonJSON\n%s\nwant\n%s", got, want)
	}
}

func TestBayesmarkSuggestions(t *testing.T) {
	picks, files, err := ReadBayesmarkSuggestions(os.DirFS(filepath.Join("testdata", "bayesmark")), ".", "batch_size")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 || len(picks) != 2 {
		t.Fatalf("%d files, %d optimizers", len(files), len(picks))
	}
	// The fixture's suggestions: 16 + 8·study (+1 for ahsc), then 32, in each function.
	want := map[string][]float64{"RandomSearch_0.0.8_abc1234": {16, 32, 24, 32, 16, 32, 24, 32}, "ahsc_x.x.x_abc1234": {17, 32, 25, 32, 17, 32, 25, 32}}
	for _, p := range picks {
		if w := want[p.Optimizer]; !equalFloats(p.Values, w) {
			t.Errorf("%s: %v, want %v", p.Optimizer, p.Values, w)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBayesmarkRoundTrip writes a run in Bayesmark's layout, reads it back with the reader
// of Bayesmark's outputs and finds report's scores: every method's mean and median of the
// runs table's values. Under the authors' protocol AHSC makes fewer calls than the
// baselines, so only eval/*.json is written (Bayesmark's aggregate needs equal calls).
func TestBayesmarkRoundTrip(t *testing.T) {
	res := testRun(t, experiments.Options{Seed: 4}, map[string]string{"dataset": "iris", "methods": "ahsc,tpe", "bayesmark-budget": "4",
		"n1": "4", "n2": "2", "epochs": "3", "folds": "2", "protocol": "authors"})
	dir := t.TempDir()
	files, err := WriteBayesmark(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	// 2 repeats × (ahsc, tpe, the hidden random reference) × (acc, nll), eval and suggest_log.
	if len(files) != 24 {
		t.Errorf("%d files written, want 24", len(files))
	}
	if _, err := os.Stat(filepath.Join(dir, "derived", "eval.json")); err == nil {
		t.Error("derived/eval.json written for studies of unequal calls")
	}
	db, err := ReadBayesmarkDB(os.DirFS(dir), ".", false)
	if err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, res, db)

	picks, _, err := ReadBayesmarkSuggestions(os.DirFS(dir), ".", "batch_size")
	if err != nil {
		t.Fatal(err)
	}
	ev := res.Table("evaluations")
	var want []float64
	for i := range ev.Rows {
		if ev.String(i, "method") == "ahsc" && ev.Float(i, "fidelity") >= 1 {
			for _, kv := range strings.Fields(ev.String(i, "config")) {
				if v, ok := strings.CutPrefix(kv, "batch_size="); ok {
					want = append(want, mustFloat(t, v))
				}
			}
		}
	}
	for _, p := range picks {
		if strings.HasPrefix(p.Optimizer, "ahsc_") && len(p.Values) != 2*len(want) { // acc and nll studies
			t.Errorf("ahsc: %d batch sizes read back, want %d", len(p.Values), 2*len(want))
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkRoundTrip compares db's recomputed scores with res's runs table.
func checkRoundTrip(t *testing.T, res *experiments.Result, db *BayesmarkDB) {
	t.Helper()
	scores, err := ScoreBayesmark(db, BayesmarkScoreOptions{Resamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	rt := res.Table("runs")
	seen := 0
	for _, s := range scores {
		m := s.Method
		if m == "RandomSearch" {
			m = "random"
		}
		var vals, gens []float64
		for i := range rt.Rows {
			if rt.String(i, "method") == m && rt.String(i, "dataset") == s.Dataset {
				vals = append(vals, rt.Float(i, "value"))
				gens = append(gens, rt.Float(i, "generalization_score"))
			}
		}
		if len(vals) == 0 {
			continue // the hidden random reference: pooled, not reported
		}
		seen++
		if s.Baseline != "recomputed" || s.Studies != len(vals) {
			t.Errorf("%s: baseline %s, %d studies, want recomputed and %d", m, s.Baseline, s.Studies, len(vals))
		}
		if math.Abs(s.Mean-stats.Mean(vals)) > 1e-9 || math.Abs(s.Median-stats.Median(vals)) > 1e-9 || math.Abs(s.GenMean-stats.Mean(gens)) > 1e-9 {
			t.Errorf("%s: Bayesmark layout %v / %v / %v, report %v / %v / %v", m, s.Mean, s.Median, s.GenMean, stats.Mean(vals), stats.Median(vals), stats.Mean(gens))
		}
	}
	if seen == 0 {
		t.Fatal("no method compared")
	}
}

// TestWriteBayesmarkDerived writes a hand-made run whose studies all make 3 calls: the
// aggregate derived/eval.json is written too, and it, the study files and bayesmarkScores
// (report's scorer on the same evaluations) give the same scores.
func TestWriteBayesmarkDerived(t *testing.T) {
	ev := experiments.Table{Name: "evaluations", Columns: []string{"dataset", "repeat", "method", "hidden", "call", "fidelity", "failed",
		"val_accuracy", "val_log_loss", "test_accuracy", "test_log_loss", "config"}}
	var runs []run
	x := 0.0
	for _, m := range []string{"random", "ahsc"} {
		for rep := 0; rep < 3; rep++ {
			r := run{dataset: "wine", group: bayesmark, method: m, repeat: rep}
			for call := 0; call < 3; call++ {
				x += 0.37
				e := eval{fidelity: 1, valMetric: 0.5 + 0.4*math.Abs(math.Sin(x)), valLoss: 0.2 + math.Abs(math.Cos(x)),
					testAcc: 0.5 + 0.4*math.Abs(math.Sin(2*x)), testNLL: 0.3 + math.Abs(math.Cos(3*x)), failed: m == "random" && rep == 1 && call == 2}
				if e.failed {
					e.valMetric, e.valLoss, e.testAcc, e.testNLL = math.NaN(), math.NaN(), math.NaN(), math.NaN()
				}
				r.evals = append(r.evals, e)
				ev.Add("wine", rep, m, false, call, 1.0, e.failed, e.valMetric, e.valLoss, e.testAcc, e.testNLL,
					fmt.Sprintf("hidden_layer_sizes=%d batch_size=%d learning_rate_init=%g", 10+call, 20+rep, 0.001*x))
			}
			runs = append(runs, r)
		}
	}
	bayesmarkScores(runs)
	rt := experiments.Table{Name: "runs", Columns: []string{"dataset", "repeat", "method", "value", "generalization_score"}}
	for _, r := range runs {
		rt.Add(r.dataset, r.repeat, r.method, r.value, r.genScore)
	}
	res := &experiments.Result{Experiment: "ahsc", Seed: 1, Tables: []experiments.Table{rt, ev}}
	dir := t.TempDir()
	if _, err := WriteBayesmark(res, dir); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []bool{false, true} {
		db, err := ReadBayesmarkDB(os.DirFS(dir), ".", raw)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: 12}[raw]; len(db.EvalFiles) != want {
			t.Errorf("raw %v: %d files read, want %d", raw, len(db.EvalFiles), want)
		}
		checkRoundTrip(t, res, db)
	}
	if _, err := WriteBayesmark(&experiments.Result{Experiment: "weightdecay"}, dir); err == nil {
		t.Error("a weightdecay run written as Bayesmark output")
	}
}

// TestXRVariableTransposes reads a variable stored in another order of dims than asked.
func TestXRVariableTransposes(t *testing.T) {
	var x xrFile
	doc := `{"meta": {}, "data": {"coords": {"a": {"dims": ["a"], "data": [0, 1]}, "b": {"dims": ["b"], "data": ["x", "y", "z"]}},
		"data_vars": {"v": {"dims": ["b", "a"], "data": [[1, 2], [3, 4], [5, Infinity]]}}}}`
	if err := json.Unmarshal(pythonJSON([]byte(doc)), &x); err != nil {
		t.Fatal(err)
	}
	got, err := x.variable("v", "f", []string{"a", "b"}, map[string]int{"a": 2, "b": 3})
	if err != nil {
		t.Fatal(err)
	}
	// v[b][a] read as [a][b]: a=0: 1 3 5; a=1: 2 4 +Inf.
	if want := []float64{1, 3, 5, 2, 4, math.Inf(1)}; !equalFloats(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

// FuzzBayesmarkDB reads and scores arbitrary derived/eval.json and baseline.json texts: an
// error or scores, never a panic.
func FuzzBayesmarkDB(f *testing.F) {
	root := filepath.Join("testdata", "bayesmark", "derived")
	ev, err := os.ReadFile(filepath.Join(root, "eval.json"))
	if err != nil {
		f.Fatal(err)
	}
	base, err := os.ReadFile(filepath.Join(root, "baseline.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ev, base)
	f.Add([]byte(`{"meta": {}, "data": {"coords": {}, "data_vars": {}}}`), []byte(`{`))
	f.Fuzz(func(t *testing.T, ev, base []byte) {
		m := fstest.MapFS{"derived/eval.json": {Data: ev}, "derived/baseline.json": {Data: base}}
		db, err := ReadBayesmarkDB(m, ".", false)
		if err != nil {
			return
		}
		for _, b := range []string{BaselineAuto, BaselineRecompute} {
			_, _ = ScoreBayesmark(db, BayesmarkScoreOptions{Baseline: b, Resamples: 100})
		}
	})
}
