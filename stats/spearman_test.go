package stats

import (
	"errors"
	"math"
	"testing"
)

func TestSpearmanFixtures(t *testing.T) {
	f := loadFixtures(t)
	for _, c := range f.Spearman {
		got, err := Spearman(floats(c.X), floats(c.Y))
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if math.Abs(got.Rho-float64(c.Rho)) > 1e-12 {
			t.Errorf("%s: rho = %v, want %v", c.Name, got.Rho, c.Rho)
		}
		if !closeTo(got.P, float64(c.P), asymTol) {
			t.Errorf("%s: P = %v, want %v", c.Name, got.P, c.P)
		}
	}
}

func TestSpearmanErrors(t *testing.T) {
	cases := []struct {
		x, y []float64
		want error
	}{
		{[]float64{1, 2}, []float64{1, 2, 3}, ErrLengthMismatch},
		{nil, nil, ErrEmpty},
		{[]float64{1}, []float64{2}, ErrTooFew},
		{[]float64{1, math.NaN()}, []float64{1, 2}, ErrNaN},
		{[]float64{3, 3, 3}, []float64{1, 2, 3}, ErrConstantInput},
		{[]float64{1, 2, 3}, []float64{0, 0, 0}, ErrConstantInput},
	}
	for i, c := range cases {
		r, err := Spearman(c.x, c.y)
		if !errors.Is(err, c.want) {
			t.Errorf("case %d: err = %v, want %v", i, err, c.want)
		}
		if !math.IsNaN(r.Rho) || !math.IsNaN(r.P) {
			t.Errorf("case %d: result %+v, want NaN", i, r)
		}
	}
}
