package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func ahscTestRun(t *testing.T, workers int, params map[string]string, dataDir string) *Result {
	t.Helper()
	e, err := Lookup("ahsc")
	if err != nil {
		t.Fatal(err)
	}
	opt, err := e.Resolve(Options{Preset: Quick, Seed: 7, Repeats: 2, Workers: workers, DataDir: dataDir, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ahscWithoutColumns copies a table's rows without the named (timing) columns.
func ahscWithoutColumns(t *testing.T, tab *Table, drop ...string) [][]any {
	t.Helper()
	if tab == nil {
		t.Fatal("missing table")
	}
	var out [][]any
	for _, row := range tab.Rows {
		var r []any
		for i, c := range row {
			if !contains(drop, tab.Columns[i]) {
				r = append(r, c)
			}
		}
		out = append(out, r)
	}
	return out
}

func ahscColumn(tab *Table, name string) int {
	for i, c := range tab.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

func TestAHSCIrisQuickIsSaneAndWorkerIndependent(t *testing.T) {
	// The quick preset (the README's first command), with two repeats instead of five.
	res1 := ahscTestRun(t, 1, nil, t.TempDir())
	res2 := ahscTestRun(t, 2, nil, t.TempDir())

	sum := res1.Table("summary")
	if sum == nil || len(sum.Rows) != 6 {
		t.Fatalf("summary: %+v", sum)
	}
	var methods []string
	for _, row := range sum.Rows {
		methods = append(methods, row[1].(string))
		if row[0] != "iris" || row[2] != "score" {
			t.Errorf("row %v", row)
		}
		med := row[ahscColumn(sum, "median")].(float64)
		if !(med >= 0 && med <= 100) {
			t.Errorf("%s: median score %v outside [0, 100]", row[1], med)
		}
		if n := row[ahscColumn(sum, "n")].(int); n != 2 {
			t.Errorf("%s: n = %d, want 2", row[1], n)
		}
		if p := row[ahscColumn(sum, "paper")].(float64); math.IsNaN(p) {
			t.Errorf("%s: no paper value", row[1])
		}
		if s := row[ahscColumn(sum, "seconds")].(float64); !(s > 0) {
			t.Errorf("%s: %v seconds", row[1], s)
		}
	}
	if want := ahscDefaultMethods; !reflect.DeepEqual(methods, want) {
		t.Errorf("methods %v, want %v", methods, want)
	}
	runs := res1.Table("runs")
	for _, row := range runs.Rows {
		acc := row[ahscColumn(runs, "test_accuracy")].(float64)
		if !(acc >= 0.5 && acc <= 1) {
			t.Errorf("%v: test accuracy %v", row[2], acc)
		}
		if e := row[ahscColumn(runs, "error")].(string); e != "" {
			t.Errorf("%v: %s", row[2], e)
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
		a := ahscWithoutColumns(t, res1.Table(name), "seconds")
		b := ahscWithoutColumns(t, res2.Table(name), "seconds")
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s differs between 1 and 2 workers:\n%v\n%v", name, a, b)
		}
	}
}

func TestAHSCUserCSV(t *testing.T) {
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
	params := map[string]string{"data": path, "target": "label", "methods": "ahsc,ahsc-valloss,random",
		"budget": "3", "n1": "4", "n2": "2", "epochs": "5"}
	res := ahscTestRun(t, 2, params, dir)
	sum := res.Table("summary")
	if sum == nil || len(sum.Rows) != 3 {
		t.Fatalf("summary %+v", sum)
	}
	for _, row := range sum.Rows {
		if row[0] != "blobs" || row[2] != "roc-auc" {
			t.Errorf("row %v", row)
		}
		if med := row[ahscColumn(sum, "median")].(float64); !(med > 0.6 && med <= 1) {
			t.Errorf("%s: median AUC %v", row[1], med)
		}
		if p := row[ahscColumn(sum, "paper")].(float64); !math.IsNaN(p) {
			t.Errorf("paper value %v for a user's table", p)
		}
	}
	params["metric"] = "accuracy"
	params["methods"] = "random"
	res = ahscTestRun(t, 1, params, dir)
	if sum := res.Table("summary"); sum.Rows[0][2] != "accuracy" {
		t.Errorf("metric %v, want accuracy", sum.Rows[0][2])
	}
}

func TestAHSCMissingDataIsReportedAndTheRunContinues(t *testing.T) {
	// An empty data directory: MNIST, SVHN and the OpenML sets are missing; the embedded
	// Bayesmark sets still run.
	params := map[string]string{"dataset": "all", "methods": "ahsc,random", "budget": "2", "n1": "3", "n2": "1", "epochs": "2"}
	e, _ := Lookup("ahsc")
	opt, err := e.Resolve(Options{Preset: Quick, Seed: 1, Repeats: 1, Workers: 2, DataDir: t.TempDir(), Params: params})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	notes := res.Table("notes")
	if notes == nil {
		t.Fatal("no notes table")
	}
	found := false
	for _, row := range notes.Rows {
		if row[0] == "svhn" {
			found = true
			if msg := row[1].(string); !strings.Contains(msg, "svhn") || !strings.Contains(msg, "train_32x32.mat") {
				t.Errorf("svhn note %q does not name the missing file", msg)
			}
		}
	}
	if !found {
		t.Errorf("no svhn note: %v", notes.Rows)
	}
	got := map[string]bool{}
	for _, row := range res.Table("summary").Rows {
		got[row[0].(string)] = true
	}
	for _, d := range ahscBayesmarkSets {
		if !got[d] {
			t.Errorf("no results for %s", d)
		}
	}
	// A lone missing dataset is an error.
	opt.Params["dataset"] = "svhn"
	if _, err := e.Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "svhn") {
		t.Errorf("svhn alone: error %v", err)
	}
}

func TestAHSCBayesmarkScore(t *testing.T) {
	if v := ahscNormalized(0.2, 0.1, 0.3); math.Abs(v-0.5) > 1e-12 {
		t.Errorf("normalized %v, want 0.5", v)
	}
	if v := ahscNormalized(0.9, 0.1, 0.3); v != 1 {
		t.Errorf("normalized %v, want clipped to 1", v)
	}
	if ahscNormalized(0, 0, 0) != 0 || ahscNormalized(0.1, 0, 0) != 1 {
		t.Error("degenerate scale")
	}
	ev := func(acc, nll float64) ahscEval { return ahscEval{testAcc: acc, testNLL: nll} }
	runs := []ahscRun{
		{dataset: "iris", group: ahscBayesmark, method: "random", testAcc: 0.9, testNLL: 0.3,
			evals: []ahscEval{ev(0.9, 0.3), ev(0.8, 0.5), ev(0.7, 0.7)}},
		{dataset: "iris", group: ahscBayesmark, method: "ahsc", testAcc: 1, testNLL: 0.1, evals: []ahscEval{ev(1, 0.1)}},
	}
	ahscBayesmarkScores(runs)
	// opt: acc loss 0, nll 0.1; clip: acc loss 0.2, nll 0.5.
	if math.Abs(runs[1].value-100) > 1e-9 {
		t.Errorf("the optimum scores %v, want 100", runs[1].value)
	}
	want := 100 * (1 - (0.1/0.2+0.2/0.4)/2)
	if math.Abs(runs[0].value-want) > 1e-9 {
		t.Errorf("random's score %v, want %v", runs[0].value, want)
	}
}

// TestAHSCMemoryBudgetFailsTrialsWithTheReason runs random search and AHSC on iris under a
// memory budget that about half the configurations exceed: those trials (and screenings) are
// refused before their model is built, listed in the failures table with the estimate, and
// the search still returns a finite configuration that fits.
func TestAHSCMemoryBudgetFailsTrialsWithTheReason(t *testing.T) {
	e, _ := Lookup("ahsc")
	opt := Options{Preset: Quick, Seed: 5, Repeats: 1, Workers: 2, MaxMem: 300 << 10,
		Params: map[string]string{"dataset": "iris", "methods": "random,ahsc"}}
	res, err := e.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Table("failures")
	if f == nil || len(f.Rows) == 0 {
		t.Fatal("no failures table: the budget should refuse some configurations")
	}
	for _, row := range f.Rows {
		if reason := row[5].(string); !strings.Contains(reason, "--max-mem") || !strings.Contains(reason, "KiB") {
			t.Errorf("failure reason %q should name the limit and the estimate", reason)
		}
	}
	runs := res.Table("runs")
	for _, row := range runs.Rows {
		method, value, failed, evals := row[2], row[4].(float64), row[10].(int), row[9].(int)
		if math.IsNaN(value) {
			t.Errorf("%v selected nothing: %v", method, row[15])
		}
		if method == "random" && (failed == 0 || failed == evals) {
			t.Errorf("random: %d of %d evaluations failed; want some, not all", failed, evals)
		}
	}
	t.Logf("%d failures, e.g. %v", len(f.Rows), f.Rows[0])
}
