package samplers

import (
	"fmt"
	"math"
)

// Privacy amplification by subsampling, beside Accountant's bound without it (accountant.go).
//
// A mini-batch step touches an example only if the batch contains it, and the noise of the
// step hides whether it did; so a step on a random batch is more private than the same step on
// a batch known to contain the example. Two samplings have RDP bounds that can be computed:
//
//   - Poisson: every example joins every batch independently with probability q = Batch/N,
//     and the clipped sum is divided by the fixed Batch (not by the realized batch size, which
//     would make the step's sensitivity depend on it). Datasets are adjacent when one has one
//     example more (add/remove-one). One step is then the sampled Gaussian mechanism of
//     Mironov, Talwar & Zhang (2019), "Rényi Differential Privacy of the Sampled Gaussian
//     Mechanism", arXiv:1908.10530: adding an example moves the clipped sum by at most L, so
//     the step θ − (η/b)·sum + N(0, 2η/(βn)) has noise multiplier σ = √(2η/(βn))/(ηL/b) =
//     (b/L)·√(2/(ηβn)), and its RDP is SampledGaussianRDP(q, σ, α) (their Section 3).
//     With q = 1 that is α/(2σ²) = α·ηβnL²/(4b²): a quarter of Accountant.RDP's one-step
//     α·ρ, because adding or removing an example moves the sum by L where replacing one moves
//     it by 2L.
//   - Fixed size: every batch is a uniformly random subset of Batch examples, drawn afresh at
//     every step (not the batches of a shuffled epoch, which are dependent), under
//     replace-one adjacency like Accountant. The bound is Theorem 9 of Wang, Balle &
//     Kasiviswanathan (2019), "Subsampled Rényi Differential Privacy and Analytical Moments
//     Accountant", AISTATS, arXiv:1808.00087, for integer orders α ≥ 2, applied to the step on
//     the subsample, which is (α, α·ρ)-RDP (accountant.go) and has no finite ε(∞):
//
//     ε'(α) = log(1 + γ²·C(α,2)·min{4(e^{2ρ} − 1), 2e^{2ρ}} + Σ_{j=3..α} 2·γʲ·C(α,j)·e^{(j−1)jρ})/(α − 1)
//
//     with γ = Batch/N. It is looser than the Poisson bound (at γ = 1 it exceeds α·ρ), and
//     is an upper bound only: the exact divergence of fixed-size sampling has no closed form
//     to test it against, so subsampled_test.go checks that it dominates the divergence of
//     one concrete adjacent pair. The same paper's Theorem 27, tighter for the Gaussian, is
//     not implemented.
//
// Both compose over T steps by adding RDP (Mironov 2017, Prop. 1) and convert to (ε, δ) by
// ε = RDP_T(α) + log(1/δ)/(α − 1) (Prop. 3), minimized over a grid of orders, as Epsilon does.

// Sampling is how DP-SGLD's batches are drawn, for Accountant.SubsampledRDP and
// Accountant.SubsampledEpsilon.
type Sampling int

const (
	// PoissonSampling: each example in each batch independently with probability Batch/N,
	// the clipped sum divided by Batch; add/remove-one adjacency.
	PoissonSampling Sampling = iota
	// FixedSizeSampling: each batch a fresh uniformly random subset of Batch examples;
	// replace-one adjacency. Integer orders only.
	FixedSizeSampling
)

func (s Sampling) String() string {
	switch s {
	case PoissonSampling:
		return "poisson"
	case FixedSizeSampling:
		return "fixed-size"
	}
	return fmt.Sprintf("Sampling(%d)", int(s))
}

// SampledGaussianRDP returns the Rényi divergence of order α > 1 that bounds the sampled
// Gaussian mechanism with sampling rate q in [0, 1] and noise multiplier σ > 0 (the noise's
// standard deviation over the add/remove-one sensitivity): log(A_α)/(α − 1) with
//
//	A_α = E_{z~μ₀}[(μ(z)/μ₀(z))^α],  μ₀ = N(0, σ²),  μ = (1 − q)μ₀ + q·N(1, σ²),
//
// Mironov, Talwar & Zhang (2019), Section 3: for integer α the binomial expansion
// Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}, otherwise their two convergent series split at
// z₀ = σ²·log(1/q − 1) + ½. They show D_α(μ‖μ₀) to be the larger of the two directions;
// subsampled_test.go checks both against numerical integration.
func SampledGaussianRDP(q, sigma, alpha float64) (float64, error) {
	switch {
	case !(q >= 0 && q <= 1):
		return 0, fmt.Errorf("samplers: sampling rate q = %v; want 0 ≤ q ≤ 1", q)
	case !(sigma > 0) || math.IsInf(sigma, 0):
		return 0, fmt.Errorf("samplers: noise multiplier σ = %v; want finite > 0", sigma)
	case !(alpha > 1) || math.IsInf(alpha, 0):
		return 0, fmt.Errorf("samplers: Rényi order α = %v; want finite > 1", alpha)
	}
	if q == 0 {
		return 0, nil
	}
	if q == 1 {
		return alpha / (2 * sigma * sigma), nil
	}
	var logA float64
	if alpha == math.Trunc(alpha) {
		logA = logAInt(q, sigma, int(alpha))
	} else {
		logA = logAFrac(q, sigma, alpha)
	}
	if math.IsNaN(logA) {
		return 0, fmt.Errorf("samplers: sampled Gaussian RDP at q = %v, σ = %v, α = %v lost its precision; use an integer order", q, sigma, alpha)
	}
	return logA / (alpha - 1), nil
}

