package stats

import (
	"errors"
	"fmt"
	"math"
)

// Group is a named sample of results, e.g. the scores of one method over
// repeated runs.
type Group struct {
	Name   string
	Values []float64
}

// CompareOptions configures Compare. The zero value reproduces the AHSC paper's
// protocol (Section 4) as the authors' code runs it (run_stats in
// bbo_challenge/experiment_analysis.py, yrahul3910/flatness-guided-hpo): higher
// is better, groups ranked by mean, two-sided Mann–Whitney tests with
// SciPy's default method, two-stage Benjamini–Hochberg over the full k×k
// p-value matrix, alpha 0.05, no Kruskal–Wallis gate.
type CompareOptions struct {
	// LowerIsBetter makes smaller values better (e.g. losses).
	LowerIsBetter bool
	// ByMedian ranks groups by their median instead of their mean.
	ByMedian bool
	// Alpha is the significance level; 0 means 0.05.
	Alpha float64
	// Correction is the p-value adjustment; the zero value is TwoStageBH.
	Correction Correction
	// Method is the Mann–Whitney method; the zero value is Auto.
	Method Method
	// UniquePairs adjusts only the k(k−1)/2 distinct pairwise p-values. By
	// default, like run_stats, the whole k×k matrix is adjusted as one
	// family of k² p-values: every pair twice, plus the k zeros of the
	// diagonal. The zeros are always rejected, which makes the two-stage
	// procedures more liberal than on the distinct pairs.
	UniquePairs bool
	// KruskalGate declares no difference significant unless the
	// Kruskal–Wallis p-value is below Alpha. run_stats computes the
	// Kruskal–Wallis test but does not gate on it.
	KruskalGate bool
}

// Comparison is the outcome of Compare. Matrices are indexed by group, in
// the order given.
type Comparison struct {
	Names   []string
	Means   []float64
	Medians []float64
	// KruskalH and KruskalP are the Kruskal–Wallis statistic and p-value
	// over all groups; both are NaN when every observation is the same
	// value (where SciPy raises).
	KruskalH, KruskalP float64
	// P holds the raw two-sided Mann–Whitney p-values; it is symmetric with
	// a zero diagonal.
	P [][]float64
	// Adjusted holds the adjusted p-values; it is symmetric with a zero
	// diagonal.
	Adjusted [][]float64
	// Top is the index of the group with the best location (largest mean,
	// or smallest with LowerIsBetter; median with ByMedian); the first such
	// group on ties.
	Top int
	// TopSignificant reports the paper's rule: Top is significantly better
	// than every other group, i.e. Adjusted[Top][j] < Alpha for every
	// j ≠ Top (and, with KruskalGate, KruskalP < Alpha).
	TopSignificant bool
	// Best[i] reports that no other group is significantly better than
	// group i: there is no j ≠ i with Adjusted[i][j] < Alpha and a strictly
	// better location than i. These are the results to print in bold. With
	// KruskalGate and KruskalP ≥ Alpha (or NaN) every group is best.
	Best []bool
}

// Compare runs the paper's comparison of named groups: a Kruskal–Wallis
// test over all groups, two-sided Mann–Whitney U tests between every pair,
// adjustment of those p-values for multiple testing, and the decision of
// which groups are statistically best. See CompareOptions for the defaults
// and Comparison for the exact rules.
//
// It needs at least two groups, none empty, and no NaN.
func Compare(groups []Group, opts CompareOptions) (*Comparison, error) {
	k := len(groups)
	if k < 2 {
		return nil, fmt.Errorf("stats: Compare: %d groups, need at least 2: %w", k, ErrTooFew)
	}
	alpha := opts.Alpha
	if alpha == 0 {
		alpha = 0.05
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("stats: Compare: alpha %v not in (0, 1): %w", opts.Alpha, ErrBadOption)
	}
	c := &Comparison{
		Names:   make([]string, k),
		Means:   make([]float64, k),
		Medians: make([]float64, k),
		Best:    make([]bool, k),
	}
	samples := make([][]float64, k)
	for i, g := range groups {
		if err := checkSample(fmt.Sprintf("Compare group %q", g.Name), g.Values); err != nil {
			return nil, err
		}
		c.Names[i] = g.Name
		c.Means[i] = Mean(g.Values)
		c.Medians[i] = Median(g.Values)
		samples[i] = g.Values
	}

	kw, err := KruskalWallis(samples...)
	switch {
	case err == nil:
		c.KruskalH, c.KruskalP = kw.H, kw.P
	case errors.Is(err, ErrAllIdentical):
		c.KruskalH, c.KruskalP = math.NaN(), math.NaN()
	default:
		return nil, err
	}

	c.P = square(k)
	var pairs []float64
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			r, err := MannWhitneyU(samples[i], samples[j], MannWhitneyOptions{Method: opts.Method})
			if err != nil {
				return nil, fmt.Errorf("stats: Compare %q vs %q: %w", groups[i].Name, groups[j].Name, err)
			}
			c.P[i][j], c.P[j][i] = r.P, r.P
			pairs = append(pairs, r.P)
		}
	}

	c.Adjusted = square(k)
	if opts.UniquePairs {
		adj, _, err := AdjustPValues(pairs, alpha, opts.Correction)
		if err != nil {
			return nil, fmt.Errorf("stats: Compare: %w", err)
		}
		n := 0
		for i := 0; i < k; i++ {
			for j := i + 1; j < k; j++ {
				c.Adjusted[i][j], c.Adjusted[j][i] = adj[n], adj[n]
				n++
			}
		}
	} else {
		flat := make([]float64, 0, k*k)
		for _, row := range c.P {
			flat = append(flat, row...)
		}
		adj, _, err := AdjustPValues(flat, alpha, opts.Correction)
		if err != nil {
			return nil, fmt.Errorf("stats: Compare: %w", err)
		}
		for i := range c.Adjusted {
			copy(c.Adjusted[i], adj[i*k:(i+1)*k])
		}
	}

	loc := c.Means
	if opts.ByMedian {
		loc = c.Medians
	}
	better := func(a, b int) bool { // group a has a strictly better location than b
		if opts.LowerIsBetter {
			return loc[a] < loc[b]
		}
		return loc[a] > loc[b]
	}
	for i := 1; i < k; i++ {
		if better(i, c.Top) {
			c.Top = i
		}
	}
	gateOpen := !opts.KruskalGate || c.KruskalP < alpha
	c.TopSignificant = gateOpen
	for j := 0; j < k; j++ {
		if j != c.Top && !(c.Adjusted[c.Top][j] < alpha) {
			c.TopSignificant = false
		}
	}
	for i := 0; i < k; i++ {
		c.Best[i] = true
		if !gateOpen {
			continue
		}
		for j := 0; j < k; j++ {
			if j != i && c.Adjusted[i][j] < alpha && better(j, i) {
				c.Best[i] = false
			}
		}
	}
	return c, nil
}

func square(k int) [][]float64 {
	m := make([][]float64, k)
	for i := range m {
		m[i] = make([]float64, k)
	}
	return m
}
