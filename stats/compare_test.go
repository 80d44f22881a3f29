package stats

import (
	"errors"
	"math"
	"testing"
)

func TestCompareFixtures(t *testing.T) {
	f := loadFixtures(t)
	for _, c := range f.Compare {
		o := c.Options
		opts := CompareOptions{
			LowerIsBetter: o.LowerIsBetter,
			ByMedian:      o.UseMedian,
			UniquePairs:   o.UniquePairs,
			Alpha:         o.Alpha,
		}
		if o.Correction != "" {
			opts.Correction = parseCorrection(t, o.Correction)
		}
		name := c.Name
		groups := make([]Group, len(c.Names))
		for i, n := range c.Names {
			groups[i] = Group{Name: n, Values: floats(c.Groups[i])}
		}
		got, err := Compare(groups, opts)
		if err != nil {
			t.Errorf("%s %+v: %v", name, o, err)
			continue
		}
		want := c.Result
		if !closeTo(got.KruskalH, float64(want.KruskalH), asymTol) || !closeTo(got.KruskalP, float64(want.KruskalP), asymTol) {
			t.Errorf("%s %+v: Kruskal %v %v, want %v %v", name, o, got.KruskalH, got.KruskalP, want.KruskalH, want.KruskalP)
		}
		loc := got.Means
		if opts.ByMedian {
			loc = got.Medians
		}
		for i := range loc {
			if !closeTo(loc[i], float64(want.Loc[i]), 1e-13) {
				t.Errorf("%s %+v: location[%d] = %v, want %v", name, o, i, loc[i], want.Loc[i])
			}
			for j := range loc {
				if !closeTo(got.P[i][j], float64(want.P[i][j]), asymTol) {
					t.Errorf("%s %+v: P[%d][%d] = %v, want %v", name, o, i, j, got.P[i][j], want.P[i][j])
				}
				if !closeTo(got.Adjusted[i][j], float64(want.Adjusted[i][j]), asymTol) {
					t.Errorf("%s %+v: Adjusted[%d][%d] = %v, want %v", name, o, i, j, got.Adjusted[i][j], want.Adjusted[i][j])
				}
			}
			if got.Best[i] != want.Best[i] {
				t.Errorf("%s %+v: Best[%d] = %v, want %v", name, o, i, got.Best[i], want.Best[i])
			}
		}
		if got.Top != want.Top || got.TopSignificant != want.TopSignificant {
			t.Errorf("%s %+v: Top %d %v, want %d %v", name, o, got.Top, got.TopSignificant, want.Top, want.TopSignificant)
		}
	}
}

func TestCompareKruskalGate(t *testing.T) {
	// Two clearly different groups and a third: without the gate the
	// pairwise tests decide; with a gate that cannot pass (identical data)
	// every group is best.
	groups := []Group{
		{"a", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"b", []float64{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}},
	}
	c, err := Compare(groups, CompareOptions{KruskalGate: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Top != 1 || !c.TopSignificant || c.Best[0] || !c.Best[1] {
		t.Errorf("gate passed: %+v", c)
	}
	same := []Group{{"a", []float64{1, 1, 1}}, {"b", []float64{1, 1}}}
	c, err = Compare(same, CompareOptions{KruskalGate: true})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(c.KruskalH) || !math.IsNaN(c.KruskalP) || c.TopSignificant || !c.Best[0] || !c.Best[1] {
		t.Errorf("identical groups: %+v", c)
	}
	if c.P[0][1] != 1 {
		t.Errorf("identical groups: P = %v, want 1", c.P[0][1])
	}
}

func TestCompareErrors(t *testing.T) {
	ok := Group{"ok", []float64{1, 2}}
	cases := []struct {
		groups []Group
		opts   CompareOptions
		want   error
	}{
		{[]Group{ok}, CompareOptions{}, ErrTooFew},
		{[]Group{ok, {"e", nil}}, CompareOptions{}, ErrEmpty},
		{[]Group{ok, {"n", []float64{math.NaN()}}}, CompareOptions{}, ErrNaN},
		{[]Group{ok, ok}, CompareOptions{Alpha: 2}, ErrBadOption},
		{[]Group{ok, ok}, CompareOptions{Correction: 5}, ErrBadOption},
		{[]Group{ok, ok}, CompareOptions{Method: 5}, ErrBadOption},
	}
	for i, c := range cases {
		if _, err := Compare(c.groups, c.opts); !errors.Is(err, c.want) {
			t.Errorf("case %d: err = %v, want %v", i, err, c.want)
		}
	}
}