// logAInt is log A_α for integer α by the binomial sum, in log space since its terms reach
// e^{α²/(2σ²)}.
func logAInt(q, sigma float64, alpha int) float64 {
	lq, l1q := math.Log(q), math.Log1p(-q)
	s2 := 2 * sigma * sigma
	acc := math.Inf(-1)
	for k := 0; k <= alpha; k++ {
		fk := float64(k)
		acc = logAdd(acc, logBinom(float64(alpha), fk)+fk*lq+float64(alpha-k)*l1q+(fk*fk-fk)/s2)
	}
	return acc
}

// logAFrac is log A_α for fractional α: A_α = A₀ + A₁, the integrals over z ≤ z₀ and z > z₀,
// each a series in the generalized binomial coefficients C(α, i), whose signs alternate once
// i > α; the series stop when both terms fall below e⁻³⁰ (Mironov et al. 2019, Section 3).
func logAFrac(q, sigma, alpha float64) float64 {
	a0, a1 := math.Inf(-1), math.Inf(-1)
	z0 := sigma*sigma*math.Log(1/q-1) + 0.5
	lq, l1q := math.Log(q), math.Log1p(-q)
	s2 := 2 * sigma * sigma
	for i := 0; i < 100000; i++ {
		fi := float64(i)
		coef, positive := genBinom(alpha, fi)
		j := alpha - fi
		t0 := coef + fi*lq + j*l1q
		t1 := coef + j*lq + fi*l1q
		e0 := math.Log(0.5) + logErfc((fi-z0)/(math.Sqrt2*sigma))
		e1 := math.Log(0.5) + logErfc((z0-j)/(math.Sqrt2*sigma))
		s0 := t0 + (fi*fi-fi)/s2 + e0
		s1 := t1 + (j*j-j)/s2 + e1
		if positive {
			a0, a1 = logAdd(a0, s0), logAdd(a1, s1)
		} else {
			a0, a1 = logSub(a0, s0), logSub(a1, s1)
		}
		if max(s0, s1) < -30 && fi > alpha {
			break
		}
	}
	return logAdd(a0, a1)
}

// genBinom returns log|C(α, i)| and the sign of C(α, i) = α(α−1)…(α−i+1)/i! for real α.
func genBinom(alpha, i float64) (logAbs float64, positive bool) {
	la, _ := math.Lgamma(alpha + 1)
	li, _ := math.Lgamma(i + 1)
	lr, sign := math.Lgamma(alpha - i + 1) // Γ of a negative non-integer carries the sign
	return la - li - lr, sign > 0
}

func logBinom(n, k float64) float64 {
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(k + 1)
	c, _ := math.Lgamma(n - k + 1)
	return a - b - c
}

