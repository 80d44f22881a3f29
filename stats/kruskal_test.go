package stats

import (
	"errors"
	"math"
	"testing"
)

func TestKruskalWallisFixtures(t *testing.T) {
	f := loadFixtures(t)
	for _, c := range f.Kruskal {
		groups := make([][]float64, len(c.Groups))
		for i, g := range c.Groups {
			groups[i] = floats(g)
		}
		got, err := KruskalWallis(groups...)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		// H is a difference of sums and can cancel to ~0; compare it with
		// an absolute floor.
		if math.Abs(got.H-float64(c.H)) > asymTol*math.Max(math.Abs(float64(c.H)), 1) {
			t.Errorf("%s: H = %v, want %v", c.Name, got.H, c.H)
		}
		if !closeTo(got.P, float64(c.P), asymTol) {
			t.Errorf("%s: P = %v, want %v", c.Name, got.P, c.P)
		}
		if got.DF != len(groups)-1 {
			t.Errorf("%s: DF = %d", c.Name, got.DF)
		}
	}
}

func TestKruskalWallisErrors(t *testing.T) {
	cases := []struct {
		groups [][]float64
		want   error
	}{
		{[][]float64{{1, 2, 3}}, ErrTooFew},
		{nil, ErrTooFew},
		{[][]float64{{1, 2}, {}}, ErrEmpty},
		{[][]float64{{1, math.NaN()}, {2}}, ErrNaN},
		{[][]float64{{2, 2}, {2, 2, 2}}, ErrAllIdentical},
	}
	for i, c := range cases {
		if _, err := KruskalWallis(c.groups...); !errors.Is(err, c.want) {
			t.Errorf("case %d: err = %v, want %v", i, err, c.want)
		}
	}
}
