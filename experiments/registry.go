package experiments

import (
	"context"
	"fmt"
	"io"
	"sort"
)

// Paper identifies which paper an experiment reproduces.
type Paper string

const (
	// PACBayes is "Efficient Hyperparameter Optimization By Way Of PAC-Bayes Bound Minimization".
	PACBayes Paper = "pac-bayes"
	// AHSC is "Strong convexity-guided hyper-parameter optimization for flatter losses".
	AHSC Paper = "ahsc"
)

// Options are the settings every experiment accepts.
type Options struct {
	Preset  string // "quick" (tests and CI) or "paper" (the full protocol)
	Seed    uint64
	DataDir string
	Workers int
	Format  string // "table", "csv" or "json"
}

// Experiment is one runnable experiment.
type Experiment struct {
	Name        string
	Paper       Paper
	Description string
	Presets     []string
	Run         func(ctx context.Context, opt Options, stdout io.Writer) error
}

// All returns the registered experiments sorted by name.
func All() []Experiment {
	var all []Experiment // each implementing issue appends its experiment here
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// Lookup returns the experiment with the given name.
func Lookup(name string) (Experiment, error) {
	for _, e := range All() {
		if e.Name == name {
			return e, nil
		}
	}
	return Experiment{}, fmt.Errorf("no experiment named %q (hyperflat list shows them)", name)
}
