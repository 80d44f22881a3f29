package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
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

// Options are the settings every experiment accepts; the experiment's own settings are its
// typed Config.
type Options struct {
	Preset string // Quick (default) or PaperScale: where the Config's defaults come from
	Seed   uint64 // the root of every random stream (see DeriveSeed)
	// Config is the experiment's own configuration, a value of the type its NewConfig
	// returns; nil is the preset's defaults. Run and Runner.Start finish and validate it.
	Config  Config
	Workers int
	DataDir string
	// Out is the directory artifacts are written to; "" writes none.
	Out string
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

// Progressf writes one progress line to opt.Progress, if set.
func (o Options) Progressf(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// Experiment is one runnable experiment. Plan splits a run into deterministic cells; Plots
// draws the figures of a finished run from its tables alone, so that a stored run can be
// re-rendered without recomputing anything. Define makes one from a typed plan function.
type Experiment struct {
	Name        string
	Paper       Paper
	Description string
	// NewConfig returns a new, zero configuration of the experiment's type.
	NewConfig func() Config
	// Plan builds the run's cells from resolved options (see Resolve).
	Plan func(ctx context.Context, opt Options) (*Plan, error)
	// Plots writes the run's PNG figures under dir and returns their paths; nil: none.
	Plots func(res *Result, dir string) ([]string, error)
}

// Define makes an experiment whose configuration has the type C (a pointer to a struct; see
// Config), so that plan receives the resolved configuration typed.
func Define[C Config](name string, paper Paper, description string,
	plan func(ctx context.Context, opt Options, cfg C) (*Plan, error),
	plots func(res *Result, dir string) ([]string, error)) Experiment {
	t := reflect.TypeFor[C]()
	return Experiment{
		Name: name, Paper: paper, Description: description,
		NewConfig: func() Config { return reflect.New(t.Elem()).Interface().(Config) },
		Plan: func(ctx context.Context, opt Options) (*Plan, error) {
			cfg, ok := opt.Config.(C)
			if !ok {
				return nil, fmt.Errorf("%s: config of type %T, want %v", name, opt.Config, t)
			}
			return plan(ctx, opt, cfg)
		},
		Plots: plots,
	}
}

// Registry is a set of experiments, looked up by name.
type Registry []Experiment

// Lookup returns the experiment with the given name.
func (r Registry) Lookup(name string) (Experiment, error) {
	var names []string
	for _, e := range r {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	sort.Strings(names)
	return Experiment{}, fmt.Errorf("no experiment named %q (there are: %s)", name, strings.Join(names, ", "))
}

// Plots draws a result's figures under dir with its experiment's Plots.
func (r Registry) Plots(res *Result, dir string) ([]string, error) {
	e, err := r.Lookup(res.Experiment)
	if err != nil {
		return nil, err
	}
	if e.Plots == nil {
		return nil, nil
	}
	return e.Plots(res, dir)
}

// Fields lists the experiment's own flags.
func (e Experiment) Fields() []Field {
	f, err := Fields(e.NewConfig())
	if err != nil {
		panic(err) // a malformed config type is a bug of the experiment, caught by its tests
	}
	return f
}

// Configure makes the experiment's configuration for a preset with the given flags set
// (name → command-line text); Resolve finishes it.
func (e Experiment) Configure(preset string, flags map[string]string) (Config, error) {
	if preset == "" {
		preset = Quick
	}
	cfg := e.NewConfig()
	if err := ApplyPreset(cfg, preset); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(flags))
	for k := range flags {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if err := SetFlag(cfg, k, flags[k]); err != nil {
			var fe *FlagError
			if errors.As(err, &fe) && strings.HasPrefix(fe.Msg, "is not a flag") {
				fe.Msg = "is not a flag of " + e.Name
			}
			return nil, err
		}
	}
	return cfg, nil
}

// Resolve checks opt against the experiment: a known preset, at least one worker, and a
// configuration of the experiment's type (the preset's defaults when nil), finished and
// validated.
func (e Experiment) Resolve(opt Options) (Options, error) {
	if opt.Preset == "" {
		opt.Preset = Quick
	}
	if !slices.Contains(presets, opt.Preset) {
		return opt, FlagErrorf("preset", "%q: want quick or paper", opt.Preset)
	}
	if opt.Workers <= 0 {
		opt.Workers = 1
	}
	if opt.Config == nil {
		cfg, err := e.Configure(opt.Preset, nil)
		if err != nil {
			return opt, err
		}
		opt.Config = cfg
	}
	if want := reflect.TypeOf(e.NewConfig()); reflect.TypeOf(opt.Config) != want {
		return opt, fmt.Errorf("%s: config of type %T, want %v", e.Name, opt.Config, want)
	}
	if err := opt.Config.Finish(opt.Preset); err != nil {
		return opt, err
	}
	return opt, nil
}

// FlagError is an invalid flag value, a mistake of the user's: the CLI reports it as a usage
// error (exit status 2) rather than a failure.
type FlagError struct {
	Flag string // without dashes
	Msg  string // what is wrong and what was expected
}

func (e *FlagError) Error() string { return "--" + e.Flag + " " + e.Msg }

// FlagErrorf makes a FlagError; format describes the value and what was expected.
func FlagErrorf(flag, format string, args ...any) error {
	return &FlagError{Flag: flag, Msg: fmt.Sprintf(format, args...)}
}
