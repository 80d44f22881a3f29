package experiments

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"
)

// TestAddParamsGivesPandasOneNumericColumnPerHyperparameter reads the CSV back as pandas
// would: a param_ column per name, numbers where the values are numbers, empty where a row's
// space lacks the name.
func TestAddParamsGivesPandasOneNumericColumnPerHyperparameter(t *testing.T) {
	tb := Table{Name: "evaluations", Columns: []string{"method", "config"}, Rows: [][]any{
		{"ahsc", "depth=3 log2_width=7 lr=0.001 activation=relu"},
		{"tpe", "depth=2 log2_width=5 lr=1e-05 activation=tanh"},
		{"bayesmark", "alpha=0.5"},
		{"failed", ""},
	}}
	tb.AddParams("config")
	var b bytes.Buffer
	if err := tb.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"method", "config", "param_depth", "param_log2_width", "param_lr", "param_activation", "param_alpha"}
	if len(recs[0]) != len(want) {
		t.Fatalf("header %v, want %v", recs[0], want)
	}
	for i, h := range want {
		if recs[0][i] != h {
			t.Errorf("column %d is %q, want %q", i, recs[0][i], h)
		}
	}
	for _, c := range []int{2, 3, 4, 6} { // numeric: every given value parses
		for r := 1; r < len(recs); r++ {
			if v := recs[r][c]; v != "" {
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					t.Errorf("%s row %d: %q is not a number", want[c], r, v)
				}
			}
		}
	}
	if recs[1][4] != "0.001" || recs[2][4] != "1e-05" || recs[1][5] != "relu" || recs[3][2] != "" || recs[3][6] != "0.5" {
		t.Errorf("values: %v", recs)
	}
	if _, ok := tb.Rows[0][2].(Param); !ok {
		t.Errorf("param_depth cell is %T, want Param", tb.Rows[0][2])
	}
	// Every digit survives the CSV; the store and JSON hold numbers.
	tb.Rows[0][4] = Param(0.000435173)
	if FormatCell(tb.Rows[0][4]) != "0.000435173" {
		t.Errorf("Param prints %q", FormatCell(tb.Rows[0][4]))
	}
	r := &Result{Tables: []Table{tb}}
	enc, err := r.MarshalStored()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalStoredResult(enc)
	if err != nil || back.Tables[0].Float(0, "param_lr") != 0.000435173 {
		t.Errorf("stored param_lr: %v, %v", back.Tables[0].Float(0, "param_lr"), err)
	}
}
