package ahsc

import (
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// Issue 52: --tpe-startup 0 silently meant the derived default (7 or 20 random trials).
func TestTPEStartupZeroIsRefused(t *testing.T) {
	_, err := Experiment().Configure(experiments.Quick, map[string]string{"tpe-startup": "0"})
	if err == nil || !strings.Contains(err.Error(), "--tpe-startup 0: 0 is what leaving the flag out means (derived: min(20, (2·budget+2)/3)") {
		t.Errorf("got %v", err)
	}
	if _, err := Experiment().Configure(experiments.Quick, map[string]string{"tpe-startup": "3"}); err != nil {
		t.Errorf("--tpe-startup 3: %v", err)
	}
}
