package samplers

import (
	"fmt"
	"math"
)

// Accountant bounds the (ε, δ)-differential privacy of T steps of DP-SGLD (DPSGLD, or
// RunChains with method DPSGLD) on a dataset of N examples with batches of Batch examples,
// step size Eta, inverse temperature Beta and clipping norm Clip, by Rényi differential
// privacy (Mironov 2017) of the Gaussian mechanism, without subsampling amplification:
//
//	one step:   sensitivity Δ = 2ηL/b (replacing one example moves the clipped batch mean by
//	            at most 2L/b), noise variance σ² = 2η/(βn), so
//	            RDP(α) = α·Δ²/(2σ²) = α·ρ with ρ = ηβnL²/b²  (the Gaussian mechanism);
//	T steps:    RDP_T(α) = T·α·ρ  (adaptive composition, Prop. 1);
//	(ε, δ):     ε = min over α > 1 of T·α·ρ + log(1/δ)/(α−1)  (Prop. 3)
//	              = c + 2·√(c·log(1/δ)),  c = T·ρ = T·η·β·n·L²/b²,
//	            attained at α* = 1 + √(log(1/δ)/c).
//
// The bound holds for any choice of fixed-size batches that does not look at the data
// (shuffled or sequential), and is conservative for mini-batches since it ignores privacy
// amplification by subsampling (SubsampledEpsilon in subsampled.go accounts for it, for
// batches drawn at random at every step).
type Accountant struct {
	Eta   float64 // step size η
	Beta  float64 // inverse temperature β
	N     int     // dataset size n
	Batch int     // batch size b (n for full-batch steps)
	Clip  float64 // clipping norm L
}

// rho returns ρ = Δ²/(2σ²) = ηβnL²/b², the Rényi divergence of one step per unit of α.
func (a Accountant) rho() (float64, error) {
	switch {
	case !(a.Eta > 0) || math.IsInf(a.Eta, 0):
		return 0, fmt.Errorf("samplers: accountant step size η = %v; want finite > 0", a.Eta)
	case !(a.Beta > 0) || math.IsInf(a.Beta, 0):
		return 0, fmt.Errorf("samplers: accountant inverse temperature β = %v; want finite > 0 (β = +Inf adds no noise)", a.Beta)
	case a.N < 1 || a.Batch < 1 || a.Batch > a.N:
		return 0, fmt.Errorf("samplers: accountant batch %d of %d examples; want 1 ≤ b ≤ n", a.Batch, a.N)
	case !(a.Clip > 0) || math.IsInf(a.Clip, 0):
		return 0, fmt.Errorf("samplers: accountant clipping norm %v; want finite > 0", a.Clip)
	}
	b := float64(a.Batch)
	return a.Eta * a.Beta * float64(a.N) * a.Clip * a.Clip / (b * b), nil
}

// RDP returns the Rényi-DP guarantee T·α·ρ of steps DP-SGLD steps at order α > 1.
func (a Accountant) RDP(steps int, alpha float64) (float64, error) {
	r, err := a.rho()
	if err != nil {
		return 0, err
	}
	if steps < 0 || !(alpha > 1) {
		return 0, fmt.Errorf("samplers: RDP of %d steps at order α = %v; want steps ≥ 0 and α > 1", steps, alpha)
	}
	return float64(steps) * alpha * r, nil
}

// Epsilon returns the ε for which steps DP-SGLD steps are (ε, δ)-differentially private,
// and the Rényi order α at which the bound is attained (+Inf when steps = 0).
func (a Accountant) Epsilon(steps int, delta float64) (eps, alpha float64, err error) {
	r, err := a.rho()
	if err != nil {
		return 0, 0, err
	}
	if steps < 0 || !(delta > 0 && delta < 1) {
		return 0, 0, fmt.Errorf("samplers: ε of %d steps at δ = %v; want steps ≥ 0 and 0 < δ < 1", steps, delta)
	}
	c, l := float64(steps)*r, math.Log(1/delta)
	if c == 0 {
		return 0, math.Inf(1), nil
	}
	return c + 2*math.Sqrt(c*l), 1 + math.Sqrt(l/c), nil
}

// MaxEta returns the largest step size η for which steps DP-SGLD steps (with the other
// fields of a) are (eps, δ)-differentially private, inverting Epsilon:
//
//	η_max = (√(log(1/δ) + ε) − √(log(1/δ)))² · b² / (T·β·n·L²)
//
// which for small ε is ≈ ε²b²/(4·T·β·n·L²·log(1/δ)), the form of the step-size condition
// of Li et al. (2019). a.Eta is ignored.
func (a Accountant) MaxEta(steps int, eps, delta float64) (float64, error) {
	a.Eta = 1
	r, err := a.rho()
	if err != nil {
		return 0, err
	}
	if steps < 1 || !(eps > 0) || math.IsInf(eps, 0) || !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("samplers: step size for %d steps at (ε, δ) = (%v, %v); want steps ≥ 1, finite ε > 0, 0 < δ < 1", steps, eps, delta)
	}
	l := math.Log(1 / delta)
	s := eps / (math.Sqrt(l+eps) + math.Sqrt(l)) // √(l+ε) − √l without cancellation
	return s * s / (float64(steps) * r), nil
}
