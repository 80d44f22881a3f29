package premise

import (
	"testing"

	"github.com/hyperflat/hyperflat/experiments/experimenttest"
)

// defaultConfig is DefaultConfig(preset), the test failing on its error.
func defaultConfig(tb testing.TB, preset string) *Config {
	return experimenttest.DefaultConfig(tb, DefaultConfig, preset)
}
