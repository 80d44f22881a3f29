package stats

import (
	"errors"
	"math"
	"testing"
)

func TestAdjustPValuesFixtures(t *testing.T) {
	f := loadFixtures(t)
	for _, c := range f.MultipleTests {
		p := floats(c.P)
		for _, r := range c.Results {
			name := c.Name + "/" + r.Method
			adj, rej, err := AdjustPValues(p, r.Alpha, parseCorrection(t, r.Method))
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			for i := range p {
				if !closeTo(adj[i], float64(r.Adjusted[i]), 1e-14) {
					t.Errorf("%s alpha %v: adjusted[%d] = %v, want %v", name, r.Alpha, i, adj[i], r.Adjusted[i])
				}
				if rej[i] != r.Reject[i] {
					t.Errorf("%s alpha %v: reject[%d] = %v, want %v", name, r.Alpha, i, rej[i], r.Reject[i])
				}
			}
		}
	}
}

func TestAdjustPValuesErrors(t *testing.T) {
	cases := []struct {
		p     []float64
		alpha float64
		c     Correction
		want  error
	}{
		{nil, 0.05, BH, ErrEmpty},
		{[]float64{0.1, math.NaN()}, 0.05, BH, ErrNaN},
		{[]float64{0.1, 1.5}, 0.05, BH, ErrBadOption},
		{[]float64{-0.1}, 0.05, BH, ErrBadOption},
		{[]float64{0.1}, 0, BH, ErrBadOption},
		{[]float64{0.1}, 1, TwoStageBH, ErrBadOption},
		{[]float64{0.1}, 0.05, Correction(9), ErrBadOption},
	}
	for i, c := range cases {
		if _, _, err := AdjustPValues(c.p, c.alpha, c.c); !errors.Is(err, c.want) {
			t.Errorf("case %d: err = %v, want %v", i, err, c.want)
		}
	}
}

func TestAdjustPValuesDoesNotModifyInput(t *testing.T) {
	p := []float64{0.04, 0.01, 0.03}
	if _, _, err := AdjustPValues(p, 0.05, TwoStageBH); err != nil {
		t.Fatal(err)
	}
	if p[0] != 0.04 || p[1] != 0.01 || p[2] != 0.03 {
		t.Errorf("input modified: %v", p)
	}
}
