package experiments

import (
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
)

// TestRegenerationData: the sentence names every place datasets.ResolveDir looks, in its
// order, and says whether the report reads the data too.
func TestRegenerationData(t *testing.T) {
	for _, reads := range []bool{true, false} {
		s := RegenerationData(reads)
		at := -1
		for _, where := range []string{"`--data-dir`", "`$" + datasets.EnvDataDir + "`", "`../shared/data`", "`./data`"} {
			i := strings.Index(s, where)
			if i <= at {
				t.Errorf("RegenerationData(%v) does not name %s after the places before it: %s", reads, where, s)
			}
			at = i
		}
		if got := strings.Contains(s, "the report rebuilds the runs from them"); got != reads || strings.Contains(s, "the report reads none") == reads {
			t.Errorf("RegenerationData(%v): %s", reads, s)
		}
	}
	if datasets.DefaultDataDir != "data" {
		t.Errorf("the last fallback is %q, the sentence says ./data", datasets.DefaultDataDir)
	}
}
