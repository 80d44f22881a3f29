package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBootstrapTwoPoints checks the interval against the exact bootstrap distribution of a
// two-value sample: a resample's mean is 1, 1.5 or 2 with probabilities 1/4, 1/2, 1/4, so the
// 2.5% and 97.5% percentiles of many resamples are 1 and 2 exactly.
func TestBootstrapTwoPoints(t *testing.T) {
	iv, err := Bootstrap([]float64{1, 2}, Mean, BootstrapOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if iv.Low != 1 || iv.High != 2 {
		t.Fatalf("interval of the mean of {1, 2} = %v, want [1, 2]", iv)
	}
	// A 40% interval lies inside the middle atom: both ends are 1.5.
	iv, err = Bootstrap([]float64{1, 2}, Mean, BootstrapOptions{Seed: 7, Level: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	if iv.Low != 1.5 || iv.High != 1.5 {
		t.Fatalf("40%% interval = %v, want [1.5, 1.5]", iv)
	}
}

// TestBootstrapNormalMean checks the mean's interval of a large normal sample against the
// normal approximation mean ± 1.96·s/√n, which the percentile bootstrap approaches.
func TestBootstrapNormalMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 400)
	for i := range xs {
		xs[i] = 10 + 3*rng.NormFloat64()
	}
	iv, err := Bootstrap(xs, Mean, BootstrapOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, h := Mean(xs), 1.96*StdDev(xs)/math.Sqrt(float64(len(xs)))
	if math.Abs(iv.Low-(m-h)) > 0.1*h || math.Abs(iv.High-(m+h)) > 0.1*h {
		t.Fatalf("interval %v, want about [%.4f, %.4f]", iv, m-h, m+h)
	}
}

func TestBootstrapSeeded(t *testing.T) {
	xs := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
	a, _ := Bootstrap(xs, Median, BootstrapOptions{Seed: 3, Resamples: 500})
	b, _ := Bootstrap(xs, Median, BootstrapOptions{Seed: 3, Resamples: 500})
	ys := []float64{0.31, 1.7, 2.05, 0.93, 4.4, 1.21, 0.06, 2.9}
	c, _ := Bootstrap(ys, Mean, BootstrapOptions{Seed: 4, Resamples: 500})
	d, _ := Bootstrap(ys, Mean, BootstrapOptions{Seed: 5, Resamples: 500})
	if a != b {
		t.Fatalf("same seed, different intervals: %v, %v", a, b)
	}
	if c == d {
		t.Fatalf("different seeds gave the same interval %v", c)
	}
	if cst, _ := Bootstrap([]float64{2, 2, 2}, Mean, BootstrapOptions{}); cst.Low != 2 || cst.High != 2 {
		t.Fatalf("constant sample: %v, want [2, 2]", cst)
	}
}

func TestBootstrapErrors(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		stat func([]float64) float64
		opt  BootstrapOptions
		want error
	}{
		{nil, Mean, BootstrapOptions{}, ErrEmpty},
		{[]float64{1, math.NaN()}, Mean, BootstrapOptions{}, ErrNaN},
		{[]float64{1}, nil, BootstrapOptions{}, ErrBadOption},
		{[]float64{1}, Mean, BootstrapOptions{Level: 1}, ErrBadOption},
		{[]float64{1}, Mean, BootstrapOptions{Resamples: -1}, ErrBadOption},
		{[]float64{1}, Mean, BootstrapOptions{Resamples: 2_000_000}, ErrBadOption},
	} {
		if _, err := Bootstrap(c.xs, c.stat, c.opt); !errors.Is(err, c.want) {
			t.Errorf("Bootstrap(%v, %+v) error %v, want %v", c.xs, c.opt, err, c.want)
		}
	}
}

// TestPercentile checks numpy.percentile's linear interpolation, worked by hand:
// np.percentile([1, 2, 3, 4], [2.5, 97.5]) = [1.075, 3.925].
func TestPercentile(t *testing.T) {
	s := []float64{1, 2, 3, 4}
	if lo, hi := percentile(s, 0.025), percentile(s, 0.975); math.Abs(lo-1.075) > 1e-12 || math.Abs(hi-3.925) > 1e-12 {
		t.Fatalf("percentiles %v %v, want 1.075 3.925", lo, hi)
	}
}

// TestSpearmanBootstrapExact checks intervals whose bootstrap distribution is known. With y a
// monotone function of x every resample's ρ is ±1, or 0 when it drew one pair n times: with
// 5 pairs that has probability 5/5⁵ = 0.0016, inside the 2.5% tail, so the interval is
// [1, 1] (decreasing: [−1, −1]; to rounding, as tied ranks' ρ is a ratio of square roots);
// with 3 pairs it has probability 1/9, so the 2.5% end is 0.
func TestSpearmanBootstrapExact(t *testing.T) {
	x := []float64{0.3, 1.2, 2.5, 2.9, 7}
	up := []float64{-4, 0.5, 3, 10, 11}
	down := []float64{9, 8, 1, 0, -3}
	for _, c := range []struct {
		y    []float64
		want Interval
	}{{up, Interval{1, 1}}, {down, Interval{-1, -1}}} {
		iv, err := SpearmanBootstrap(x, c.y, BootstrapOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(iv.Low-c.want.Low) > 1e-12 || math.Abs(iv.High-c.want.High) > 1e-12 {
			t.Errorf("SpearmanBootstrap(%v, %v) = %v, want %v", x, c.y, iv, c.want)
		}
	}
	iv, err := SpearmanBootstrap(x[:3], up[:3], BootstrapOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if iv.Low != 0 || math.Abs(iv.High-1) > 1e-12 {
		t.Errorf("3 monotone pairs: %v, want [0, 1] (a resample of one pair counts as ρ = 0)", iv)
	}
}

// TestSpearmanBootstrapRecomputed: the interval is Bootstrap's over the pair indices with each
// resample's ρ recomputed from its pairs (the same draws, bit for bit), it is ordered, holds
// the sample's ρ, and moves with the seed.
func TestSpearmanBootstrapRecomputed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := make([]float64, 40), make([]float64, 40)
	for i := range x {
		x[i] = rng.NormFloat64()
		y[i] = 0.5*x[i] + rng.NormFloat64()
	}
	opt := BootstrapOptions{Resamples: 2000, Seed: 1}
	iv, err := SpearmanBootstrap(x, y, opt)
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]float64, len(x))
	for i := range idx {
		idx[i] = float64(i)
	}
	want, err := Bootstrap(idx, func(s []float64) float64 {
		var a, b []float64
		for _, i := range s {
			a, b = append(a, x[int(i)]), append(b, y[int(i)])
		}
		r, err := Spearman(a, b)
		if err != nil {
			return 0
		}
		return r.Rho
	}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if iv != want {
		t.Errorf("SpearmanBootstrap = %v, the bootstrap of ρ over the pair indices %v", iv, want)
	}
	r, _ := Spearman(x, y)
	if !(iv.Low < r.Rho && r.Rho < iv.High) || iv.Low < -1 || iv.High > 1 {
		t.Errorf("interval %v does not hold ρ = %.3f inside [-1, 1]", iv, r.Rho)
	}
	if other, _ := SpearmanBootstrap(x, y, BootstrapOptions{Resamples: 2000, Seed: 2}); other == iv {
		t.Errorf("seeds 1 and 2 gave the same interval %v", iv)
	}
}

func TestSpearmanBootstrapErrors(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		opt  BootstrapOptions
		want error
	}{
		{nil, nil, BootstrapOptions{}, ErrEmpty},
		{[]float64{1, 2, 3}, []float64{1, 2}, BootstrapOptions{}, ErrLengthMismatch},
		{[]float64{1, 2}, []float64{2, 1}, BootstrapOptions{}, ErrTooFew},
		{[]float64{1, 2, 3}, []float64{4, 4, 4}, BootstrapOptions{}, ErrConstantInput},
		{[]float64{1, math.NaN(), 3}, []float64{1, 2, 3}, BootstrapOptions{}, ErrNaN},
		{[]float64{1, 2, 3}, []float64{1, 3, 2}, BootstrapOptions{Level: 2}, ErrBadOption},
	} {
		iv, err := SpearmanBootstrap(c.x, c.y, c.opt)
		if !errors.Is(err, c.want) || !math.IsNaN(iv.Low) || !math.IsNaN(iv.High) {
			t.Errorf("SpearmanBootstrap(%v, %v, %+v) = %v, %v; want NaN, %v", c.x, c.y, c.opt, iv, err, c.want)
		}
	}
}
