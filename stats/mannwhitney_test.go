package stats

import (
	"errors"
	"math"
	"testing"
)

const (
	asymTol  = 1e-10 // asymptotic p-values vs SciPy, relative
	exactTol = 1e-12 // exact p-values vs SciPy's floating-point recurrence
)

func TestMannWhitneyUFixtures(t *testing.T) {
	f := loadFixtures(t)
	for _, c := range f.MannWhitneyU {
		x, y := floats(c.X), floats(c.Y)
		for _, r := range c.Results {
			opts := MannWhitneyOptions{
				Alternative:  parseAlternative(t, r.Alternative),
				Method:       parseMethod(t, r.Method),
				NoContinuity: !r.Continuity,
			}
			name := c.Name + "/" + r.Alternative + "/" + r.Method
			if !r.Continuity {
				name += "/nocont"
			}
			got, err := MannWhitneyU(x, y, opts)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if got.U != float64(r.U) {
				t.Errorf("%s: U = %v, want %v", name, got.U, r.U)
			}
			switch {
			case r.Method == "auto":
				if got.Method.String() != r.Used {
					t.Errorf("%s: used %v, want %s", name, got.Method, r.Used)
				}
				tol := asymTol
				if got.Method == Exact {
					tol = exactTol
				}
				if !closeTo(got.P, float64(r.PSciPy), tol) {
					t.Errorf("%s: P = %v, want %v", name, got.P, r.PSciPy)
				}
			case r.Method == "asymptotic":
				if got.Method != Asymptotic || !closeTo(got.P, float64(r.PSciPy), asymTol) {
					t.Errorf("%s: P = %v (%v), want %v", name, got.P, got.Method, r.PSciPy)
				}
			default: // exact
				if got.Method != Exact {
					t.Errorf("%s: used %v", name, got.Method)
				}
				if r.PExact != nil {
					want := float64(*r.PExact)
					if float64(*r.ExactTotal) < 1<<53 {
						// Integer counts fit in a float64: the p-value must
						// be the correctly rounded quotient, bit for bit.
						if got.P != want {
							t.Errorf("%s: exact P = %v, want %v (= %v/%v)", name, got.P, want, *r.ExactNum, *r.ExactTotal)
						}
					} else if !closeTo(got.P, want, exactTol) {
						t.Errorf("%s: exact P = %v, want %v", name, got.P, want)
					}
				}
				if !c.Ties && !closeTo(got.P, float64(r.PSciPy), exactTol) {
					t.Errorf("%s: exact P = %v, SciPy %v", name, got.P, r.PSciPy)
				}
			}
		}
	}
}

// TestMannWhitneyUExactTies checks a hand-computed conditional distribution
// whose tie pattern makes it asymmetric.
func TestMannWhitneyUExactTies(t *testing.T) {
	// Pooled [1 1 2 | 1 3 3 3]: mid-ranks x = 2,2,4 and y = 2,6,6,6.
	// R1 = 8, U1 = 2. Of the C(7,3) = 35 splits, U1 ≤ 2 in 4 (the three
	// 1s take ranks 2,2,2 and one 2 in rank 4: C(3,2)·1 + C(3,3) = 4) and
	// U1 ≥ 10 in 4, so the two-sided p-value is 8/35.
	x, y := []float64{1, 1, 2}, []float64{1, 3, 3, 3}
	for alt, want := range map[Alternative]float64{Less: 4.0 / 35, Greater: 34.0 / 35, TwoSided: 8.0 / 35} {
		r, err := MannWhitneyU(x, y, MannWhitneyOptions{Alternative: alt, Method: Exact})
		if err != nil || r.U != 2 || r.P != want {
			t.Errorf("%v: got %+v, %v; want U=2 P=%v", alt, r, err, want)
		}
	}
}

func TestMannWhitneyUSymmetry(t *testing.T) {
	x := []float64{0.3, 1.2, 2.2, 2.2, 5.1, 0.7}
	y := []float64{1.5, 2.2, 3.3, 4.4, 6.0, 7.1, 0.1, 9.9, 8.8}
	for _, m := range []Method{Exact, Asymptotic} {
		for _, alt := range []Alternative{TwoSided, Less, Greater} {
			a, err1 := MannWhitneyU(x, y, MannWhitneyOptions{Alternative: alt, Method: m})
			swapped := map[Alternative]Alternative{TwoSided: TwoSided, Less: Greater, Greater: Less}[alt]
			b, err2 := MannWhitneyU(y, x, MannWhitneyOptions{Alternative: swapped, Method: m})
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if a.U+b.U != float64(len(x)*len(y)) || !closeTo(a.P, b.P, 1e-14) {
				t.Errorf("%v %v: (x,y) %+v vs (y,x) %+v", m, alt, a, b)
			}
		}
	}
}

