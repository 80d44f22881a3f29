package experiments

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/stats"
)

// Significance is the level at which the experiments call a difference significant, as the
// papers do.
const Significance = 0.05

// Ranked is one method's headline value, for an answer sentence.
type Ranked struct {
	Name  string
	Value float64
}

// RankWords names the first and the last of the ranked values ("bohb ranks first (94.01) and
// ahsc last (10.71)"), higher or lower being better; NaN values are left out.
func RankWords(values []Ranked, higherIsBetter bool, format func(float64) string) string {
	var vs []Ranked
	for _, v := range values {
		if !math.IsNaN(v.Value) {
			vs = append(vs, v)
		}
	}
	switch len(vs) {
	case 0:
		return "no method produced a result"
	case 1:
		return fmt.Sprintf("only %s produced a result (%s)", vs[0].Name, format(vs[0].Value))
	}
	slices.SortStableFunc(vs, func(a, b Ranked) int {
		if higherIsBetter {
			a, b = b, a
		}
		switch {
		case a.Value < b.Value:
			return -1
		case a.Value > b.Value:
			return 1
		}
		return 0
	})
	first, last := vs[0], vs[len(vs)-1]
	if first.Value == last.Value {
		return fmt.Sprintf("all %d methods tie (%s)", len(vs), format(first.Value))
	}
	return fmt.Sprintf("%s ranks first (%s) and %s last (%s)", first.Name, format(first.Value), last.Name, format(last.Value))
}

// PowerWords says whether samples of these sizes can show a significant difference at all:
// "" when they can, otherwise a clause saying that n is too small, and why.
func PowerWords(sizes []int, unit string) string {
	// A method without results takes no part in the comparison.
	sizes = slices.DeleteFunc(slices.Clone(sizes), func(n int) bool { return n <= 0 })
	if len(sizes) < 2 || stats.CanSeparate(sizes, Significance) {
		return ""
	}
	n := slices.Min(sizes)
	return fmt.Sprintf("n = %d %s is too few for significance (two-sided Mann–Whitney needs %d for p < %g)",
		n, unit, stats.MinRepeats(Significance), Significance)
}

// BestMarks returns, for groups of results, which are statistically best (no other group
// significantly better: stats.Compare's defaults, the papers' rule) and whether the test
// could separate them at all; when it cannot (too few results), no group is marked.
func BestMarks(groups []stats.Group, higherIsBetter bool) (best []bool, separable bool) {
	best = make([]bool, len(groups))
	sizes := make([]int, len(groups))
	for i, g := range groups {
		sizes[i] = len(g.Values)
	}
	if !stats.CanSeparate(sizes, Significance) {
		return best, false
	}
	c, err := stats.Compare(groups, stats.CompareOptions{LowerIsBetter: !higherIsBetter, Alpha: Significance})
	if err != nil {
		return best, false
	}
	if !slices.Contains(c.Best, false) {
		return best, true // nothing significant: a mark on every method would say nothing
	}
	return c.Best, true
}

// MarkLegend explains the mark BestMarks' results are printed with.
const MarkLegend = "* no method significantly better (Mann–Whitney, BH-corrected, p < 0.05)"

// Interval formats a value with the range of the sample it summarizes, "0.932 [0.911, 0.95]";
// a sample of one is printed alone.
func Interval(v float64, sample []float64, format func(float64) string) string {
	if len(sample) < 2 {
		return format(v)
	}
	return format(v) + " [" + format(slices.Min(sample)) + ", " + format(slices.Max(sample)) + "]"
}

// Digits formats with a fixed number of decimals, the way the papers' tables print values.
func Digits(prec int) func(float64) string {
	return func(x float64) string {
		if math.IsNaN(x) {
			return "NaN"
		}
		return strconv.FormatFloat(x, 'f', prec, 64)
	}
}

// Sentence joins clauses into one sentence: capitalized first letter, "; " between, a full stop.
func Sentence(clauses ...string) string {
	var cs []string
	for _, c := range clauses {
		if c = strings.TrimSpace(c); c != "" {
			cs = append(cs, c)
		}
	}
	s := strings.Join(cs, "; ")
	if s == "" {
		return ""
	}
	r := []rune(s)
	r[0] = []rune(strings.ToUpper(string(r[0])))[0]
	return string(r) + "."
}