func logAdd(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// logSub is log(e^a − e^b) for a > b. A series that subtracts as much as it has accumulated
// has lost all precision: NaN, so that a bound is never silently too small.
func logSub(a, b float64) float64 {
	if math.IsInf(b, -1) {
		return a
	}
	if !(b < a) {
		return math.NaN()
	}
	return a + math.Log(-math.Expm1(b-a))
}

// logErfc is log erfc(x) without underflow: math.Erfc underflows beyond x ≈ 26, where the
// asymptotic series erfc x ≈ e^{−x²}/(x√π)·(1 − 1/(2x²) + 3/(4x⁴) − 15/(8x⁶) + 105/(16x⁸))
// is accurate to 10⁻¹⁴ already from x = 20.
func logErfc(x float64) float64 {
	if x < 20 {
		return math.Log(math.Erfc(x))
	}
	u := 1 / (2 * x * x)
	series := 1 - u*(1-3*u*(1-5*u*(1-7*u)))
	return -x*x - math.Log(x) - 0.5*math.Log(math.Pi) + math.Log(series)
}

// NoiseMultiplier is σ = (b/L)·√(2/(ηβn)), the noise of one DP-SGLD step over its
// add/remove-one sensitivity ηL/b: the σ of SampledGaussianRDP.
func (a Accountant) NoiseMultiplier() (float64, error) {
	if _, err := a.rho(); err != nil {
		return 0, err
	}
	return float64(a.Batch) / a.Clip * math.Sqrt(2/(a.Eta*a.Beta*float64(a.N))), nil
}

// SubsampledRDP returns the RDP at order α of steps DP-SGLD steps on batches drawn by s:
// steps·SampledGaussianRDP(Batch/N, NoiseMultiplier, α) for PoissonSampling, steps·ε'(α) of
// Wang et al.'s Theorem 9 for FixedSizeSampling (integer α ≥ 2 only). The two are for
// different adjacencies (add/remove-one and replace-one); see the comment at the top of
// subsampled.go.
func (a Accountant) SubsampledRDP(steps int, alpha float64, s Sampling) (float64, error) {
	r, err := a.rho()
	if err != nil {
		return 0, err
	}
	if steps < 0 || !(alpha > 1) || math.IsInf(alpha, 0) {
		return 0, fmt.Errorf("samplers: RDP of %d steps at order α = %v; want steps ≥ 0 and finite α > 1", steps, alpha)
	}
	q := float64(a.Batch) / float64(a.N)
	var one float64
	switch s {
	case PoissonSampling:
		sigma, err := a.NoiseMultiplier()
		if err != nil {
			return 0, err
		}
		if one, err = SampledGaussianRDP(q, sigma, alpha); err != nil {
			return 0, err
		}
	case FixedSizeSampling:
		if alpha != math.Trunc(alpha) {
			return 0, fmt.Errorf("samplers: fixed-size sampling bound at order α = %v; want an integer ≥ 2", alpha)
		}
		one = fixedSizeRDP(q, r, int(alpha))
	default:
		return 0, fmt.Errorf("samplers: unknown sampling %v", s)
	}
	return float64(steps) * one, nil
}

// fixedSizeRDP is Wang, Balle & Kasiviswanathan's Theorem 9 for a base mechanism that is
// (j, j·rho)-RDP for every order j and has ε(∞) = ∞ (so min{2, (e^{ε(∞)} − 1)^j} = 2), at
// sampling ratio gamma and integer order alpha ≥ 2. Terms are summed in log space: e^{(j−1)jρ}
// overflows long before the bound is useless.
func fixedSizeRDP(gamma, rho float64, alpha int) float64 {
	lg := math.Log(gamma)
	fa := float64(alpha)
	e2 := 2 * rho // ε(2) of the base mechanism
	// log min{4(e^{ε(2)} − 1), 2e^{ε(2)}}, with e^{ε(2)} − 1 = e^{ε(2)}(1 − e^{−ε(2)}) kept exact
	// for small ε(2).
	second := min(math.Log(4)+e2+math.Log(-math.Expm1(-e2)), math.Log(2)+e2)
	acc := logAdd(0, 2*lg+logBinom(fa, 2)+second) // the leading 1 is log 1 = 0
	for j := 3; j <= alpha; j++ {
		fj := float64(j)
		acc = logAdd(acc, math.Log(2)+fj*lg+logBinom(fa, fj)+(fj-1)*fj*rho)
	}
	return acc / (fa - 1)
}

// subsampledOrders are the Rényi orders SubsampledEpsilon minimizes over: fractional ones
// near 1 (small ε or many steps), then integers, then a sparse tail (few steps, small q).
func subsampledOrders(s Sampling) []float64 {
	var out []float64
	if s == PoissonSampling {
		for _, a := range []float64{1.1, 1.25, 1.5, 1.75, 2.25, 2.5, 2.75, 3.5, 4.5} {
			out = append(out, a)
		}
	}
	for a := 2; a <= 64; a++ {
		out = append(out, float64(a))
	}
	for _, a := range []float64{80, 96, 128, 192, 256, 384, 512, 1024} {
		out = append(out, a)
	}
	return out
}

// SubsampledEpsilon returns the ε for which steps DP-SGLD steps on batches drawn by s are
// (ε, δ)-differentially private (for s's adjacency), and the order α at which the minimum of
// SubsampledRDP + log(1/δ)/(α − 1) over a fixed grid of orders is attained. A grid and not
// Epsilon's closed form: the sampled bound is not linear in α.
func (a Accountant) SubsampledEpsilon(steps int, delta float64, s Sampling) (eps, alpha float64, err error) {
	if steps < 0 || !(delta > 0 && delta < 1) {
		return 0, 0, fmt.Errorf("samplers: ε of %d steps at δ = %v; want steps ≥ 0 and 0 < δ < 1", steps, delta)
	}
	l := math.Log(1 / delta)
	eps = math.Inf(1)
	for _, o := range subsampledOrders(s) {
		r, err := a.SubsampledRDP(steps, o, s)
		if err != nil {
			return 0, 0, err
		}
		if e := r + l/(o-1); e < eps {
			eps, alpha = e, o
		}
	}
	return eps, alpha, nil
}
