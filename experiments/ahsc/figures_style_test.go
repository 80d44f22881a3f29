package ahsc

import (
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// Issue 50: in the history plot the AHSC line was hidden under the others, and eight methods
// shared a panel. AHSC is drawn emphasized (thicker, on top) and never muted; beyond
// experiments.MaxSeries the last methods are muted under one legend entry.
func TestHistoryAHSCOnTopAndSeriesLimit(t *testing.T) {
	methods := []string{"random", "tpe", "bohb", "hebo", "turbo", "ahsc-valloss", "ahsc-hessian", "ahsc"}
	var series []experiments.Series
	for _, m := range methods {
		series = append(series, historySeries([][]float64{{3, 2, 1}}, m))
	}
	muteBeyond(series, experiments.MaxSeries)
	coloured, mutedLegend := 0, ""
	for i, s := range series {
		if (methods[i] == "ahsc") != s.Emphasis {
			t.Errorf("%s: Emphasis %v", methods[i], s.Emphasis)
		}
		if methods[i] == "ahsc" && (s.Muted || s.Label != "ahsc") {
			t.Errorf("ahsc muted or relabelled: %+v", s)
		}
		if !s.Muted {
			coloured++
		} else if s.Label != "" {
			mutedLegend = s.Label
		}
	}
	if coloured != experiments.MaxSeries {
		t.Errorf("%d methods in colour, want %d", coloured, experiments.MaxSeries)
	}
	if !strings.Contains(mutedLegend, "ahsc-valloss, ahsc-hessian") {
		t.Errorf("muted legend entry %q does not name the muted methods", mutedLegend)
	}
	few := []experiments.Series{historySeries([][]float64{{1}}, "tpe"), historySeries([][]float64{{1}}, "ahsc")}
	muteBeyond(few, experiments.MaxSeries)
	if few[0].Muted || few[1].Muted {
		t.Error("two methods: one muted")
	}
}
