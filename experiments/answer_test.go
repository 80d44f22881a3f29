package experiments

import (
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/stats"
)

func TestRankWords(t *testing.T) {
	f := Digits(2)
	vs := []Ranked{{"ahsc", 10.71}, {"bohb", 94.01}, {"tpe", 88.17}, {"x", nan()}}
	if got, want := RankWords(vs, true, f), "bohb ranks first (94.01) and ahsc last (10.71)"; got != want {
		t.Errorf("higher is better: %q, want %q", got, want)
	}
	if got, want := RankWords(vs, false, f), "ahsc ranks first (10.71) and bohb last (94.01)"; got != want {
		t.Errorf("lower is better: %q, want %q", got, want)
	}
	if got := RankWords([]Ranked{{"a", 1}, {"b", 1}}, true, f); got != "all 2 methods tie (1.00)" {
		t.Errorf("tie: %q", got)
	}
	if got := RankWords([]Ranked{{"a", nan()}}, true, f); got != "no method produced a result" {
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

func nan() float64 { return math.NaN() }
