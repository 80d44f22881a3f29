package ahsc

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// TestScreeningsTable (issue 18): every AHSC variant's search lists its N1 screenings in the
// screenings table, the N2 of least score (fewer when screenings were dropped) marked trained
// with the full training's validation objective and the test metric its evaluation recorded;
// a dropped screening has its reason and is not trained. The figure ahsc_mu_iris.png is drawn
// from that table. A memory budget makes some screenings fail.
func TestScreeningsTable(t *testing.T) {
	res := testRun(t, experiments.Options{Seed: 5, Workers: 2, MaxMem: 300 << 10},
		map[string]string{"dataset": "iris", "methods": "random,ahsc,ahsc-valloss", "repeats": "2"})
	sc, settings, evals := res.Table("screenings"), res.Table("settings"), res.Table("evaluations")
	if sc == nil || !sc.Detail {
		t.Fatal("no screenings detail table")
	}
	n1, n2 := settings.Int(0, "n1"), settings.Int(0, "n2")
	type search struct {
		method string
		repeat int
	}
	rows, trained, dropped := map[search]int{}, map[search]int{}, 0
	for i := range sc.Rows {
		k := search{sc.String(i, "method"), sc.Int(i, "repeat")}
		if !slices.Contains([]string{"ahsc", "ahsc-valloss"}, k.method) {
			t.Fatalf("screenings of method %q", k.method)
		}
		if sc.Int(i, "index") != rows[k] {
			t.Errorf("%v: row %d has index %d", k, rows[k], sc.Int(i, "index"))
		}
		rows[k]++
		reason, isTrained := sc.String(i, "dropped_reason"), sc.Value(i, "trained") == true
		if reason != "" {
			dropped++
			if isTrained || !math.IsNaN(sc.Float(i, "test_metric")) {
				t.Errorf("%v: dropped screening %d (%s) trained", k, i, reason)
			}
			continue
		}
		if !(sc.Float(i, "score") > 0) {
			t.Errorf("%v: ranked screening with score %v", k, sc.Float(i, "score"))
		}
		if !isTrained {
			continue
		}
		trained[k]++
		obj, test := sc.Float(i, "val_objective"), sc.Float(i, "test_metric")
		if math.IsNaN(obj) || math.IsNaN(test) {
			continue // a failed full training
		}
		found := false
		for j := range evals.Rows {
			found = found || (evals.String(j, "method") == k.method && evals.Int(j, "repeat") == k.repeat &&
				evals.String(j, "config") == sc.String(i, "config") && evals.Float(j, "test_metric") == test)
		}
		if !found {
			t.Errorf("%v: trained %s has test metric %v, not its evaluation's", k, sc.String(i, "config"), test)
		}
	}
	if len(rows) != 4 {
		t.Errorf("screenings of %d searches, want 2 methods × 2 repeats", len(rows))
	}
	for k, n := range rows {
		if n != n1 {
			t.Errorf("%v: %d screenings, want N1 = %d", k, n, n1)
		}
		if trained[k] > n2 || trained[k] == 0 {
			t.Errorf("%v: %d trained, want 1..N2 = %d", k, trained[k], n2)
		}
	}
	if dropped == 0 {
		t.Error("the memory budget dropped no screening")
	}
	t.Logf("%d screenings, %d dropped, trained per search %v", len(sc.Rows), dropped, trained)
	for k, n := range trained {
		lost := 0
		for i := range sc.Rows {
			if sc.String(i, "method") == k.method && sc.Int(i, "repeat") == k.repeat && sc.String(i, "dropped_reason") != "" {
				lost++
			}
		}
		if n != min(n2, n1-lost) {
			t.Errorf("%v: %d trained with %d of %d dropped, want min(N2, N1 − dropped) = %d", k, n, lost, n1, min(n2, n1-lost))
		}
	}
	dir := t.TempDir()
	paths, err := plots(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "ahsc_mu_iris.png")
	if fi, err := os.Stat(p); err != nil || !slices.Contains(paths, p) || fi.Size() < 5000 {
		t.Errorf("figure %s not written (%v): %v", p, err, paths)
	}
}

// TestMuFigureNeedsTrainedRows: without a trained ahsc screening there is no μ figure.
func TestMuFigureNeedsTrainedRows(t *testing.T) {
	tab := experiments.Table{Name: "screenings", Columns: []string{"dataset", "repeat", "method", "index", "config", "score",
		"dropped_reason", "trained", "val_objective", "test_metric"}}
	tab.Add("iris", 0, "ahsc", 0, "a=1", 2.0, "", false, math.NaN(), math.NaN())
	tab.Add("iris", 0, "ahsc-valloss", 0, "a=1", 0.5, "", true, 0.3, 0.9)
	if muPlot(&tab, "iris") != nil {
		t.Error("a μ figure without trained ahsc rows")
	}
	tab.Add("iris", 0, "ahsc", 1, "a=2", 30.0, "", true, 0.3, 0.9)
	if muPlot(&tab, "iris") == nil {
		t.Error("no μ figure with a trained ahsc row")
	}
}
