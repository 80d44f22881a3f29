package experiments

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Paper identifies which paper an experiment reproduces.
type Paper string

const (
	// PACBayes is "Efficient Hyperparameter Optimization By Way Of PAC-Bayes Bound Minimization".
	PACBayes Paper = "pac-bayes"
	// AHSC is "Strong convexity-guided hyper-parameter optimization for flatter losses".
	AHSC Paper = "ahsc"
)

// Presets.
const (
	Quick      = "quick"
	PaperScale = "paper"
)

// Param is an experiment-specific flag, passed to Run as a string.
type Param struct {
	Name    string
	Default string
	Usage   string
	Choices []string // when set, the value must be one of them
}

// Options are the settings every experiment accepts.
type Options struct {
	Preset  string
	Seed    uint64
	Repeats int // 0: the preset's default
	Workers int
	DataDir string
	// Out is the directory artifacts are written to; "" writes none.
	Out string
	// Params holds the experiment's own flags by name (defaults filled in).
	Params map[string]string
	// Progress, if set, receives human-readable progress lines (stderr on a terminal).
	Progress io.Writer
	// Monitor, if set, observes cells starting and finishing (the CLI's progress bars).
	Monitor Monitor
}

// Experiment is one runnable experiment. Plan splits a run into deterministic cells; Plots
// draws the figures of a finished run from its tables alone, so that a stored run can be
// re-rendered without recomputing anything.
type Experiment struct {
	Name        string
	Paper       Paper
	Description string
	Params      []Param
	// Plan builds the run's cells from resolved options (see Resolve).
	Plan func(ctx context.Context, opt Options) (*Plan, error)
	// Plots writes the run's PNG figures under dir and returns their paths; nil: none.
	Plots func(res *Result, dir string) ([]string, error)
}

// All returns the registered experiments sorted by name.
func All() []Experiment {
	all := []Experiment{freedmanExperiment(), weightDecayExperiment(), ahscExperiment()}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// Lookup returns the experiment with the given name.
func Lookup(name string) (Experiment, error) {
	var names []string
	for _, e := range All() {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return Experiment{}, fmt.Errorf("no experiment named %q (there are: %s)", name, strings.Join(names, ", "))
}

// Resolve checks opt against the experiment: a known preset, choices respected, defaults
// filled in.
func (e Experiment) Resolve(opt Options) (Options, error) {
	if opt.Preset == "" {
		opt.Preset = Quick
	}
	if opt.Preset != Quick && opt.Preset != PaperScale {
		return opt, fmt.Errorf("preset %q; want quick or paper", opt.Preset)
	}
	if opt.Repeats < 0 {
		return opt, fmt.Errorf("repeats %d", opt.Repeats)
	}
	if opt.Workers <= 0 {
		opt.Workers = 1
	}
	params := map[string]string{}
	for _, p := range e.Params {
		params[p.Name] = p.Default
	}
	for k, v := range opt.Params {
		found := false
		for _, p := range e.Params {
			if p.Name != k {
				continue
			}
			found = true
			if len(p.Choices) > 0 && !contains(p.Choices, v) {
				return opt, fmt.Errorf("--%s %q; want one of %s", k, v, strings.Join(p.Choices, ", "))
			}
		}
		if !found {
			return opt, fmt.Errorf("%s has no flag --%s", e.Name, k)
		}
		params[k] = v
	}
	opt.Params = params
	return opt, nil
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func (o Options) progressf(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}
