package weightdecay

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBootstrap checks the stratified bootstrap against closed forms: the interval of a mean
// over n units approaches mean ± 1.96·s/√n (s the plug-in standard deviation), strata of one
// unit or of equal values add no width, the draws depend on the seed alone, and numpy's
// linear quantile.
func TestBootstrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 400
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()*2 + 5
	}
	mean := func(idx [][]int) float64 {
		s := 0.0
		for _, i := range idx[0] {
			s += x[i]
		}
		return s / float64(len(idx[0]))
	}
	ci, err := bootstrap([]int{n}, mean, 4000, 0.95, 7)
	if err != nil {
		t.Fatal(err)
	}
	m, ss := 0.0, 0.0
	for _, v := range x {
		m += v / n
	}
	for _, v := range x {
		ss += (v - m) * (v - m) / n
	}
	half := 1.959964 * math.Sqrt(ss/n)
	if math.Abs(ci.est-m) > 1e-12 || math.Abs(ci.lo-(m-half)) > 0.1*half || math.Abs(ci.hi-(m+half)) > 0.1*half {
		t.Errorf("mean of %d normals: %+v, want about %v ± %v", n, ci, m, half)
	}
	again, _ := bootstrap([]int{n}, mean, 4000, 0.95, 7)
	if again != ci {
		t.Errorf("the same seed gave %+v then %+v", ci, again)
	}
	// Two strata: one of a single unit, one of equal values — no variation at all.
	y := [][]float64{{0.3}, {0.5, 0.5, 0.5}}
	flat, err := bootstrap([]int{1, 3}, func(idx [][]int) float64 { return y[0][idx[0][0]] + y[1][idx[1][2]] }, 100, 0.95, 1)
	if err != nil || flat.lo != 0.8 || flat.hi != 0.8 || flat.est != 0.8 {
		t.Errorf("no variation: %+v, %v", flat, err)
	}
	if q := quantile([]float64{1, 2, 3, 4}, 0.25); math.Abs(q-1.75) > 1e-15 {
		t.Errorf("quantile 0.25 of 1..4: %v, want numpy's 1.75", q)
	}
	for _, bad := range []struct {
		sizes []int
		level float64
	}{{[]int{0}, 0.95}, {[]int{3}, 1}, {[]int{3}, 0}} {
		if _, err := bootstrap(bad.sizes, mean, 10, bad.level, 1); err == nil {
			t.Errorf("sizes %v level %v accepted", bad.sizes, bad.level)
		}
	}
	if _, err := bootstrap([]int{3}, nil, 10, 0.95, 1); err == nil {
		t.Error("a nil statistic accepted")
	}
}
