package ahsc

import (
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// defaultConfig is DefaultConfig(preset), the test failing on its error.
func defaultConfig(tb testing.TB, preset string) *Config {
	tb.Helper()
	c, err := DefaultConfig(preset)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestDefaultConfigPresets: both presets give a configuration, and an unknown one (a Go
// user's typo) is an error naming it, not a panic.
func TestDefaultConfigPresets(t *testing.T) {
	for _, preset := range []string{experiments.Quick, experiments.PaperScale} {
		if c, err := DefaultConfig(preset); err != nil || c == nil {
			t.Errorf("%s: %v, %v", preset, c, err)
		}
	}
	if c, err := DefaultConfig("paper-scale"); err == nil || c != nil || !strings.Contains(err.Error(), "paper-scale") {
		t.Errorf("an unknown preset: %v, %v; want an error naming it", c, err)
	}
}
