package stats

import (
	"fmt"

	"gonum.org/v1/gonum/stat/distuv"
)

// KruskalResult is the outcome of a Kruskal–Wallis H test.
type KruskalResult struct {
	// H is the tie-corrected Kruskal–Wallis statistic.
	H float64
	// P is the p-value from the chi-square distribution with DF degrees of
	// freedom.
	P float64
	// DF is the number of groups minus one.
	DF int
}

// KruskalWallis performs the Kruskal–Wallis H test of the null hypothesis
// that the distributions underlying all groups are the same, following
// scipy.stats.kruskal: mid-ranks over the pooled sample,
// H = (12/(N(N+1)) Σ R_i²/n_i − 3(N+1)) / (1 − Σ(t³−t)/(N³−N)), and
// P = P(χ²_{k−1} ≥ H).
//
// It needs at least two groups, none empty, and not every observation
// equal (ErrAllIdentical, where SciPy raises too). SciPy returns NaN for an
// empty group; this returns ErrEmpty.
func KruskalWallis(groups ...[]float64) (KruskalResult, error) {
	if len(groups) < 2 {
		return KruskalResult{}, fmt.Errorf("stats: KruskalWallis: %d groups, need at least 2: %w", len(groups), ErrTooFew)
	}
	var all []float64
	for i, g := range groups {
		if err := checkSample(fmt.Sprintf("KruskalWallis group %d", i), g); err != nil {
			return KruskalResult{}, err
		}
		all = append(all, g...)
	}
	rk := rank(all)
	n := float64(len(all))
	ties := 1 - rk.tieTerm()/(n*n*n-n)
	if ties == 0 {
		return KruskalResult{}, fmt.Errorf("stats: KruskalWallis: %w", ErrAllIdentical)
	}
	var ssbn float64
	off := 0
	for _, g := range groups {
		twoR := 0
		for i := range g {
			twoR += rk.doubled[off+i]
		}
		off += len(g)
		r := float64(twoR) / 2
		ssbn += r * r / float64(len(g))
	}
	h := 12.0/(n*(n+1))*ssbn - 3*(n+1)
	h /= ties
	df := len(groups) - 1
	return KruskalResult{H: h, P: distuv.ChiSquared{K: float64(df)}.Survival(h), DF: df}, nil
}
