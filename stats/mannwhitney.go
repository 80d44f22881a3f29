package stats

import (
	"fmt"
	"math"
	"math/big"
	"sort"
)

// Alternative is the alternative hypothesis of a test.
type Alternative int

const (
	// TwoSided: the distributions differ.
	TwoSided Alternative = iota
	// Less: the distribution underlying x is stochastically less than the
	// one underlying y.
	Less
	// Greater: the distribution underlying x is stochastically greater than
	// the one underlying y.
	Greater
)

// String returns SciPy's name for the alternative.
func (a Alternative) String() string {
	switch a {
	case TwoSided:
		return "two-sided"
	case Less:
		return "less"
	case Greater:
		return "greater"
	}
	return fmt.Sprintf("Alternative(%d)", int(a))
}

// Method selects how the Mann–Whitney p-value is computed.
type Method int

const (
	// Auto uses Exact when at least one sample has at most 8 observations
	// and there are no ties, and Asymptotic otherwise (SciPy's rule).
	Auto Method = iota
	// Exact uses the exact permutation distribution of U given the
	// observed mid-ranks (ties included).
	Exact
	// Asymptotic uses the normal approximation with tie correction and,
	// unless disabled, continuity correction.
	Asymptotic
)

// String returns SciPy's name for the method.
func (m Method) String() string {
	switch m {
	case Auto:
		return "auto"
	case Exact:
		return "exact"
	case Asymptotic:
		return "asymptotic"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// MannWhitneyOptions configures MannWhitneyU. The zero value is SciPy's
// default: two-sided, method auto, continuity correction on.
type MannWhitneyOptions struct {
	Alternative Alternative
	Method      Method
	// NoContinuity disables the continuity correction of the asymptotic
	// method (SciPy's use_continuity=False). It has no effect on Exact.
	NoContinuity bool
}

// MannWhitneyResult is the outcome of a Mann–Whitney U test.
type MannWhitneyResult struct {
	// U is the statistic of the first sample, U1 = R1 − n1(n1+1)/2 where R1
	// is the sum of its mid-ranks in the pooled sample (as SciPy reports).
	// The second sample's statistic is n1·n2 − U.
	U float64
	// P is the p-value for the chosen alternative, in [0, 1] (NaN only for
	// the asymptotic method without continuity correction when every
	// observation is equal, as SciPy).
	P float64
	// Method is the method actually used: Exact or Asymptotic.
	Method Method
	// Z is the standardized statistic of the asymptotic method, for the
	// statistic the p-value was taken from (U1 for Greater, U2 for Less, the
	// larger of the two for TwoSided), so P = f·(1 − Φ(Z)) with f = 2 for
	// TwoSided and 1 otherwise, clipped to 1. It is NaN for Exact.
	Z float64
}

// maxExactWork bounds the number of dynamic-programming cell updates the
// exact method may spend (about a second at most).
const maxExactWork = 3e8

// MannWhitneyU performs the Mann–Whitney U rank test of the null hypothesis
// that the distributions underlying x and y are the same, following
// scipy.stats.mannwhitneyu. See the package documentation for how ties are
// handled by the exact method.
//
// The exact method is a dynamic program over the tie groups whose cost is
// at most about (n1+n2)·m·n1·n2 cell updates, m = min(n1, n2), and usually
// far less (about 2e5 for 30 against 30 observations, 2e7 for 100 against
// 100, 2e8 for 8 against 5,000). Beyond 3e8 it returns ErrExactTooLarge
// (Auto then falls back to the asymptotic method).
func MannWhitneyU(x, y []float64, opts MannWhitneyOptions) (MannWhitneyResult, error) {
	if err := checkSample("MannWhitneyU x", x); err != nil {
		return MannWhitneyResult{}, err
	}
	if err := checkSample("MannWhitneyU y", y); err != nil {
		return MannWhitneyResult{}, err
	}
	if opts.Alternative < TwoSided || opts.Alternative > Greater {
		return MannWhitneyResult{}, fmt.Errorf("stats: MannWhitneyU: alternative %v: %w", opts.Alternative, ErrBadOption)
	}
	if opts.Method < Auto || opts.Method > Asymptotic {
		return MannWhitneyResult{}, fmt.Errorf("stats: MannWhitneyU: method %v: %w", opts.Method, ErrBadOption)
	}
	n1, n2 := len(x), len(y)
	xy := make([]float64, 0, n1+n2)
	xy = append(append(xy, x...), y...)
	rk := rank(xy)

	// 2·U1 = 2·R1 − n1(n1+1), an exact integer.
	twoR1 := 0
	for i := 0; i < n1; i++ {
		twoR1 += rk.doubled[i]
	}
	twoU1 := twoR1 - n1*(n1+1)
	u1 := float64(twoU1) / 2
	res := MannWhitneyResult{U: u1, Z: math.NaN()}

	method := opts.Method
	if method == Auto {
		method = Exact
		if (n1 > 8 && n2 > 8) || rk.hasTies() {
			method = Asymptotic
		}
	}
	if method == Exact {
		p, err := exactMWU(rk.doubled, n1, twoU1, opts.Alternative)
		switch {
		case err == nil:
			res.P, res.Method = p, Exact
			return res, nil
		case opts.Method == Exact:
			return MannWhitneyResult{}, err
		}
		method = Asymptotic // Auto: too large for the exact method
	}

	u2 := float64(n1*n2) - u1
	var u, f float64
	switch opts.Alternative {
	case Greater:
		u, f = u1, 1
	case Less:
		u, f = u2, 1
	default:
		u, f = math.Max(u1, u2), 2
	}
	fn1, fn2, n := float64(n1), float64(n2), float64(n1+n2)
	mu := fn1 * fn2 / 2
	s := math.Sqrt(fn1 * fn2 / 12 * ((n + 1) - rk.tieTerm()/(n*(n-1))))
	num := u - mu
	if !opts.NoContinuity {
		num -= 0.5
	}
	z := num / s
	res.Z = z
	res.P = math.Min(f*normalSF(z), 1)
	res.Method = Asymptotic
	return res, nil
}

// normalSF returns the standard normal survival function 1 − Φ(z).
func normalSF(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// exactMWU returns the exact permutation p-value of U1 given the doubled
// mid-ranks of the pooled sample (x first, n1 observations) and the observed
// 2·U1.
func exactMWU(doubled []int, n1, twoU1 int, alt Alternative) (float64, error) {
	N := len(doubled)
	n2 := N - n1
	mn := n1 * n2 // 2·E[U]
	// Enumerate subsets of the smaller sample. If that is y, U_x = mn − U_y,
	// and reflecting the ranks (r → N+1−r) turns U_y into U_x.
	reflected := make([]int, N)
	for i, d := range doubled {
		reflected[i] = 2*(N+1) - d
	}
	side, k := doubled, n1
	sideRefl := reflected
	if n2 < n1 {
		side, sideRefl, k = reflected, doubled, n2
	}
	// countLE(c) = #{splits: 2U_x ≤ c}; countGE(c) = #{splits: 2U_x ≥ c}.
	countLE := func(c int) (float64, error) { return subsetCount(side, k, c) }
	countGE := func(c int) (float64, error) { return subsetCount(sideRefl, k, 2*mn-c) }

	var num float64
	var err error
	switch alt {
	case Greater:
		num, err = countGE(twoU1)
	case Less:
		num, err = countLE(twoU1)
	default:
		delta := twoU1 - mn
		if delta < 0 {
			delta = -delta
		}
		if delta == 0 {
			return 1, nil
		}
		var lo, hi float64
		if lo, err = countLE(mn - delta); err == nil {
			hi, err = countGE(mn + delta)
		}
		num = lo + hi
	}
	if err != nil {
		return 0, err
	}
	total, _ := new(big.Float).SetInt(new(big.Int).Binomial(int64(N), int64(k))).Float64()
	return math.Min(num/total, 1), nil
}

// subsetCount returns the number of k-element subsets of the observations
// whose doubled U statistic, Σ doubled ranks − k(k+1), is at most c.
// doubled holds every observation's doubled rank; equal values form tie
// groups that are counted with binomial multiplicities.
func subsetCount(doubled []int, k, c int) (float64, error) {
	if c < 0 {
		return 0, nil
	}
	// Group equal doubled ranks, in ascending order; reduce by their gcd.
	mult := map[int]int{}
	g := 0
	for _, d := range doubled {
		mult[d]++
		g = gcd(g, d)
	}
	groups := make([]tieGroup, 0, len(mult))
	for d, t := range mult {
		groups = append(groups, tieGroup{value: d / g, size: t})
	}
	sort.Slice(groups, func(a, b int) bool { return groups[a].value < groups[b].value })
	limit := (c + k*(k+1)) / g // Σ reduced ranks ≤ limit

	if work := subsetDP(groups, k, limit, nil); work > maxExactWork {
		return 0, fmt.Errorf("stats: MannWhitneyU exact (n=%d, m=%d): %w", len(doubled), k, ErrExactTooLarge)
	}
	width := limit + 1
	dp := make([]float64, (k+1)*width) // dp[j*width+s]: j chosen, reduced sum s
	dp[0] = 1
	subsetDP(groups, k, limit, dp)
	var total float64
	for _, v := range dp[k*width:] {
		total += v
	}
	return total, nil
}

type tieGroup struct{ value, size int }

// subsetDP adds the tie groups (ascending values) one at a time to the
// table dp[j*(limit+1)+s] = number of ways to choose j observations with
// reduced rank sum s ≤ limit, and returns the number of cell updates. With
// dp nil it only counts them.
//
// Only reachable, useful cells are visited: row j holds sums in [lo[j],
// hi[j]], and since every observation still to come has a value at least v
// (the current group's), a cell is useful only if s + (k−j)·v ≤ limit.
func subsetDP(groups []tieGroup, k, limit int, dp []float64) float64 {
	width := limit + 1
	lo := make([]int, k+1)
	hi := make([]int, k+1)
	for j := 1; j <= k; j++ {
		lo[j], hi[j] = limit+1, -1 // unreachable
	}
	binom := make([]float64, k+1)
	var work float64
	for _, gr := range groups {
		v, t := gr.value, gr.size
		binom[0] = 1 // binom[i] = C(t, i)
		for i := 1; i <= min(t, k); i++ {
			binom[i] = binom[i-1] * float64(t-i+1) / float64(i)
		}
		// Descending j: row j is read before this group writes into it.
		for j := k - 1; j >= 0; j-- {
			upper := min(hi[j], limit-(k-j)*v)
			if upper < lo[j] {
				continue
			}
			imax := min(t, k-j)
			work += float64(upper-lo[j]+1) * float64(imax)
			if dp == nil {
				continue
			}
			src := dp[j*width+lo[j] : j*width+upper+1]
			for i := 1; i <= imax; i++ {
				off := (j+i)*width + lo[j] + i*v
				dst := dp[off : off+len(src)]
				if b := binom[i]; b == 1 {
					for n, x := range src {
						dst[n] += x
					}
				} else {
					for n, x := range src {
						dst[n] += x * b
					}
				}
			}
		}
		// Update the bounds (descending j reads the old rows j−i).
		for j := k; j >= 1; j-- {
			for i := 1; i <= min(t, j); i++ {
				if hi[j-i] < 0 {
					continue
				}
				lo[j] = min(lo[j], lo[j-i]+i*v)
				hi[j] = max(hi[j], min(hi[j-i]+i*v, limit))
			}
			if lo[j] > hi[j] {
				lo[j], hi[j] = limit+1, -1
			}
		}
	}
	return work
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
