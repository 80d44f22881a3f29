package experiments

import (
	"fmt"
	"math"
	"regexp"
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

// Issue 50: premise's Figure 1 ticked a log axis "1e+07, 1e+06, 100000". LogTicks labels every
// tick of an axis in one format, and labels at least two ticks within a range under a decade.
func TestLogTicksOneFormat(t *testing.T) {
	plain := regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	sci := regexp.MustCompile(`^[1-9]e-?[0-9]+$`)
	for _, r := range [][2]float64{{1e5, 1e7}, {3e4, 2e7}, {0.01, 10}, {0.2, 0.8}, {1e-5, 1}, {3, 3000}, {0.05, 2e5}} {
		var labels []string
		inRange := 0
		for _, tk := range (LogTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			labels = append(labels, tk.Label)
			if tk.Value >= r[0] && tk.Value <= r[1] {
				inRange++
			}
			if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || math.Abs(v-tk.Value) > 1e-9*tk.Value {
				t.Errorf("range %v: label %q at %g", r, tk.Label, tk.Value)
			}
		}
		nPlain, nSci := 0, 0
		for _, l := range labels {
			nPlain += b2i(plain.MatchString(l))
			nSci += b2i(sci.MatchString(l))
		}
		if !(nPlain == len(labels) || nSci == len(labels)) || len(labels) == 0 {
			t.Errorf("range %v: labels %q mix formats", r, labels)
		}
		if inRange < 2 {
			t.Errorf("range %v: %d labels in range (%q), want 2 or more", r, inRange, labels)
		}
	}
}

// Issue 50: ζ took colours by order of appearance, so a value changed colour between panels.
// ZetaColor is fixed by the value, distinct within every preset's grid and among the ζ a panel
// of many highlights; HighlightZetas mutes all but MaxSeries.
func TestZetaColorFixed(t *testing.T) {
	for _, grid := range [][]float64{{0, 1, 2, 3, 4, 5}, {0, 10, 100, 1000}, {0, 30, 300}, {0, 1, 10, 100, 1000, 10000},
		{0, 1, 10, 100, 1000, 3000, 10000, 30000, 100000, 300000, 1e6}, {0, 0.0001, 0.001, 0.01, 0.1, 1, 10, 100, 1000, 10000}} {
		seen := map[string]float64{}
		for _, z := range grid {
			key := fmt.Sprint(ZetaColor(z))
			if other, ok := seen[key]; ok {
				t.Errorf("grid %v: ζ %g and %g share %s", grid, z, other, key)
			}
			seen[key] = z
		}
	}
	if ZetaColor(0) != MethodColor("Eq. 1") || ZetaColor(1000) != MethodColor("ζ=1000") || ZetaColor(7) != ZetaColor(7) {
		t.Error("ZetaColor disagrees with MethodColor or is unstable")
	}
	merged := []float64{0, 1, 2, 3, 4, 5, 10, 100, 1000, 10000}
	if got := HighlightZetas(merged); fmt.Sprint(got) != "[2 3 4 5]" {
		t.Errorf("HighlightZetas(%v) mutes %v, want [2 3 4 5]", merged, got)
	}
	// The chosen ζ stays in colour, with the powers of ten nearest to it (the linear/CIFAR-10 grid,
	// whose test-oracle ζ 300000 was greyed).
	wide := []float64{0, 1, 10, 100, 1000, 3000, 10000, 30000, 100000, 300000, 1e6}
	if got := HighlightZetas(wide, 300000); fmt.Sprint(got) != "[1 10 100 3000 30000]" {
		t.Errorf("HighlightZetas(%v, 300000) mutes %v, want [1 10 100 3000 30000]", wide, got)
	}
	if got := HighlightZetas([]float64{0, 1, 2, 3, 4, 5}); got != nil {
		t.Errorf("a grid of %d mutes %v", MaxSeries, got)
	}
	if got := HighlightZetas([]float64{0, 1, 2, 3, 4, 5, 6}); len(got) != 7-MaxSeries && len(got) != 7-2 {
		t.Errorf("HighlightZetas mutes %v", got)
	}
}

// Issue 50: Figure 4.3 drew 3000 overlapping rings. A panel's MaxPoints thins its point series
// evenly and its x label states how many are drawn.
func TestPanelThinsPoints(t *testing.T) {
	var a, b Series
	for i := range 3000 {
		s := &a
		if i%3 == 0 {
			s = &b
		}
		s.X, s.Y = append(s.X, float64(i)), append(s.Y, 1)
	}
	a.Points, b.Points = true, true
	pl, err := Panel{XLabel: "x", MaxPoints: 500, Series: []Series{a, b}}.plot()
	if err != nil {
		t.Fatal(err)
	}
	// every 6th of 2000 and of 1000: 334 + 167
	if want := "x (every 6th point drawn: 501 of 3000)"; pl.X.Label.Text != want {
		t.Errorf("x label %q, want %q", pl.X.Label.Text, want)
	}
	if pl, _ := (Panel{XLabel: "x", MaxPoints: 5000, Series: []Series{a}}).plot(); pl.X.Label.Text != "x" {
		t.Errorf("nothing thinned, yet the label reads %q", pl.X.Label.Text)
	}
}
