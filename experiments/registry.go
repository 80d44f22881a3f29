package experiments

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
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
	// MaxMem, when positive, is the most bytes one configuration's training may hold: larger
	// configurations are refused before they are built (a search records them as failed
	// trials; a fixed model fails the run), with the estimate in the error.
	MaxMem int64
	// TrialTimeout, when positive, bounds one trial's training; a trial that runs over is a
	// failed trial. Results then depend on the machine's speed, so it is off by default.
	TrialTimeout time.Duration
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
		return opt, flagError("preset", "%q: want quick or paper", opt.Preset)
	}
	if opt.Repeats < 0 {
		return opt, flagError("repeats", "%d: want 0 (the preset's) or more", opt.Repeats)
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
				return opt, flagError(k, "%q: want one of %s", v, strings.Join(p.Choices, ", "))
			}
		}
		if !found {
			return opt, flagError(k, "is not a flag of %s", e.Name)
		}
		params[k] = v
	}
	opt.Params = params
	return opt, nil
}

// FlagError is an invalid flag value, a mistake of the user's: the CLI reports it as a usage
// error (exit status 2) rather than a failure.
type FlagError struct {
	Flag string // without dashes
	Msg  string // what is wrong and what was expected
}

func (e *FlagError) Error() string { return "--" + e.Flag + " " + e.Msg }

// flagError makes a FlagError; format describes the value and what was expected.
func flagError(flag, format string, args ...any) error {
	return &FlagError{Flag: flag, Msg: fmt.Sprintf(format, args...)}
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
