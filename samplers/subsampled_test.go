package samplers_test

import (
	"math"
	"testing"

	"github.com/hyperflat/hyperflat/samplers"
)

// logNormal is the log density of N(mu, s²) at z.
func logNormal(z, mu, s float64) float64 {
	d := (z - mu) / s
	return -0.5*d*d - math.Log(s) - 0.5*math.Log(2*math.Pi)
}

// logMix is the log density of (1 − q)·N(0, s²) + q·N(mu, s²) at z.
func logMix(z, q, mu, s float64) float64 {
	a, b := math.Log1p(-q)+logNormal(z, 0, s), math.Log(q)+logNormal(z, mu, s)
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// renyi is D_α(P‖Q) = log(∫ p^α q^{1−α} dz)/(α − 1), integrated numerically by the trapezoid
// rule (spectrally accurate for these smooth, Gaussian-tailed integrands) on [lo, hi], in log
// space: the integrand peaks near z = α for the sampled Gaussian and reaches e^{α²/(2σ²)}.
func renyi(logp, logq func(float64) float64, alpha, lo, hi float64) float64 {
	const n = 200000
	h := (hi - lo) / n
	vals := make([]float64, n+1)
	top := math.Inf(-1)
	for i := range vals {
		z := lo + float64(i)*h
		vals[i] = alpha*logp(z) + (1-alpha)*logq(z)
		top = max(top, vals[i])
	}
	var sum float64
	for i, v := range vals {
		w := 1.0
		if i == 0 || i == n {
			w = 0.5
		}
		sum += w * math.Exp(v-top)
	}
	return (top + math.Log(sum*h)) / (alpha - 1)
}

// TestSampledGaussianNumeric checks the closed forms of Mironov, Talwar & Zhang (2019), the
// binomial sum for integer α and the two series for fractional α, against direct numerical
// integration of D_α(μ‖μ₀) for μ = (1 − q)N(0, σ²) + qN(1, σ²) and μ₀ = N(0, σ²), and that the
// other direction D_α(μ₀‖μ) is no larger (their Theorem 5).
func TestSampledGaussianNumeric(t *testing.T) {
	for _, c := range []struct{ q, sigma, alpha float64 }{
		{0.01, 1, 2}, {0.01, 1, 8}, {0.1, 0.8, 4}, {0.2, 4, 16}, {0.05, 2, 32},
		{0.01, 2, 1.5}, {0.05, 2, 3.5}, {0.3, 1.5, 7.25}, {0.1, 1, 1.1},
	} {
		got, err := samplers.SampledGaussianRDP(c.q, c.sigma, c.alpha)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := -40*c.sigma, c.alpha+40*c.sigma
		mix := func(z float64) float64 { return logMix(z, c.q, 1, c.sigma) }
		base := func(z float64) float64 { return logNormal(z, 0, c.sigma) }
		want := renyi(mix, base, c.alpha, lo, hi)
		if !closeTo(got, want, 1e-8) {
			t.Errorf("q %v σ %v α %v: closed form %.15g; numerical D_α(μ‖μ₀) %.15g", c.q, c.sigma, c.alpha, got, want)
		}
		t.Logf("q %v σ %v α %v: closed form %.12g, numerical %.12g", c.q, c.sigma, c.alpha, got, want)
		if rev := renyi(base, mix, c.alpha, lo, hi); rev > want*(1+1e-9) {
			t.Errorf("q %v σ %v α %v: D_α(μ₀‖μ) = %.15g exceeds D_α(μ‖μ₀) = %.15g", c.q, c.sigma, c.alpha, rev, want)
		}
	}
}

// TestSampledGaussianLimits checks the no-subsampling limit: at q = 1 the sampled Gaussian is
// the Gaussian mechanism, α/(2σ²), and the bound is continuous there (integer and fractional
// orders); at q = 0 nothing is released about the data.
func TestSampledGaussianLimits(t *testing.T) {
	for _, c := range []struct{ sigma, alpha float64 }{{1, 2}, {2, 8}, {0.7, 3}, {1.5, 2.5}, {3, 10.5}} {
		plain := c.alpha / (2 * c.sigma * c.sigma)
		if got, _ := samplers.SampledGaussianRDP(1, c.sigma, c.alpha); got != plain {
			t.Errorf("σ %v α %v: q = 1 gives %v; want α/(2σ²) = %v", c.sigma, c.alpha, got, plain)
		}
		if got, _ := samplers.SampledGaussianRDP(1-1e-9, c.sigma, c.alpha); !closeTo(got, plain, 1e-6) {
			t.Errorf("σ %v α %v: q = 1 − 10⁻⁹ gives %v; want ≈ %v", c.sigma, c.alpha, got, plain)
		}
		if got, _ := samplers.SampledGaussianRDP(0, c.sigma, c.alpha); got != 0 {
			t.Errorf("q = 0 gives %v", got)
		}
		// Amplification: a small rate is far below the plain mechanism, and RDP grows with q.
		small, _ := samplers.SampledGaussianRDP(0.01, c.sigma, c.alpha)
		mid, _ := samplers.SampledGaussianRDP(0.1, c.sigma, c.alpha)
		if !(small < mid && mid < plain) {
			t.Errorf("σ %v α %v: RDP at q = 0.01, 0.1, 1: %v, %v, %v; want increasing", c.sigma, c.alpha, small, mid, plain)
		}
	}
	for _, bad := range [][3]float64{{-0.1, 1, 2}, {1.1, 1, 2}, {0.1, 0, 2}, {0.1, 1, 1}, {0.1, 1, math.Inf(1)}} {
		if _, err := samplers.SampledGaussianRDP(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("q %v σ %v α %v accepted", bad[0], bad[1], bad[2])
		}
	}
}

// TestSubsampledAccountant ties the DP-SGLD accountant's subsampled bounds to the mechanism:
// η = 1.25, β = 1, n = 1000, b = 50, L = 1 give q = 0.05, noise multiplier
// σ = (b/L)·√(2/(ηβn)) = 50·0.04 = 2 and ρ = ηβnL²/b² = 0.5.
func TestSubsampledAccountant(t *testing.T) {
	a := samplers.Accountant{Eta: 1.25, Beta: 1, N: 1000, Batch: 50, Clip: 1}
	sigma, err := a.NoiseMultiplier()
	if err != nil || !closeTo(sigma, 2, 1e-14) {
		t.Fatalf("noise multiplier %v, %v; want 2", sigma, err)
	}
	for _, alpha := range []float64{2, 5, 7.5} {
		got, err := a.SubsampledRDP(10, alpha, samplers.PoissonSampling)
		if err != nil {
			t.Fatal(err)
		}
		one, _ := samplers.SampledGaussianRDP(0.05, 2, alpha)
		if !closeTo(got, 10*one, 1e-14) {
			t.Errorf("α %v: 10 Poisson steps %v; want 10·%v", alpha, got, one)
		}
	}
	// Full batches under Poisson sampling (q = 1) are the plain Gaussian mechanism with the
	// add/remove sensitivity ηL/b, a quarter of Accountant.RDP's replace-one α·ρ.
	full := a
	full.Batch = full.N
	for _, alpha := range []float64{2, 3.5, 40} {
		got, _ := full.SubsampledRDP(7, alpha, samplers.PoissonSampling)
		plain, _ := full.RDP(7, alpha)
		if !closeTo(got, plain/4, 1e-14) {
			t.Errorf("q = 1, α %v: %v; want RDP/4 = %v", alpha, got, plain/4)
		}
	}

	// Fixed-size batches, replace-one: the bound must dominate the divergence of an adjacent
	// pair it covers. With every other example's clipped gradient 0 and the replaced one +L
	// against −L, one step releases (1 − γ)N(0, s²) + γN(±c, s²), c = ηL/b and s/c = σ = 2.
	for _, alpha := range []float64{2, 3, 6, 12} {
		bound, err := a.SubsampledRDP(1, alpha, samplers.FixedSizeSampling)
		if err != nil {
			t.Fatal(err)
		}
		p := func(z float64) float64 { return logMix(z, 0.05, 1, 2) }
		q := func(z float64) float64 { return logMix(z, 0.05, -1, 2) }
		pair := renyi(p, q, alpha, -80, alpha+80)
		if !(bound >= pair) {
			t.Errorf("fixed size, α %v: bound %v below the divergence %v of an adjacent pair", alpha, bound, pair)
		}
		plain, _ := a.RDP(1, alpha)
		if !(bound < plain) {
			t.Errorf("fixed size, α %v: bound %v not below the unsampled %v at γ = 0.05", alpha, bound, plain)
		}
		t.Logf("fixed size γ = 0.05, ρ = 0.5, α %v: bound %.6g, adjacent pair %.6g, no amplification %.6g", alpha, bound, pair, plain)
	}
	if _, err := a.SubsampledRDP(1, 2.5, samplers.FixedSizeSampling); err == nil {
		t.Error("fixed-size bound at a fractional order accepted")
	}
	// At γ = 1 Theorem 9 is looser than the plain mechanism: the bound is not a limit there.
	if got, _ := full.SubsampledRDP(1, 4, samplers.FixedSizeSampling); !(got > 4*0.5/20) {
		t.Errorf("fixed size at γ = 1: %v", got)
	}
}

// TestSubsampledEpsilon compares (ε, δ) with and without amplification on a DP-SGD-like
// setting: n = 60000, b = 256, L = 1, β = 1, η such that σ = 1.1, 1000 steps, δ = 10⁻⁵.
func TestSubsampledEpsilon(t *testing.T) {
	const n, b, sigma = 60000, 256, 1.1
	eta := 2 * b * b / (sigma * sigma * n) // σ = (b/L)·√(2/(ηβn))
	a := samplers.Accountant{Eta: eta, Beta: 1, N: n, Batch: b, Clip: 1}
	plain, _, err := a.Epsilon(1000, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	pois, pa, err := a.SubsampledEpsilon(1000, 1e-5, samplers.PoissonSampling)
	if err != nil {
		t.Fatal(err)
	}
	fixed, fa, err := a.SubsampledEpsilon(1000, 1e-5, samplers.FixedSizeSampling)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ε at δ = 1e-5 after 1000 steps, q = %.5f, σ = %v: no amplification %.4g; Poisson %.4g (α = %v); fixed size %.4g (α = %v)",
		float64(b)/n, sigma, plain, pois, pa, fixed, fa)
	if !(pois < fixed && fixed < plain) {
		t.Errorf("ε: Poisson %v, fixed size %v, no amplification %v; want increasing", pois, fixed, plain)
	}
	// The grid minimum is a minimum: no order of a finer scan does better by more than the
	// grid's spacing allows.
	for o := 1.05; o < 100; o += 0.05 {
		r, err := a.SubsampledRDP(1000, o, samplers.PoissonSampling)
		if err != nil {
			t.Fatal(err)
		}
		if e := r + math.Log(1e5)/(o-1); e < pois*(1-0.05) {
			t.Errorf("order %v gives ε = %v, well below the grid's %v", o, e, pois)
		}
	}
}
