package hypergrad

import (
	"fmt"
	"math"
)

// Form is the shape of the Fisher-distance regularizer over inner steps t.
type Form int

const (
	// SqrtSum is ζ·√(Σ_t ‖a_t‖²): what the paper's offline algorithms (C.1/C.2) optimize; the
	// KL bound before relaxing √(Σ d_t²) ≤ Σ d_t.
	SqrtSum Form = iota
	// Sum is ζ·Σ_t ‖a_t‖: Eq. 7 as written, optimized online (algorithm C.3).
	Sum
)

func (f Form) String() string {
	if f == Sum {
		return "sum"
	}
	return "sqrt-sum"
}

// Regularizer accumulates squared (2,δ_θt)-Fisher distances ‖a_t‖² along an inner run (with
// one chain, ν_t is the point mass at θ_t; with several, average over chains before Add).
type Regularizer struct {
	Form  Form
	Zeta  float64
	sumSq float64 // Σ_t ‖a_t‖²
	sum   float64 // Σ_t ‖a_t‖
	steps int
}

// Add records one inner step's squared distance ‖a_t‖².
func (r *Regularizer) Add(sq float64) error {
	if r == nil {
		return fmt.Errorf("hypergrad: Add to a nil *Regularizer")
	}
	if math.IsNaN(r.Zeta) || math.IsInf(r.Zeta, 0) {
		return fmt.Errorf("hypergrad: Regularizer with Zeta %v; want a finite ζ", r.Zeta)
	}
	if sq < 0 || math.IsNaN(sq) || math.IsInf(sq, 0) {
		return fmt.Errorf("hypergrad: squared Fisher distance %v", sq)
	}
	r.sumSq += sq
	r.sum += math.Sqrt(sq)
	r.steps++
	return nil
}

// Reset forgets the accumulated steps.
func (r *Regularizer) Reset() { r.sumSq, r.sum, r.steps = 0, 0, 0 }

// Value is the regularizer: ζ√(Σ‖a_t‖²) or ζΣ‖a_t‖.
func (r *Regularizer) Value() float64 {
	if r.Form == Sum {
		return r.Zeta * r.sum
	}
	return r.Zeta * math.Sqrt(r.sumSq)
}

// Distance is √(Σ_t ‖a_t‖²), the quantity the paper plots against generalization.
func (r *Regularizer) Distance() float64 { return math.Sqrt(r.sumSq) }

// GradientScale is the factor by which Σ_t ∇_λ ½‖a_t‖² is multiplied to give the offline
// (SqrtSum) regularizer's gradient: d/dλ ζ√Y = ζ Σ_t ∇_λ ½‖a_t‖² / √Y with Y = Σ_t ‖a_t‖².
func (r *Regularizer) GradientScale() float64 {
	if r.sumSq == 0 {
		return 0
	}
	return r.Zeta / math.Sqrt(r.sumSq)
}

// LinearGaussianFisher is the closed form of E‖∇R̂_T(θ) − ∇R̂_V(θ)‖² for θ ~ N(μ, C) when
// both risks are quadratic, R̂(θ) = ½θᵀΣθ − cᵀθ + const (least squares: Σ = XᵀX/n,
// c = Xᵀy/n): with D = Σ_T − Σ_V and e = c_T − c_V, it is ‖Dμ − e‖² + tr(D C Dᵀ). It is the
// squared (2,ν)-Fisher distance of Eq. 5b for the linear model of the Freedman experiment
// (Section 4.1, Appendix C.1) at a Gaussian ν, without the Monte-Carlo noise of the 10
// Langevin chains by which run_chains in freedman/freedman.py estimates it.
// Matrices are dense row-major k×k.
func LinearGaussianFisher(sigmaT, sigmaV []float64, cT, cV []float64, mu, cov []float64) (float64, error) {
	k := len(mu)
	if len(sigmaT) != k*k || len(sigmaV) != k*k || len(cT) != k || len(cV) != k || len(cov) != k*k {
		return 0, fmt.Errorf("hypergrad: LinearGaussianFisher with inconsistent sizes for k = %d", k)
	}
	d := make([]float64, k*k)
	for i := range d {
		d[i] = sigmaT[i] - sigmaV[i]
	}
	total := 0.0
	for i := 0; i < k; i++ {
		r := -(cT[i] - cV[i])
		for j := 0; j < k; j++ {
			r += d[i*k+j] * mu[j]
		}
		total += r * r
	}
	// tr(D C Dᵀ) = Σ_i (D C Dᵀ)_ii = Σ_i Σ_j Σ_l D_ij C_jl D_il.
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			if d[i*k+j] == 0 {
				continue
			}
			for l := 0; l < k; l++ {
				total += d[i*k+j] * cov[j*k+l] * d[i*k+l]
			}
		}
	}
	return total, nil
}
