package stats

import (
	"math"
	"testing"
)

func TestMedianMean(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		xs           []float64
		median, mean float64
	}{
		{[]float64{3, 1, 2}, 2, 2},
		{[]float64{4, 1, 3, 2}, 2.5, 2.5},
		{[]float64{5}, 5, 5},
		{[]float64{nan, 1, 9}, 5, nan},
		{nil, nan, nan},
		{[]float64{nan}, nan, nan},
	} {
		if got := Median(c.xs); !same(got, c.median) {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.median)
		}
		if got := Mean(c.xs); !same(got, c.mean) {
			t.Errorf("Mean(%v) = %v, want %v", c.xs, got, c.mean)
		}
	}
	xs := []float64{3, 1, 2}
	Median(xs)
	if xs[0] != 3 {
		t.Error("Median reordered its argument")
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
