package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// SpearmanResult is Spearman's rank correlation and its p-value.
type SpearmanResult struct {
	// Rho is the Pearson correlation of the average ranks of x and y.
	Rho float64
	// P is the two-sided p-value of the t test with n−2 degrees of freedom,
	// t = ρ·sqrt((n−2)/((1+ρ)(1−ρ))). It is 0 when |ρ| = 1 and n > 2, and
	// NaN when n = 2 (as SciPy).
	P float64
}

// Spearman returns Spearman's rank correlation coefficient of the paired
// samples x and y, with average ranks for ties, and its two-sided p-value,
// as scipy.stats.spearmanr. It needs at least two pairs; if either input is
// constant the correlation is undefined and it returns NaN values with
// ErrConstantInput.
func Spearman(x, y []float64) (SpearmanResult, error) {
	nan := SpearmanResult{Rho: math.NaN(), P: math.NaN()}
	if len(x) != len(y) {
		return nan, fmt.Errorf("stats: Spearman: %d and %d observations: %w", len(x), len(y), ErrLengthMismatch)
	}
	if err := checkSample("Spearman x", x); err != nil {
		return nan, err
	}
	if err := checkSample("Spearman y", y); err != nil {
		return nan, err
	}
	n := len(x)
	if n < 2 {
		return nan, fmt.Errorf("stats: Spearman: %d pair, need at least 2: %w", n, ErrTooFew)
	}
	rx, ry := rank(x), rank(y)
	if len(rx.ties) == 1 || len(ry.ties) == 1 {
		return nan, fmt.Errorf("stats: Spearman: %w", ErrConstantInput)
	}
	// Work with doubled ranks centred on their mean N+1, so every sum is an
	// exact integer.
	var sxy, sxx, syy float64
	for i := 0; i < n; i++ {
		dx := float64(rx.doubled[i] - (n + 1))
		dy := float64(ry.doubled[i] - (n + 1))
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	rho := sxy / math.Sqrt(sxx) / math.Sqrt(syy)
	rho = math.Max(-1, math.Min(1, rho))

	dof := float64(n - 2)
	t := rho * math.Sqrt(math.Max(dof/((rho+1)*(1-rho)), 0))
	var p float64
	switch {
	case dof == 0 || math.IsNaN(t): // SciPy's stdtr is NaN for 0 degrees of freedom
		p = math.NaN()
	case math.IsInf(t, 0):
		p = 0
	default:
		p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.CDF(-math.Abs(t))
	}
	return SpearmanResult{Rho: rho, P: p}, nil
}
