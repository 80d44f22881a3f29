package ahsc

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// TestParserStatistic checks the authors' parsers' arithmetic by hand: rows of 10, the largest
// row mean, an incomplete last row and everything after the 300th score left out.
func TestParserStatistic(t *testing.T) {
	var a []float64
	for i := range 10 {
		a = append(a, 0.5+0.02*float64(i)) // row mean 0.59
	}
	for range 10 {
		a = append(a, 0.7) // row mean 0.7: the largest
	}
	a = append(a, 1, 1, 1) // an incomplete row
	if got := parserStatistic(a); math.Abs(got-0.7) > 1e-12 {
		t.Errorf("parserStatistic = %v, want 0.7", got)
	}
	long := make([]float64, 310)
	for i := range long {
		long[i] = 0.5
		if i >= 300 {
			long[i] = 1 // after the 300th: never read
		}
	}
	if got := parserStatistic(long); got != 0.5 {
		t.Errorf("parserStatistic of 310 scores = %v, want 0.5", got)
	}
	if got := parserStatistic(a[:9]); !math.IsNaN(got) {
		t.Errorf("parserStatistic of 9 scores = %v, want NaN", got)
	}
}

// TestAuthorsParserTable recomputes the paper's statistic from hand-made evaluations: repeats
// 0–9 and 10–19 are two runs of the authors', a failed training, a lower rung and a hidden
// row print nothing, an incomplete group counts for nothing, and a clean-protocol run is not
// read.
func TestAuthorsParserTable(t *testing.T) {
	ev := experiments.Table{Name: "evaluations", Columns: []string{"dataset", "repeat", "method", "hidden", "call", "fidelity", "failed",
		"val_metric", "test_metric", "config"}}
	add := func(method string, repeat int, fidelity float64, failed, hidden bool, auc float64) {
		ev.Add("vehicle", repeat, method, hidden, 0, fidelity, failed, auc, auc, "c")
	}
	for r := range 10 { // one row: mean 0.5 + 0.04·4.5 = 0.68
		add("ahsc", r, 1, false, false, 0.5+0.04*float64(r))
		add("ahsc", r, 0.005, false, false, 0.99) // a lower rung
		add("ahsc", r, 1, true, false, 0.99)      // failed
		add("ahsc", r, 1, false, true, 0.99)      // hidden
	}
	for r := 10; r < 20; r++ { // rows (0.9, 0.7)×5 = 0.8 and (0.6, 0.5)×5 = 0.55
		if r < 15 {
			add("ahsc", r, 1, false, false, 0.9)
			add("ahsc", r, 1, false, false, 0.7)
		} else {
			add("ahsc", r, 1, false, false, 0.6)
			add("ahsc", r, 1, false, false, 0.5)
		}
	}
	for r := range 9 { // repeat 9 missing: no group
		add("random", r, 1, false, false, 0.9)
	}
	authors := &experiments.Result{Experiment: "ahsc", Params: map[string]string{"protocol": protocolAuthors}, Tables: []experiments.Table{ev}}
	clean := &experiments.Result{Experiment: "ahsc", Params: map[string]string{"protocol": protocolClean}, Tables: []experiments.Table{ev}}
	var b bytes.Buffer
	writeAuthorsParser(&b, []StoredRun{{ID: 1, Result: authors}, {ID: 2, Result: clean}})
	// the median of 0.68 and 0.8
	want := "| vehicle | 0.740 [0.680, 0.800] (0.885) n=2 | – | – | – | – | – |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	cells := AuthorsParserCells(StoredRun{ID: 1, Result: authors}, StoredRun{ID: 2, Result: clean})
	wantRows := []struct {
		first, trainings int
		value            float64
	}{{0, 10, 0.68}, {10, 20, 0.8}} // in group order, whatever the map order
	if len(cells.Rows) != len(wantRows) {
		t.Fatalf("AuthorsParserCells has %d rows, want %d: %v", len(cells.Rows), len(wantRows), cells.Rows)
	}
	for i, w := range wantRows {
		if cells.String(i, "dataset") != "vehicle" || cells.String(i, "method") != "ahsc" || cells.Int(i, "first_repeat") != w.first ||
			cells.Int(i, "trainings") != w.trainings || math.Abs(cells.Float(i, "parser_value")-w.value) > 1e-12 ||
			cells.Float(i, "paper") != 0.885 || cells.Int(i, "run") != 1 {
			t.Errorf("row %d = %v, want vehicle ahsc first %d, %d trainings, %v, paper 0.885, run 1", i, cells.Rows[i], w.first, w.trainings, w.value)
		}
	}
	var none bytes.Buffer
	writeAuthorsParser(&none, []StoredRun{{ID: 2, Result: clean}})
	if none.Len() != 0 {
		t.Errorf("a clean run alone, yet a table: %q", none.String())
	}
}
