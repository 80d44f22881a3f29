package samplers_test

import (
	"math"
	"testing"

	"github.com/hyperflat/hyperflat/samplers"
)

// TestAccountant checks ε against a hand computation:
// η = 1e-3, β = 1, n = 1000, b = 100, L = 1, T = 100, δ = 1e-5.
//
//	ρ = ηβnL²/b² = 1e-3·1·1000·1/10⁴ = 1e-4,  c = T·ρ = 0.01,
//	log(1/δ) = log(1e5) = 11.512925464970229,
//	ε = c + 2√(c·log(1/δ)) = 0.01 + 2·√0.11512925464970229
//	  = 0.01 + 2·0.33930702122075565 = 0.6886140424415113,
//	α* = 1 + √(log(1/δ)/c) = 1 + √1151.2925464970229 = 34.93070212207556.
func TestAccountant(t *testing.T) {
	a := samplers.Accountant{Eta: 1e-3, Beta: 1, N: 1000, Batch: 100, Clip: 1}
	eps, alpha, err := a.Epsilon(100, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(eps, 0.6886140424415113, 1e-14) || !closeTo(alpha, 34.93070212207556, 1e-14) {
		t.Errorf("ε = %.16g at α = %.16g; want 0.6886140424415113 at 34.93070212207556", eps, alpha)
	}
	// The closed form is the minimum over α of the RDP conversion: check on a fine grid.
	best := math.Inf(1)
	for alpha := 1.01; alpha < 200; alpha += 0.01 {
		r, err := a.RDP(100, alpha)
		if err != nil {
			t.Fatal(err)
		}
		best = min(best, r+math.Log(1e5)/(alpha-1))
	}
	if best < eps || best > eps+1e-6 {
		t.Errorf("grid minimum %.10g; closed form %.10g", best, eps)
	}
	// MaxEta inverts Epsilon.
	eta, err := a.MaxEta(100, eps, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(eta, 1e-3, 1e-12) {
		t.Errorf("MaxEta = %.16g; want 1e-3", eta)
	}
	// Privacy degrades with more steps and a larger clipping norm, and is free for T = 0.
	if e2, _, _ := a.Epsilon(400, 1e-5); e2 <= eps {
		t.Errorf("ε(400 steps) = %v ≤ ε(100 steps) = %v", e2, eps)
	}
	if e0, _, _ := a.Epsilon(0, 1e-5); e0 != 0 {
		t.Errorf("ε(0 steps) = %v", e0)
	}
	for _, bad := range []samplers.Accountant{{Eta: 1e-3, Beta: 1, N: 10, Batch: 20, Clip: 1}, {Eta: 1e-3, Beta: math.Inf(1), N: 10, Batch: 5, Clip: 1}, {Eta: 1e-3, Beta: 1, N: 10, Batch: 5}} {
		if _, _, err := bad.Epsilon(1, 1e-5); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, _, err := a.Epsilon(1, 0); err == nil {
		t.Error("δ = 0 accepted")
	}
}
