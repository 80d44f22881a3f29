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

// Ranked is one method's headline value, for an answer sentence, with its bootstrap interval
// (nil when it has none: a single result).
type Ranked struct {
	Name  string
	Value float64
	CI    *stats.Interval
}

// Extremes are the first and the last of the ranked values, higher or lower being better
// (NaN values left out, ties kept in the given order); ok is false for fewer than two.
func Extremes(values []Ranked, higherIsBetter bool) (first, last Ranked, ok bool) {
	var vs []Ranked
	for _, v := range values {
		if !math.IsNaN(v.Value) {
			vs = append(vs, v)
		}
	}
	if len(vs) < 2 {
		return first, last, false
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
	return vs[0], vs[len(vs)-1], true
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
	first, last, _ := Extremes(vs, higherIsBetter)
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

// OverlapWords says whether the 95% intervals of the first and the last of the ranked values
// overlap ("the 95% intervals of bohb and ahsc overlap"), for a sentence whose test cannot
// separate them: "" when either has no interval or the two tie.
func OverlapWords(values []Ranked, higherIsBetter bool) string {
	first, last, ok := Extremes(values, higherIsBetter)
	if !ok || first.CI == nil || last.CI == nil || first.Value == last.Value {
		return ""
	}
	verb := "do not overlap"
	if Overlap(*first.CI, *last.CI) {
		verb = "overlap"
	}
	return fmt.Sprintf("the 95%% intervals of %s and %s %s", first.Name, last.Name, verb)
}

// Overlap reports whether two closed intervals share a point.
func Overlap(a, b stats.Interval) bool { return a.Low <= b.High && b.Low <= a.High }

// Bootstrap settings of the answers' intervals, those of the reports' (Table 1's and Table
// C.1's): percentile intervals at 95% of BootResamples resamples from the seed BootSeed.
const (
	BootResamples = 10000
	BootSeed      = 1
)

// BootCI is the percentile bootstrap 95% interval of stat over sample (stats.Bootstrap,
// BootResamples resamples from BootSeed); nil for fewer than two values, which have none,
// or values the bootstrap refuses (a NaN).
func BootCI(sample []float64, stat func([]float64) float64) *stats.Interval {
	if len(sample) < 2 {
		return nil
	}
	iv, err := stats.Bootstrap(sample, stat, stats.BootstrapOptions{Resamples: BootResamples, Seed: BootSeed})
	if err != nil {
		return nil
	}
	return &iv
}

// Interval formats a value with its interval, "0.932 [0.911, 0.950]"; a value without one
// (ci nil) is printed alone.
func Interval(v float64, ci *stats.Interval, format func(float64) string) string {
	if ci == nil {
		return format(v)
	}
	return format(v) + " [" + format(ci.Low) + ", " + format(ci.High) + "]"
}

// CILegend is the legend entry of a column of values with BootCI's intervals: what the value
// is ("test_acc: mean") and over which unit, with the interval's kind, or, when no sample
// has two values (sizes are the samples'; empty ones print no value), that n = 1 has none.
func CILegend(what, unit string, sizes []int) string {
	sizes = slices.DeleteFunc(slices.Clone(sizes), func(n int) bool { return n <= 0 })
	if len(sizes) == 0 || slices.Max(sizes) < 2 {
		return fmt.Sprintf("%s over %s, no interval at n = 1", what, unit)
	}
	s := fmt.Sprintf("%s [95%% bootstrap CI, %s resamples] over %s", what, thousands(BootResamples), unit)
	if slices.Min(sizes) < 2 {
		s += ", none at n = 1"
	}
	return s
}

// thousands writes a count with commas between groups of three digits: 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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
