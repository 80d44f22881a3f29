package experiments

import (
	"encoding/json"
	"math"
	"regexp"
	"testing"
)

// TestStoredResultRoundTrip checks that every cell type keeps its type and value.
func TestStoredResultRoundTrip(t *testing.T) {
	in := &Result{Experiment: "x", Preset: Quick, Seed: math.MaxUint64, Params: map[string]string{"a": "b"},
		Tables: []Table{{Name: "t", Detail: true, Columns: []string{"i", "u", "f", "g", "nan", "inf", "s", "b", "nil"},
			Rows: [][]any{{3, uint64(math.MaxUint64), 3.0, 0.1, math.NaN(), math.Inf(-1), "NaN", true, nil}}}}}
	b, err := in.MarshalStored()
	if err != nil {
		t.Fatal(err)
	}
	out, err := UnmarshalStoredResult(b)
	if err != nil {
		t.Fatal(err)
	}
	row := out.Tables[0].Rows[0]
	if row[0] != 3 || row[1] != uint64(math.MaxUint64) || row[2] != 3.0 || row[3] != 0.1 || !math.IsNaN(row[4].(float64)) ||
		!math.IsInf(row[5].(float64), -1) || row[6] != "NaN" || row[7] != true || row[8] != nil {
		t.Errorf("round trip: %#v", row)
	}
	if out.Seed != math.MaxUint64 || !out.Tables[0].Detail || out.Params["a"] != "b" {
		t.Errorf("round trip lost fields: %+v", out)
	}
	if !regexp.MustCompile(`"float":"NaN"`).Match(b) {
		t.Errorf("NaN should be tagged: %s", b)
	}
	var f F64
	for _, c := range []struct {
		in   string
		want float64
	}{{`"NaN"`, math.NaN()}, {`"+Inf"`, math.Inf(1)}, {`1.5`, 1.5}, {`null`, math.NaN()}} {
		if err := json.Unmarshal([]byte(c.in), &f); err != nil || !(float64(f) == c.want || math.IsNaN(c.want) && math.IsNaN(float64(f))) {
			t.Errorf("F64 %s: %v %v", c.in, f, err)
		}
	}
}
