package freedman

import (
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// TestTheAnswerBootstrapsItsIntervals: at n = 2 the resampled medians of a and b are a,
// (a+b)/2 and b with probabilities ¼, ½ and ¼, so each cell's 95% interval is [a, b]
// (worked by hand); the test cannot separate two repeats, so the sentence says whether the
// first's and the last's intervals overlap; at n = 1 no cell has an interval.
func TestTheAnswerBootstrapsItsIntervals(t *testing.T) {
	cfg := &Config{Methods: []string{methodValidation, methodAIC}, Variant: "signal", Features: 20}
	summary := &experiments.Table{Name: "summary", Columns: []string{"method", "test_mse", "n_selected"}}
	summary.Add(methodValidation, 1.0, 2.0)
	summary.Add(methodAIC, 1.5, 5.0)
	summary.Add(methodValidation, 1.2, 4.0)
	summary.Add(methodAIC, 2.0, 7.0)
	sentence, view, legend := answer(cfg, summary)
	if got := view.String(0, "test_mse"); got != "1.100 [1.000, 1.200]" {
		t.Errorf("validation's test_mse %q, want 1.100 [1.000, 1.200]", got)
	}
	if got := view.String(1, "features_selected"); got != "6 [5, 7]" {
		t.Errorf("aic's features_selected %q, want 6 [5, 7]", got)
	}
	for _, want := range []string{"validation ranks first (1.100) and aic last (1.750)", "n = 2 repeats is too few",
		"the 95% intervals of validation and aic do not overlap."} {
		if !strings.Contains(sentence, want) {
			t.Errorf("sentence lacks %q: %s", want, sentence)
		}
	}
	if l := strings.Join(legend, "; "); !strings.Contains(l, "median [95% bootstrap CI, 10,000 resamples] over repeats") {
		t.Errorf("legend: %s", l)
	}
	one := &experiments.Table{Name: "summary", Columns: summary.Columns, Rows: summary.Rows[:2]}
	sentence, view, legend = answer(cfg, one)
	if got := view.String(0, "test_mse"); got != "1.000" || strings.Contains(sentence, "intervals") {
		t.Errorf("n = 1: cell %q, sentence %s", got, sentence)
	}
	if l := strings.Join(legend, "; "); !strings.Contains(l, "no interval at n = 1") {
		t.Errorf("n = 1 legend: %s", l)
	}
}