func TestMannWhitneyUAutoFallback(t *testing.T) {
	// 3 vs 20000 without ties, U near its mean: Auto picks exact, which is
	// too large, so it falls back to the asymptotic method; Exact reports the
	// error. (Far in a tail the exact method stays cheap, since only the
	// tail is counted.)
	x := []float64{49.9, 50.05, 50.2}
	y := make([]float64, 20000)
	for i := range y {
		y[i] = float64(i) / 200
	}
	r, err := MannWhitneyU(x, y, MannWhitneyOptions{})
	if err != nil || r.Method != Asymptotic {
		t.Errorf("auto: %+v, %v", r, err)
	}
	if _, err := MannWhitneyU(x, y, MannWhitneyOptions{Method: Exact}); !errors.Is(err, ErrExactTooLarge) {
		t.Errorf("exact: err = %v, want ErrExactTooLarge", err)
	}
	// Against y' = 1, 2, …, 20000, tail = {0.5, 1.5, 3.5} has U1 = 0+1+3 = 4.
	// A split's U1 is a partition of U1 into at most 3 parts (the number of
	// y' below each x), so 1+1+2+3+4 = 11 splits have U1 ≤ 4.
	tail := []float64{0.5, 1.5, 3.5}
	for i := range y {
		y[i] = float64(i + 1)
	}
	r, err = MannWhitneyU(tail, y, MannWhitneyOptions{Method: Exact, Alternative: Less})
	if err != nil || r.Method != Exact {
		t.Fatalf("exact tail: %+v, %v", r, err)
	}
	total := 20003.0 * 20002 * 20001 / 6
	if want := 11 / total; !closeTo(r.P, want, 1e-14) || r.U != 4 {
		t.Errorf("exact tail: %+v, want U=4 P=%v", r, want)
	}
}

func TestMannWhitneyUErrors(t *testing.T) {
	ok := []float64{1, 2}
	cases := []struct {
		x, y []float64
		opts MannWhitneyOptions
		want error
	}{
		{nil, ok, MannWhitneyOptions{}, ErrEmpty},
		{ok, []float64{}, MannWhitneyOptions{}, ErrEmpty},
		{[]float64{1, math.NaN()}, ok, MannWhitneyOptions{}, ErrNaN},
		{ok, ok, MannWhitneyOptions{Alternative: 7}, ErrBadOption},
		{ok, ok, MannWhitneyOptions{Method: -1}, ErrBadOption},
	}
	for i, c := range cases {
		if _, err := MannWhitneyU(c.x, c.y, c.opts); !errors.Is(err, c.want) {
			t.Errorf("case %d: err = %v, want %v", i, err, c.want)
		}
	}
}

// TestMannWhitneyUExactBruteForce compares the exact method with a direct
// enumeration of every split of the pooled sample, on small random samples
// with many ties.
func TestMannWhitneyUExactBruteForce(t *testing.T) {
	seed := uint64(1)
	next := func(n int) int { // xorshift; deterministic, no shared state
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	for trial := 0; trial < 60; trial++ {
		n1, n2 := 1+next(7), 1+next(8)
		levels := 1 + next(5)
		x, y := make([]float64, n1), make([]float64, n2)
		for i := range x {
			x[i] = float64(next(levels))
		}
		for i := range y {
			y[i] = float64(next(levels)) + 0.5*float64(next(2))
		}
		pooled := append(append([]float64(nil), x...), y...)
		rk := rank(pooled)
		N, mn := n1+n2, n1*n2
		obs := 0
		for i := 0; i < n1; i++ {
			obs += rk.doubled[i]
		}
		obs -= n1 * (n1 + 1)
		var le, ge, far, total int
		delta := obs - mn
		if delta < 0 {
			delta = -delta
		}
		for mask := 0; mask < 1<<N; mask++ {
			if popcount(mask) != n1 {
				continue
			}
			s := 0
			for i := 0; i < N; i++ {
				if mask&(1<<i) != 0 {
					s += rk.doubled[i]
				}
			}
			u := s - n1*(n1+1)
			total++
			if u <= obs {
				le++
			}
			if u >= obs {
				ge++
			}
			if d := u - mn; d >= delta || -d >= delta {
				far++
			}
		}
		want := map[Alternative]float64{
			Less:     float64(le) / float64(total),
			Greater:  float64(ge) / float64(total),
			TwoSided: float64(far) / float64(total),
		}
		for alt, w := range want {
			r, err := MannWhitneyU(x, y, MannWhitneyOptions{Alternative: alt, Method: Exact})
			if err != nil || r.P != w {
				t.Errorf("x=%v y=%v %v: P = %v, %v; want %v", x, y, alt, r.P, err, w)
			}
		}
	}
}

func popcount(v int) int {
	n := 0
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}
