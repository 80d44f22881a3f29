package stats

import (
	"math"
	"testing"
)

// TestMinMannWhitneyPIsTheExactTestsFloor checks the formula against the test itself: two
// perfectly separated samples get exactly the minimum, and no ordering of the pooled ranks
// gets less.
func TestMinMannWhitneyPIsTheExactTestsFloor(t *testing.T) {
	for n1 := 1; n1 <= 6; n1++ {
		for n2 := 1; n2 <= 6; n2++ {
			x, y := make([]float64, n1), make([]float64, n2)
			for i := range x {
				x[i] = float64(i)
			}
			for i := range y {
				y[i] = float64(100 + i)
			}
			r, err := MannWhitneyU(x, y, MannWhitneyOptions{Method: Exact})
			if err != nil {
				t.Fatal(err)
			}
			if want := MinMannWhitneyP(n1, n2); math.Abs(r.P-want) > 1e-12 {
				t.Errorf("n = %d, %d: separated samples give p = %v, MinMannWhitneyP = %v", n1, n2, r.P, want)
			}
			// Interleaving one pair of observations can only raise p.
			if n1 > 1 && n2 > 1 {
				x[n1-1], y[0] = y[0], x[n1-1]
				if r2, _ := MannWhitneyU(x, y, MannWhitneyOptions{Method: Exact}); !(r2.P > r.P) {
					t.Errorf("n = %d, %d: an interleaved pair gives p = %v ≤ %v", n1, n2, r2.P, r.P)
				}
			}
		}
	}
	for _, c := range []struct {
		n1, n2 int
		want   float64
	}{{3, 3, 0.1}, {4, 4, 2.0 / 70}, {1, 5, 1.0 / 3}, {0, 5, 1}} {
		if got := MinMannWhitneyP(c.n1, c.n2); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("MinMannWhitneyP(%d, %d) = %v, want %v", c.n1, c.n2, got, c.want)
		}
	}
}

func TestFourRepeatsAreTheFewestThatCanSeparate(t *testing.T) {
	if n := MinRepeats(0.05); n != 4 {
		t.Errorf("MinRepeats(0.05) = %d, want 4", n)
	}
	if n := MinRepeats(0.01); n != 5 { // 2/C(10,5) = 0.0079
		t.Errorf("MinRepeats(0.01) = %d, want 5", n)
	}
	for _, c := range []struct {
		sizes []int
		want  bool
	}{
		{[]int{3, 3, 3}, false}, {[]int{4, 4, 4}, true}, {[]int{4, 4, 3}, false},
		{[]int{3, 5}, true}, // 2/C(8,3) = 0.036
		{[]int{3, 4}, false}, {[]int{1, 1}, false}, {[]int{10}, false},
	} {
		if got := CanSeparate(c.sizes, 0.05); got != c.want {
			t.Errorf("CanSeparate(%v) = %v, want %v", c.sizes, got, c.want)
		}
	}
}
