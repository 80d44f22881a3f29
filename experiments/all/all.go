// Package all is the registry of hyperflat's experiments: the one place that lists them, so
// that the command line, workers and reports rebuild any stored run by its experiment's name.
package all

import (
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/experiments/freedman"
	"github.com/hyperflat/hyperflat/experiments/premise"
	"github.com/hyperflat/hyperflat/experiments/weightdecay"
)

// Experiments returns every registered experiment, sorted by name.
func Experiments() experiments.Registry {
	return experiments.Registry{ahsc.Experiment(), freedman.Experiment(), premise.Experiment(), weightdecay.Experiment()}
}
