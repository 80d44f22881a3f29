package stats

import "math"

// MinMannWhitneyP returns the smallest two-sided p-value the exact Mann–Whitney U test can
// give samples of n1 and n2 observations: 2/C(n1+n2, n1), reached when every observation of
// one sample exceeds every observation of the other (each of the C(n1+n2, n1) orderings of
// the pooled ranks is equally likely under the null hypothesis, and the two extreme ones
// count for a two-sided test). It is 1 when either sample is empty.
//
// With n1 = n2 = 3 it is 0.1, with 4 and 4 it is 0.0286: no difference between two methods
// can be significant at 0.05 with fewer than 4 repeats each, whatever the data. (The normal
// approximation, which Auto uses for tied samples, can dip below the exact bound on a
// degenerate all-tied pair; the exact bound is the honest one to gate on.)
func MinMannWhitneyP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	// C(n1+n2, n1) as a running product, exact in float64 for the sizes that matter here.
	c := 1.0
	k := min(n1, n2)
	for i := 1; i <= k; i++ {
		c = c * float64(n1+n2-k+i) / float64(i)
	}
	return math.Min(2/c, 1)
}

// MinRepeats returns the fewest observations per sample, equal in both, at which the exact
// two-sided Mann–Whitney test can give a p-value below alpha (4 for 0.05); 0 when alpha is
// not in (0, 1).
func MinRepeats(alpha float64) int {
	if !(alpha > 0 && alpha < 1) {
		return 0
	}
	n := 1
	for MinMannWhitneyP(n, n) >= alpha {
		n++
	}
	return n
}

// CanSeparate reports whether the groups are large enough for the comparison to mean
// something: every pair of them can reach a two-sided Mann–Whitney p-value below alpha
// (before any multiple-testing correction). With fewer than two groups there is nothing to
// separate, and it reports false.
func CanSeparate(sizes []int, alpha float64) bool {
	if len(sizes) < 2 {
		return false
	}
	for i := range sizes {
		for j := i + 1; j < len(sizes); j++ {
			if !(MinMannWhitneyP(sizes[i], sizes[j]) < alpha) {
				return false
			}
		}
	}
	return true
}
