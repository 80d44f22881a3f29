package all

import (
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/experiments/freedman"
	"github.com/hyperflat/hyperflat/experiments/premise"
	"github.com/hyperflat/hyperflat/experiments/weightdecay"
)

// TestDefaultConfigPresets: every experiment's DefaultConfig gives a configuration for both
// presets, and for an unknown one (a Go user's typo) an error naming it, not a panic.
func TestDefaultConfigPresets(t *testing.T) {
	for name, defaultConfig := range map[string]func(string) (bool, error){
		"ahsc":        func(p string) (bool, error) { c, err := ahsc.DefaultConfig(p); return c != nil, err },
		"freedman":    func(p string) (bool, error) { c, err := freedman.DefaultConfig(p); return c != nil, err },
		"premise":     func(p string) (bool, error) { c, err := premise.DefaultConfig(p); return c != nil, err },
		"weightdecay": func(p string) (bool, error) { c, err := weightdecay.DefaultConfig(p); return c != nil, err },
	} {
		for _, preset := range []string{experiments.Quick, experiments.PaperScale} {
			if ok, err := defaultConfig(preset); err != nil || !ok {
				t.Errorf("%s, %s: a configuration %v, %v", name, preset, ok, err)
			}
		}
		if ok, err := defaultConfig("paper-scale"); err == nil || ok || !strings.Contains(err.Error(), "paper-scale") {
			t.Errorf("%s, an unknown preset: a configuration %v, %v; want an error naming it", name, ok, err)
		}
	}
}
