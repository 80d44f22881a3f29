package experiments

import (
	"fmt"
	"math"
	"strconv"
	"testing"
)

// Issue 17 (figures): "Eq. 1" and "ζ=1000" shared one blue and colours changed between panels,
// because series took the palette by position. Every figure now draws a method in
// MethodColor(method): the same colour for a name every time, distinct within each
// experiment's methods and within each ζ grid.
func TestMethodColorConsistent(t *testing.T) {
	groups := map[string][]string{
		"ahsc":                {"ahsc", "random", "tpe", "bohb", "hebo", "turbo", "ahsc-valloss", "ahsc-hessian"},
		"freedman":            {"validation", "pac-bayes", "aic", "bic", "cv10"},
		"weightdecay methods": {"validation", "pac-bayes", "pac-bayes-oracle", "min-norm"},
		"ζ quick":             {"Eq. 1", "ζ=10", "ζ=100", "ζ=1000"},
		"ζ cifar10":           {"Eq. 1", "ζ=30", "ζ=300"},
		"ζ paper":             {"Eq. 1", "ζ=1", "ζ=2", "ζ=3", "ζ=4", "ζ=5"},
	}
	for g, names := range groups {
		seen := map[string]string{}
		for _, n := range names {
			if MethodColor(n) != MethodColor(n) {
				t.Errorf("%s: MethodColor(%q) is not stable", g, n)
			}
			key := fmt.Sprint(MethodColor(n))
			if other, ok := seen[key]; ok {
				t.Errorf("%s: %q and %q share colour %s", g, n, other, key)
			}
			seen[key] = n
		}
	}
	if MethodColor("validation") != MethodColor("Eq. 1") {
		t.Error("validation (freedman) and Eq. 1 (weightdecay) are one objective but differ in colour")
	}
	if MethodColor("cv5") != MethodColor("cv10") {
		t.Error("a K-fold CV method changes colour with K")
	}
	// Names the map does not know still get a fixed colour, never Eq. 1's blue.
	for _, n := range []string{"ζ=7", "my-method", "ζ=0.5"} {
		if MethodColor(n) == MethodColor("Eq. 1") {
			t.Errorf("%q takes Eq. 1's colour", n)
		}
	}
	// Panels pass it through: a series' colour is its own, not its position's.
	pl, err := Panel{Series: []Series{{Label: "x", X: []float64{1}, Y: []float64{1}, Color: MethodColor("tpe")}}}.plot()
	if err != nil || pl == nil {
		t.Fatal(err)
	}
}

// Issue 17: Freedman's figures ticked a predictor count at 2.50. IntegerTicks, the marker of
// Panel.IntX/IntY, labels integers only.
func TestIntegerTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 5}, {0, 2.5}, {1, 6}, {0, 20}, {1, 15}, {0, 1000}, {3, 3}, {0.2, 0.8}} {
		ticks := IntegerTicks{}.Ticks(r[0], r[1])
		labelled := 0
		for _, tk := range ticks {
			if tk.Value != math.Trunc(tk.Value) {
				t.Errorf("range %v: a tick at %g", r, tk.Value)
			}
			if tk.Label == "" {
				continue
			}
			labelled++
			if _, err := strconv.Atoi(tk.Label); err != nil {
				t.Errorf("range %v: label %q is not an integer", r, tk.Label)
			}
		}
		if labelled == 0 || labelled > 11 {
			t.Errorf("range %v: %d labelled ticks, want 1 to 11", r, labelled)
		}
	}
	if n := len(IntegerTicks{}.Ticks(0, 5)); n != 6 {
		t.Errorf("0..5 has %d ticks, want 6 (every integer)", n)
	}
	p, err := Panel{IntX: true, Series: []Series{{X: []float64{0, 5}, Y: []float64{0, 1}}}}.plot()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.X.Tick.Marker.(IntegerTicks); !ok {
		t.Errorf("Panel.IntX: marker %T, want IntegerTicks", p.X.Tick.Marker)
	}
}
