package stats

import (
	"fmt"
	"math"
	"sort"
)

// Correction is a false-discovery-rate procedure for adjusting p-values.
type Correction int

const (
	// TwoStageBH is the two-stage Benjamini–Hochberg procedure as
	// statsmodels implements it (multipletests method 'fdr_tsbh',
	// fdrcorrection_twostage method 'bh'), the correction the paper's code
	// uses. Stage one runs BH at level alpha and counts its rejections r1;
	// if 0 < r1 < m, stage two runs BH at alpha·m/m0 with m0 = m − r1 and the
	// adjusted p-values are the BH adjusted p-values times m0/m. If r1 is 0
	// or m, stage one's result stands. The adjusted p-values therefore
	// depend on alpha.
	TwoStageBH Correction = iota
	// BH is the Benjamini–Hochberg step-up procedure (statsmodels
	// 'fdr_bh'): adjusted p_(i) = min_{j ≥ i} p_(j)·m/j, capped at 1.
	BH
	// TwoStageBKY is the two-stage procedure of Benjamini, Krieger and
	// Yekutieli (2006, Definition 6) as statsmodels' 'fdr_tsbky': like
	// TwoStageBH but stage one runs at alpha/(1+alpha), and the adjusted
	// p-values are multiplied by 1+alpha.
	TwoStageBKY
)

// String returns statsmodels' name for the correction.
func (c Correction) String() string {
	switch c {
	case TwoStageBH:
		return "fdr_tsbh"
	case BH:
		return "fdr_bh"
	case TwoStageBKY:
		return "fdr_tsbky"
	}
	return fmt.Sprintf("Correction(%d)", int(c))
}

// AdjustPValues adjusts the p-values for multiple testing, as statsmodels'
// multipletests(pvals, alpha, method). It returns the adjusted p-values
// (capped at 1) and the reject decisions at false discovery rate alpha,
// both in the order of pvals. A hypothesis is rejected when its p-value is
// at most the step-up threshold, so for every correction reject[i] is
// equivalent, up to rounding, to adjusted[i] ≤ alpha.
//
// pvals must be non-empty (statsmodels fails on an empty list) with every
// value in [0, 1]; alpha must be in (0, 1).
func AdjustPValues(pvals []float64, alpha float64, method Correction) (adjusted []float64, reject []bool, err error) {
	if len(pvals) == 0 {
		return nil, nil, fmt.Errorf("stats: AdjustPValues: %w", ErrEmpty)
	}
	for i, p := range pvals {
		if math.IsNaN(p) {
			return nil, nil, fmt.Errorf("stats: AdjustPValues: p-value %d: %w", i, ErrNaN)
		}
		if p < 0 || p > 1 {
			return nil, nil, fmt.Errorf("stats: AdjustPValues: p-value %d = %v not in [0, 1]: %w", i, p, ErrBadOption)
		}
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, nil, fmt.Errorf("stats: AdjustPValues: alpha %v not in (0, 1): %w", alpha, ErrBadOption)
	}
	if method < TwoStageBH || method > TwoStageBKY {
		return nil, nil, fmt.Errorf("stats: AdjustPValues: correction %v: %w", method, ErrBadOption)
	}

	m := len(pvals)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return pvals[order[a]] < pvals[order[b]] })
	sorted := make([]float64, m)
	for i, o := range order {
		sorted[i] = pvals[o]
	}

	var rej []bool
	var adj []float64
	if method == BH {
		rej, adj = fdrBH(sorted, alpha)
	} else {
		fact, alphaPrime := 1.0, alpha
		if method == TwoStageBKY {
			fact = 1 + alpha
			alphaPrime = alpha / fact
		}
		rej, adj = fdrBH(sorted, alphaPrime)
		r1 := 0
		for _, r := range rej {
			if r {
				r1++
			}
		}
		if r1 == 0 || r1 == m {
			for i := range adj {
				adj[i] *= fact
			}
		} else {
			m0 := float64(m - r1)
			alphaStar := alphaPrime * float64(m) / m0
			rej, adj = fdrBH(sorted, alphaStar)
			scale := m0 / float64(m)
			for i := range adj {
				adj[i] *= scale
				if method == TwoStageBKY {
					adj[i] *= 1 + alpha
				}
			}
		}
	}

	adjusted = make([]float64, m)
	reject = make([]bool, m)
	for i, o := range order {
		adjusted[o] = math.Min(adj[i], 1)
		reject[o] = rej[i]
	}
	return adjusted, reject, nil
}

// fdrBH is statsmodels' fdrcorrection(method='indep', is_sorted=True) on
// ascending p-values.
func fdrBH(sorted []float64, alpha float64) ([]bool, []float64) {
	m := len(sorted)
	rej := make([]bool, m)
	adj := make([]float64, m)
	last := -1
	for i, p := range sorted {
		ecdf := float64(i+1) / float64(m)
		if p <= ecdf*alpha {
			last = i
		}
		adj[i] = p / ecdf
	}
	for i := 0; i <= last; i++ {
		rej[i] = true
	}
	for i := m - 2; i >= 0; i-- {
		adj[i] = math.Min(adj[i], adj[i+1])
	}
	for i := range adj {
		adj[i] = math.Min(adj[i], 1)
	}
	return rej, adj
}
