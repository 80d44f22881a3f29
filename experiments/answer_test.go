package experiments

import (
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/stats"
)

func TestRankWords(t *testing.T) {
	f := Digits(2)
	vs := []Ranked{{Name: "ahsc", Value: 10.71}, {Name: "bohb", Value: 94.01}, {Name: "tpe", Value: 88.17}, {Name: "x", Value: nan()}}
	if got, want := RankWords(vs, true, f), "bohb ranks first (94.01) and ahsc last (10.71)"; got != want {
		t.Errorf("higher is better: %q, want %q", got, want)
	}
	if got, want := RankWords(vs, false, f), "ahsc ranks first (10.71) and bohb last (94.01)"; got != want {
		t.Errorf("lower is better: %q, want %q", got, want)
	}
	if got := RankWords([]Ranked{{Name: "a", Value: 1}, {Name: "b", Value: 1}}, true, f); got != "all 2 methods tie (1.00)" {
		t.Errorf("tie: %q", got)
	}
	if got := RankWords([]Ranked{{Name: "a", Value: nan()}}, true, f); got != "no method produced a result" {
		t.Errorf("none: %q", got)
	}
}

func TestPowerWordsAndBestMarks(t *testing.T) {
	if w := PowerWords([]int{3, 3, 0}, "repeats"); !strings.Contains(w, "n = 3 repeats is too few") || !strings.Contains(w, "needs 4") {
		t.Errorf("n = 3: %q", w)
	}
	if w := PowerWords([]int{4, 4}, "repeats"); w != "" {
		t.Errorf("n = 4: %q, want none", w)
	}
	far := func(n int, base float64) stats.Group {
		g := stats.Group{Name: "g"}
		for i := range n {
			g.Values = append(g.Values, base+float64(i))
		}
		return g
	}
	if best, ok := BestMarks([]stats.Group{far(3, 0), far(3, 100)}, true); ok || best[0] || best[1] {
		t.Errorf("n = 3: best %v, separable %v; want nothing marked", best, ok)
	}
	if best, ok := BestMarks([]stats.Group{far(6, 0), far(6, 100)}, true); !ok || best[0] || !best[1] {
		t.Errorf("n = 6, higher better: best %v, separable %v", best, ok)
	}
	if best, ok := BestMarks([]stats.Group{far(6, 0), far(6, 0.5)}, true); !ok || best[0] || best[1] {
		t.Errorf("n = 6, overlapping: best %v, separable %v; want no mark (every method best)", best, ok)
	}
	if got := Sentence("on iris, a ranks first", "", "n is too small"); got != "On iris, a ranks first; n is too small." {
		t.Errorf("Sentence = %q", got)
	}
	if got := artifactSummary([]string{"out/a.csv", "out/b.png"}); got != "wrote 2 files in out" {
		t.Errorf("artifactSummary = %q", got)
	}
}

// TestBootCI checks the answers' intervals on samples worked by hand (and replicated with
// numpy's resampling): the resampled means of {0, 1} are 0, ½ and 1 with probabilities ¼, ½
// and ¼, so the 2.5% and 97.5% quantiles of 10,000 are 0 and 1; those of {0, 0, 0, 1} are
// 0 with probability (¾)⁴ = 0.32 and 1 with (¼)⁴ = 0.004 < 0.025 < P(≥ ¾) = 0.051, so the
// interval is [0, 0.75]; the resampled medians of {1, 2, 3} are 1 and 3 with 7/27 each.
func TestBootCI(t *testing.T) {
	cases := []struct {
		xs       []float64
		stat     func([]float64) float64
		low, top float64
	}{
		{[]float64{0, 1}, stats.Mean, 0, 1},
		{[]float64{0, 0, 0, 1}, stats.Mean, 0, 0.75},
		{[]float64{3, 1, 2}, stats.Median, 1, 3},
		{[]float64{0.5, 0.5, 0.5}, stats.Mean, 0.5, 0.5}, // identical values: a point
	}
	for _, c := range cases {
		ci := BootCI(c.xs, c.stat)
		if ci == nil || ci.Low != c.low || ci.High != c.top {
			t.Errorf("BootCI(%v) = %v, want [%v, %v]", c.xs, ci, c.low, c.top)
			continue
		}
		if v := c.stat(c.xs); v < ci.Low || v > ci.High {
			t.Errorf("BootCI(%v) = %v excludes the statistic %v", c.xs, *ci, v)
		}
	}
	// The report's settings, deterministic for the seed.
	xs := []float64{0.91, 0.93, 0.95, 0.90, 0.97}
	want, err := stats.Bootstrap(xs, stats.Mean, stats.BootstrapOptions{Resamples: 10000, Seed: 1})
	if got := BootCI(xs, stats.Mean); err != nil || *got != want || *BootCI(xs, stats.Mean) != want {
		t.Errorf("BootCI = %v, stats.Bootstrap at 10,000 resamples, seed 1: %v (%v)", got, want, err)
	}
	if BootCI([]float64{0.9}, stats.Mean) != nil || BootCI([]float64{1, nan()}, stats.Mean) != nil {
		t.Error("an interval of one value or of a NaN")
	}
	f := Digits(2)
	if got := Interval(0.25, BootCI([]float64{0, 0, 0, 1}, stats.Mean), f); got != "0.25 [0.00, 0.75]" {
		t.Errorf("Interval = %q", got)
	}
	if got := Interval(0.9, nil, f); got != "0.90" {
		t.Errorf("Interval of one value = %q", got)
	}
}

// TestOverlapWordsAndCILegend: the sentence's clause on the first's and the last's intervals,
// and the legend's words for the intervals, with n = 1 saying it has none.
func TestOverlapWordsAndCILegend(t *testing.T) {
	iv := func(lo, hi float64) *stats.Interval { return &stats.Interval{Low: lo, High: hi} }
	vs := []Ranked{{"a", 0.5, iv(0.2, 0.6)}, {"b", 0.8, iv(0.6, 0.9)}, {"c", 0.7, iv(0.65, 0.75)}}
	if got, want := OverlapWords(vs, true), "the 95% intervals of b and a overlap"; got != want {
		t.Errorf("touching intervals: %q, want %q", got, want)
	}
	vs[1].CI = iv(0.61, 0.9)
	if got, want := OverlapWords(vs, false), "the 95% intervals of a and b do not overlap"; got != want {
		t.Errorf("apart: %q, want %q", got, want)
	}
	vs[0].CI = nil
	if got := OverlapWords(vs, true); got != "" {
		t.Errorf("no interval (n = 1): %q", got)
	}
	if got := OverlapWords([]Ranked{{"a", 1, iv(0, 2)}, {"b", 1, iv(0, 2)}}, true); got != "" {
		t.Errorf("a tie: %q", got)
	}
	if got, want := CILegend("test_acc: mean", "replicates", []int{3, 3}),
		"test_acc: mean [95% bootstrap CI, 10,000 resamples] over replicates"; got != want {
		t.Errorf("CILegend = %q, want %q", got, want)
	}
	if got := CILegend("median", "repeats", []int{1, 0, 1}); got != "median over repeats, no interval at n = 1" {
		t.Errorf("CILegend at n = 1: %q", got)
	}
	if got := CILegend("median", "repeats", []int{1, 4}); !strings.HasSuffix(got, "over repeats, none at n = 1") {
		t.Errorf("CILegend at n = 1 and 4: %q", got)
	}
	if thousands(10000) != "10,000" || thousands(999) != "999" || thousands(1000000) != "1,000,000" {
		t.Error("thousands")
	}
}

func nan() float64 { return math.NaN() }
