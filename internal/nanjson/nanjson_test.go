package nanjson

import (
	"encoding/json"
	"math"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, x := range []float64{0, -0.5, 0.1, 1e300, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1)} {
		b, err := json.Marshal(Float(x))
		if err != nil {
			t.Fatal(err)
		}
		var y Float
		if err := json.Unmarshal(b, &y); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !(float64(y) == x || math.IsNaN(x) && math.IsNaN(float64(y))) {
			t.Errorf("%v → %s → %v", x, b, y)
		}
	}
	var f Float
	for _, c := range []struct {
		in   string
		want float64
	}{{`"NaN"`, math.NaN()}, {`"+Inf"`, math.Inf(1)}, {`"Inf"`, math.Inf(1)}, {`1.5`, 1.5}, {`null`, math.NaN()}} {
		if err := json.Unmarshal([]byte(c.in), &f); err != nil || !(float64(f) == c.want || math.IsNaN(c.want) && math.IsNaN(float64(f))) {
			t.Errorf("%s: %v %v", c.in, f, err)
		}
	}
	for _, bad := range []string{`"x"`, `"1.5"`, `true`, `[1]`} {
		if err := json.Unmarshal([]byte(bad), &f); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	m := map[string]float64{"a": math.NaN(), "b": 2}
	b, _ := json.Marshal(Map(m))
	var back map[string]Float
	if err := json.Unmarshal(b, &back); err != nil || back["b"] != 2 || !math.IsNaN(float64(back["a"])) || len(Unmap(back)) != 2 {
		t.Errorf("map: %s → %v, %v", b, back, err)
	}
}
