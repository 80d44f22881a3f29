package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/search"
)

// trialSpaceFlags are the flags that choose a trial's search space, and so which parameter
// flags it has: they are read before the flag set exists. --protocol is among them because
// the authors' Bayesmark space is scikit-learn's own (tol and validation_fraction added; see
// experiments/ahsc/authors.go), and --space, a user's space for the dataset's model.
var trialSpaceFlags = []string{"dataset", "preset", "protocol", "space"}

// prescan returns the values the arguments give the named flags (--name VALUE or
// --name=VALUE; the last one wins, as the flag parser would).
func prescan(args []string, names ...string) map[string]string {
	got := map[string]string{}
	for i, a := range args {
		for _, name := range names {
			if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
				got[name] = v
			} else if a == "--"+name && i+1 < len(args) {
				got[name] = args[i+1]
			}
		}
	}
	return got
}

// trialConfig is the ahsc configuration and search space the trial's space flags describe.
func trialConfig(args []string) (experiments.Config, search.Space, string, error) {
	pre := prescan(args, trialSpaceFlags...)
	preset := experiments.Quick
	if p, ok := pre["preset"]; ok {
		preset = p
	}
	values := map[string]string{"dataset": "iris"}
	for _, name := range []string{"dataset", "protocol", "space"} {
		if v, ok := pre[name]; ok {
			values[name] = v
		}
	}
	cfg, err := ahsc.TrialConfig(preset, values)
	if err != nil {
		return nil, nil, preset, err
	}
	space, err := ahsc.TrialSpace(cfg)
	return cfg, space, preset, err
}

// runTrial is `hyperflat trial`: one configuration of the ahsc objective, trained and scored
// as `hyperflat run ahsc` trains every method's, printed as Katib's StdOut collector reads.
func runTrial(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	synopsis := "trial [--dataset NAME] [--preset quick|paper] [--protocol clean|authors] [--space FILE] [--seed N] [--repeat R] [--epochs N] [--data-dir DIR] --PARAM VALUE ..."
	cfg, space, preset, err := trialConfig(args)
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat trial: %v\n", err)
		return exitUsage
	}
	fs := flags("trial")
	fs.String("dataset", "iris", "dataset of the ahsc experiment (its search space names the flags below)")
	fs.String("preset", experiments.Quick, "quick or paper: data sizes and epochs as in hyperflat run ahsc")
	fs.String("protocol", "clean", "clean or authors, as hyperflat run ahsc --protocol (authors: the Bayesmark sets search scikit-learn's own space)")
	fs.String("space", "", "a YAML or JSON search space for the dataset's model (clean protocol), whose names are the flags below "+
		"(README: Your own table and search space)")
	seed := fs.Uint64("seed", 1, "seed of the split and of the initial weights")
	repeat := fs.Int("repeat", 0, "which repeat's split to use")
	epochs := fs.String("epochs", "", "most epochs of training (default: the preset's)")
	dataDir := fs.String("data-dir", "", "dataset directory (default $"+datasets.EnvDataDir+", then the project's data folder)")
	whitebox := fs.Bool("whitebox", false, "also print the white-box record of the training (whitebox_mu, whitebox_trace, …, whitebox_eq7): as hyperflat run ahsc --whitebox")
	wbFlags := map[string]*string{
		"whitebox-probes": fs.String("whitebox-probes", "", "--whitebox: Rademacher probes of the Hutchinson trace (default 4)"),
		"whitebox-iters":  fs.String("whitebox-iters", "", "--whitebox: Lanczos steps (Hessian-vector products) for the top eigenvalue (default 10)"),
		"whitebox-stride": fs.String("whitebox-stride", "", "--whitebox: the Eq. 7 regularizer samples every this-th optimizer step (default: 8 epochs' steps)"),
		"whitebox-rows":   fs.String("whitebox-rows", "", "--whitebox: rows of each split for the curvature and the regularizer (default 256)"),
	}
	vals := map[string]*string{}
	for _, p := range space {
		usage := fmt.Sprintf("in [%g, %g]", p.Low, p.High)
		if p.Kind == search.Categorical {
			usage = "one of " + strings.Join(p.Choices, ", ")
		}
		vals[p.Name] = fs.String(p.Name, "", usage+" (required)")
	}
	if code, ok := parse(fs, synopsis, args, stdout, stderr); !ok {
		return code
	}
	values := map[string]string{}
	for name, v := range vals {
		if fs.Changed(name) {
			values[name] = *v
		}
	}
	hp, err := ahsc.ParseConfig(space, values)
	if err != nil { // a FlagError: a usage error
		fmt.Fprintf(stderr, "hyperflat trial: %v\n", err)
		return exitUsage
	}
	if *epochs != "" { // the tables' and the images' epochs, as the experiment's two flags
		for _, f := range []string{"epochs", "image-epochs"} {
			if err := experiments.SetFlag(cfg, f, *epochs); err != nil {
				fmt.Fprintf(stderr, "hyperflat trial: %v\n", err)
				return exitUsage
			}
		}
	}
	if err := setWhitebox(cfg, preset, *whitebox, wbFlags); err != nil {
		fmt.Fprintf(stderr, "hyperflat trial: %v\n", err)
		return exitUsage
	}
	opt := experiments.Options{Preset: preset, Seed: *seed, Workers: 1, DataDir: datasets.ResolveDir(*dataDir), Config: cfg}
	metrics, err := ahsc.Trial(ctx, opt, hp, *repeat)
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat trial: %v\n", err)
		var fe *experiments.FlagError
		if errors.As(err, &fe) {
			return exitUsage
		}
		return exitFailure
	}
	// name=value lines, the format Katib's stdout metrics collector parses; a metric that is
	// not finite is left out (Katib's regex has no NaN), so the trial reports it missing.
	for _, m := range metrics {
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			continue
		}
		fmt.Fprintf(stdout, "%s=%s\n", m.Name, strconv.FormatFloat(m.Value, 'g', -1, 64))
	}
	return exitOK
}

// setWhitebox sets the trial's --whitebox flags on cfg (those given), refusing a setting
// without --whitebox and one out of range.
func setWhitebox(cfg experiments.Config, preset string, on bool, settings map[string]*string) error {
	for name, v := range settings {
		if *v == "" {
			continue
		}
		if !on {
			return experiments.FlagErrorf(name, "applies with --whitebox")
		}
		if err := experiments.SetFlag(cfg, name, *v); err != nil {
			return err
		}
	}
	if !on {
		return nil
	}
	if err := experiments.SetFlag(cfg, "whitebox", "true"); err != nil {
		return err
	}
	return cfg.Finish(preset)
}
