package freedman

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/internal/gcpolicy"
)

// The values of --data.
const (
	dataProject = "project"
	dataAuthors = "authors"
)

// Method names, in the order they run and are reported.
const (
	methodValidation = "validation"
	methodPACBayes   = "pac-bayes"
	methodAIC        = "aic"
	methodBIC        = "bic"
	methodCV10       = "cv10"
)

// allMethods is the canonical order of the methods (the choices of --methods).
var allMethods = []string{methodValidation, methodPACBayes, methodAIC, methodBIC, methodCV10}

// Config is the whole protocol of a run. Both presets use the data sizes of Appendix C.1 and
// the Langevin settings of the authors' freedman.py (T = 50, η = 0.1, β = 0.1); the quick
// preset takes fewer forward-selection steps. The fields whose default differs with --data
// (Chains, ValidationSteps, PACBayesSteps) default to 0, which Finish replaces by the value of
// the data mode and preset, so that an explicit value is always kept.
type Config struct {
	// Data is whose random streams a run uses. project (the default): the project's own
	// streams, every one derived from --seed (see the package doc). authors: the data and the
	// chains' noise of the authors' freedman.py, bit for bit, from NumPy's RandomState
	// (internal/nprand): repeat r's data from RandomState(r), so repeat 0 is their data set
	// whatever --seed (which then seeds only cv10's folds), and every pac-bayes candidate's
	// chains from a fresh RandomState(0), as their run_chains does. It also takes their
	// protocol: 10 chains, 40 validation (Eq. 1, freedman_naive.py) and 20 pac-bayes (Eq. 7)
	// steps whatever the preset, the empty model never a candidate (their scripts start from
	// one feature), and in the null variant test labels by the signal formula (their
	// create_dataset's). The Langevin settings are the same in both modes: T = 50,
	// η = β = 0.1, and Eq. 7's weight β·η/4 (their --lr-div-factor 4). doc.go lists the
	// differences.
	Data string `flag:"data" json:"data" default:"project" choices:"project,authors" usage:"whose data and chain noise: project (streams derived from --seed) or authors (freedman.py's NumPy RandomState(0) data and chains, and their defaults)"`
	// Variant is the data set: signal has two truly predictive features (Section 4.1's second
	// experiment, Figure 4.1), null none (its first, Figure C.1).
	Variant string `flag:"variant" json:"variant" default:"signal" choices:"signal,null" usage:"signal: y = (x0 + x1 + e)/√6 (Fig. 4.1); null: y ~ N(0,1) independent of x (Fig. C.1)"`
	// Objective is how pac-bayes evaluates Eq. 7: by Monte-Carlo Langevin chains, as the
	// authors' run_chains does, or by the closed form of their law (the infinite-chain limit),
	// which removes the Monte-Carlo error from the comparison of candidates.
	Objective string `flag:"objective" json:"objective" default:"mc" choices:"mc,exact" usage:"pac-bayes objective: mc (Eq. 7 by Monte-Carlo Langevin chains) or exact (its infinite-chain closed form)"`
	// Methods are the selection objectives run on every repeat; Finish puts them in the
	// canonical order (validation, pac-bayes, aic, bic, cv10) and drops repeats, so that the
	// same set of methods is the same run.
	Methods []string `flag:"methods" json:"methods" default:"validation,pac-bayes,aic,bic,cv10" choices:"validation,pac-bayes,aic,bic,cv10" usage:"comma-separated selection methods"`
	// Repeats is the number of independent data draws; each has its own derived seed.
	Repeats int `flag:"repeats" json:"repeats" default:"1" usage:"independent draws of the data (repeats), each with all the methods"`

	// ValidationSteps is the length of the validation (Eq. 1) path. Its selected set is
	// usually its whole path, so it needs ≥ 20 steps to show the paradox; the authors'
	// freedman_naive.py takes 40. 0 takes the default: 25 (quick) or 40 (paper) steps, 40
	// with --data authors.
	ValidationSteps int `flag:"validation-steps" json:"validation-steps" default:"0" derived:"quick 25, paper 40; 40 with --data authors" usage:"forward-selection steps of validation (Eq. 1)"`
	// PACBayesSteps is the length of the pac-bayes (Eq. 7) path: the quick preset needs only a
	// few steps past k = 2 to show its objective rising; freedman.py takes 20. 0 takes the
	// default: 5 (quick) or 20 (paper) steps, 20 with --data authors.
	PACBayesSteps int `flag:"pac-bayes-steps" json:"pac-bayes-steps" default:"0" derived:"quick 5, paper 20; 20 with --data authors" usage:"forward-selection steps of pac-bayes (Eq. 7)"`
	// BaselineSteps is the length of the aic, bic and cv10 paths.
	BaselineSteps int `flag:"baseline-steps" json:"baseline-steps" quick:"20" paper:"40" usage:"forward-selection steps of aic, bic and cv10"`

	// Chains is the number of Monte-Carlo Langevin chains per pac-bayes candidate. It is not
	// the authors' 10: with 10 the estimate of a candidate's objective is noisy enough that
	// the minimum over ~500 candidates at k = 3 beats the true pair {0, 1} (an optimistic
	// selection effect). With 200 the quick signal variant selected exactly {0, 1} in each of
	// 20 repeats (--seed 1 --repeats 20); with 100 or 400, and by the closed form, in 19, the
	// miss being repeat 5, where the closed forms of {x1} and {x1, x0} differ by 0.0007, below
	// Monte-Carlo error. The quick preset can afford as many chains as the paper preset
	// because it takes only 5 pac-bayes steps. 0 takes the default: 200, or the authors' 10
	// with --data authors.
	Chains int `flag:"chains" json:"chains" default:"0" derived:"200; 10 with --data authors" usage:"Monte-Carlo Langevin chains per pac-bayes candidate"`
	// LangevinSteps is T, the Langevin steps of each chain (freedman.py's --num-inner-steps).
	LangevinSteps int `flag:"langevin-steps" json:"langevin-steps" default:"50" usage:"Langevin steps T of each chain"`
	// Eta is the Langevin step size η (freedman.py's --lr); ζ² = β η/4 weighs Eq. 7's
	// regularizer, as with freedman.py's --lr-div-factor 4.
	Eta float64 `flag:"eta" json:"eta" default:"0.1" usage:"Langevin step size η"`
	// Beta is the Gibbs inverse-temperature multiplier β of the chains' target
	// exp(−β n_T R̂_T) (freedman.py's --beta-min = --beta-max).
	Beta float64 `flag:"beta" json:"beta" default:"0.1" usage:"Gibbs inverse temperature β of the Langevin chains"`

	// Features is the number of candidate features; in the signal variant the first two
	// predict y.
	Features int `flag:"features" json:"features" default:"500" usage:"number of features (signal: x0 and x1 are the predictive ones)"`
	// TrainRows and ValidationRows split the 500 rows of Appendix C.1 (250/250).
	TrainRows      int `flag:"train-rows" json:"train-rows" default:"250" usage:"training rows"`
	ValidationRows int `flag:"validation-rows" json:"validation-rows" default:"250" usage:"validation rows"`
	// TestRows are the fresh points the selected models' test MSE is measured on.
	TestRows int `flag:"test-rows" json:"test-rows" default:"500" usage:"test rows"`
	// Folds is the number of cross-validation folds of cv10 over the training and validation
	// rows.
	Folds int `flag:"folds" json:"folds" default:"10" usage:"cross-validation folds of cv10"`
}

// DefaultConfig returns the configuration of a preset (experiments.Quick or
// experiments.PaperScale), for Go users to adjust before a run, or an error naming an unknown
// preset.
func DefaultConfig(preset string) (*Config, error) {
	c := &Config{}
	if err := experiments.ApplyPreset(c, preset); err != nil {
		return nil, err
	}
	return c, nil
}

// Finish fills the defaults that depend on --data and the preset, validates the
// configuration and puts the methods in canonical order.
func (c *Config) Finish(preset string) error {
	if !slices.Contains([]string{dataProject, dataAuthors}, c.Data) {
		return experiments.FlagErrorf("data", "%q: want project or authors", c.Data)
	}
	authors, paper := c.Data == dataAuthors, preset == experiments.PaperScale
	if c.Chains == 0 {
		c.Chains = 200
		if authors {
			c.Chains = 10 // freedman.py's --num-chains
		}
	}
	if c.ValidationSteps == 0 {
		c.ValidationSteps = 25
		if authors || paper {
			c.ValidationSteps = 40 // freedman_naive.py's --num-indices
		}
	}
	if c.PACBayesSteps == 0 {
		c.PACBayesSteps = 5
		if authors || paper {
			c.PACBayesSteps = 20 // freedman.py's --num-indices
		}
	}
	if !slices.Contains([]string{"signal", "null"}, c.Variant) {
		return experiments.FlagErrorf("variant", "%q: want signal or null", c.Variant)
	}
	if !slices.Contains([]string{"mc", "exact"}, c.Objective) {
		return experiments.FlagErrorf("objective", "%q: want mc or exact", c.Objective)
	}
	var methods []string
	for _, m := range c.Methods {
		if !slices.Contains(allMethods, m) {
			return experiments.FlagErrorf("methods", "has %q: want some of %s", m, strings.Join(allMethods, ", "))
		}
	}
	for _, m := range allMethods {
		if slices.Contains(c.Methods, m) {
			methods = append(methods, m)
		}
	}
	if len(methods) == 0 {
		return experiments.FlagErrorf("methods", "is empty: want some of %s", strings.Join(allMethods, ", "))
	}
	c.Methods = methods
	// Bounds far above the paper's sizes that keep a run's data and chains within memory.
	err := experiments.CheckCounts(experiments.Count{Flag: "repeats", V: c.Repeats, Lo: 1, Hi: 10000},
		experiments.Count{Flag: "chains", V: c.Chains, Lo: 1, Hi: 100000},
		experiments.Count{Flag: "langevin-steps", V: c.LangevinSteps, Lo: 1, Hi: 100000},
		experiments.Count{Flag: "features", V: c.Features, Lo: 1, Hi: 100000},
		experiments.Count{Flag: "train-rows", V: c.TrainRows, Lo: 1, Hi: 1000000},
		experiments.Count{Flag: "validation-rows", V: c.ValidationRows, Lo: 1, Hi: 1000000},
		experiments.Count{Flag: "test-rows", V: c.TestRows, Lo: 1, Hi: 1000000})
	if err != nil {
		return err
	}
	if n := (c.TrainRows + c.ValidationRows + c.TestRows) * c.Features; n > 1<<27 {
		return experiments.FlagErrorf("features", "%d of %d rows are %d values: want at most %d (1 GiB)", c.Features, n/c.Features, n, 1<<27)
	}
	if !(c.Eta > 0) {
		return experiments.FlagErrorf("eta", "%g: want a positive step size", c.Eta)
	}
	if !(c.Beta > 0) {
		return experiments.FlagErrorf("beta", "%g: want a positive inverse temperature", c.Beta)
	}
	need := 1
	if c.Variant == "signal" {
		need = 2 // x0 and x1 are the predictive features
	}
	if c.Data == dataAuthors {
		need = 2 // their test labels are x0 + x1 + noise in both variants
	}
	if c.Features < need {
		return experiments.FlagErrorf("features", "%d: want at least %d", c.Features, need)
	}

	rows := c.TrainRows + c.ValidationRows
	if c.Folds < 2 || c.Folds > rows {
		return experiments.FlagErrorf("folds", "%d: want 2 to %d (the training and validation rows)", c.Folds, rows)
	}
	return c.checkSteps()
}

// checkSteps checks that every path fits the data: at most one step per feature, and fewer
// features than the rows each OLS fit uses (training rows for every path's test MSE; the rows
// outside the largest fold for cv10).
func (c *Config) checkSteps() error {
	cvRows := c.TrainRows + c.ValidationRows - (c.TrainRows+c.ValidationRows+c.Folds-1)/c.Folds
	for _, s := range []struct {
		flag  string
		steps int
		rows  int
	}{{"validation-steps", c.ValidationSteps, c.TrainRows}, {"pac-bayes-steps", c.PACBayesSteps, c.TrainRows},
		{"baseline-steps", c.BaselineSteps, min(c.TrainRows, cvRows)}} {
		if c.Data == dataAuthors && s.steps == 0 {
			// The empty model is not a candidate there: a path needs a step to select anything.
			return experiments.FlagErrorf(s.flag, "0: want at least 1 step with --data authors")
		}
		if s.steps < 0 || s.steps > c.Features || s.steps >= s.rows {
			return experiments.FlagErrorf(s.flag, "%d: want 0 to %d (at most --features, and fewer than the %d rows of its fits)",
				s.steps, min(c.Features, s.rows-1), s.rows)
		}
	}
	return nil
}

// steps is the length of a method's forward-selection path.
func (c *Config) steps(method string) int {
	switch method {
	case methodValidation:
		return c.ValidationSteps
	case methodPACBayes:
		return c.PACBayesSteps
	}
	return c.BaselineSteps
}

// Experiment is Freedman's paradox. Its result has these tables:
//
//   - summary: one row per repeat × method, columns variant, repeat (0, 1, …), seed (the
//     repeat's seed, the root of its data, CV folds and chains; with --data authors only of
//     the folds, the data being RandomState(repeat)), method, selected (the
//     selected features, space-separated in selection order), n_selected, objective (the
//     method's objective at the selected set) and test_mse (OLS fitted on the training rows
//     with the selected features, on the fresh test points).
//   - path_<method>: every step of each repeat's forward selection, columns repeat, step (the
//     number of features), feature (the one added; null at step 0, the empty model),
//     objective (null at step 0 with --data authors, where the empty model is not a
//     candidate) and test_mse.
//
// With Out set it writes one PNG per method (and repeat) like Figures 4.1 and C.1, the tables
// as CSV and result.json.
func Experiment() experiments.Experiment {
	return experiments.Define[*Config]("freedman", experiments.PACBayes,
		"Freedman's paradox: forward selection over 500 noise features by validation MSE (Eq. 1) "+
			"vs the PAC-Bayes objective (Eq. 7), AIC, BIC and 10-fold CV (PAC-Bayes paper §4.1, App. C.1, Fig. 4.1/C.1)",
		plan, plots)
}

// cellOutput is one cell's output: a method's forward-selection path on one repeat.
type cellOutput struct {
	Repeat     int               `json:"repeat"`
	Seed       uint64            `json:"seed"`
	Method     string            `json:"method"`
	Features   []int             `json:"features"`
	Objectives []experiments.F64 `json:"objectives"`
	TestMSE    []experiments.F64 `json:"test_mse"`
}

// plan makes one cell per repeat × method. The cells of a repeat share its seed, and so its
// data: each redraws it from the seed.
func plan(_ context.Context, opt experiments.Options, cfg *Config) (*experiments.Plan, error) {
	if err := fitsInMemory(cfg, opt.Workers, gcpolicy.Available()); err != nil {
		return nil, err
	}
	p := &experiments.Plan{Best: "test_mse", Higher: false}
	for r := range cfg.Repeats {
		seed := experiments.DeriveSeed(opt.Seed, "freedman", "repeat", r)
		for _, m := range cfg.Methods {
			p.Cells = append(p.Cells, experiments.Cell{Key: fmt.Sprintf("r%d/%s", r, m), Seed: seed,
				Config: map[string]any{"variant": cfg.Variant, "repeat": r, "method": m}})
		}
	}
	p.Run = func(ctx context.Context, i, workers int) (experiments.CellResult, error) {
		r, m := i/len(cfg.Methods), cfg.Methods[i%len(cfg.Methods)]
		return runCell(ctx, opt, cfg, r, m, p.Cells[i].Seed, workers)
	}
	p.Assemble = func(outputs []json.RawMessage) (*experiments.Result, error) {
		return assemble(opt, cfg, p.Cells, outputs)
	}
	return p, nil
}

// cellBytes estimates the memory a cell holds at its peak: the drawn design and labels
// (train, validation and test rows), and the p×p Gram matrices of the train, validation, test
// and pooled rows — with CV folds, also each fold's and its complement's. The Gram matrices
// dominate: their memory grows with the square of --features (0.8 GB each at 10,000 features,
// 7.2 GB at 30,000).
func cellBytes(cfg *Config, folds bool) int64 {
	p, rows := int64(cfg.Features), int64(cfg.TrainRows+cfg.ValidationRows)
	grams := int64(4)
	design := (rows + int64(cfg.TestRows)) * (p + 1)
	if folds {
		grams += 2 * int64(cfg.Folds)
		design += rows * (p + 1) // the folds' copies of their rows
	}
	return 8 * (grams*p*(p+1) + design)
}

// fitsInMemory refuses, before anything is drawn, a configuration whose cells cannot fit in
// the memory available (avail bytes; 0: unknown, then nothing is refused) when workers of
// them run at once: without the check, --features 30000 grew to 21 GB in 40 s and
// --features 100000 ended in the Go runtime's fatal out-of-memory.
func fitsInMemory(cfg *Config, workers int, avail int64) error {
	cells := cfg.Repeats * len(cfg.Methods)
	at := int64(max(1, min(workers, cells)))
	need := cellBytes(cfg, slices.Contains(cfg.Methods, methodCV10))
	if avail <= 0 || need <= avail/at {
		return nil
	}
	what := fmt.Sprintf("a cell holds about %s (%d×%d Gram matrices of float64s)", gigabytes(need), cfg.Features, cfg.Features)
	if at > 1 {
		what += fmt.Sprintf(", %d cells at once (--workers) about %s", at, gigabytes(need*at))
	}
	return experiments.FlagErrorf("features", "%d: %s, more than the %s of memory available (the machine's, or its cgroup's limit): lower --features (memory grows with its square)%s",
		cfg.Features, what, gigabytes(avail), map[bool]string{true: " or --workers", false: ""}[at > 1])
}

// cancellable returns f's result, or ctx's error as soon as ctx is done: the Gram matrices of
// a large draw take seconds to minutes in BLAS, which cannot be interrupted, and a cancelled
// run (SIGINT, SIGTERM) must not wait for them. An abandoned f runs to its end in the
// background, its result dropped, so the draw's arithmetic (and so every result) is
// unchanged.
func cancellable[T any](ctx context.Context, f func() T) (T, error) {
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// gigabytes writes a byte count in GB.
func gigabytes(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }

// runCell draws repeat r's data from its seed and runs method m's forward selection on it.
func runCell(ctx context.Context, opt experiments.Options, cfg *Config, r int, m string, seed uint64, workers int) (experiments.CellResult, error) {
	s := streamsOf(seed)
	// Only cv10 draws the folds, from their own stream: the other methods' data is the same.
	label := fmt.Sprintf("freedman %s %s repeat %d", cfg.Variant, m, r)
	draw := func() *dataset { return newDataset(cfg, s, m == methodCV10) }
	if cfg.Data == dataAuthors {
		draw = func() *dataset { return newAuthorsDataset(cfg, uint32(r), s, m == methodCV10) }
		label = fmt.Sprintf("freedman %s %s (authors' data, RandomState(%d)) repeat %d", cfg.Variant, m, r, r)
	}
	data, err := cancellable(ctx, draw)
	if err != nil {
		return experiments.CellResult{}, fmt.Errorf("%s: %w", label, err)
	}
	steps, eval := data.objective(m, cfg, s.langevin)
	path, err := forwardSelect(ctx, cfg.Features, steps, workers, cfg.Data != dataAuthors, eval, func(step, feature int, objective float64) {
		opt.Progressf("%s: step %d/%d added x%d (objective %.4f)", label, step, steps, feature, objective)
	})
	if err != nil {
		return experiments.CellResult{}, fmt.Errorf("%s: %w", label, err)
	}
	testMSE := data.testMSEs(path.features)
	best := path.best()
	out := cellOutput{Repeat: r, Seed: seed, Method: m, Features: path.features,
		Objectives: experiments.F64s(path.objectives), TestMSE: experiments.F64s(testMSE)}
	return experiments.CellResult{Output: out,
		Metrics: map[string]float64{"test_mse": testMSE[best], "n_selected": float64(best), "objective": path.objectives[best]},
		Summary: fmt.Sprintf("%s: selected %d features {%s}, test MSE %.4f", label, best, joinInts(path.features[:best]), testMSE[best])}, nil
}

// streams are the seeds of a repeat's random streams, derived from its cell seed so that each
// can change without moving the others: drawing the folds for cv10 alone leaves the data of
// the other methods unchanged, and the chains' noise is not the data's.
type streams struct {
	data, folds, langevin uint64
}

func streamsOf(seed uint64) streams {
	return streams{
		data:     experiments.DeriveSeed(seed, "data"),
		folds:    experiments.DeriveSeed(seed, "folds"),
		langevin: experiments.DeriveSeed(seed, "method", methodPACBayes, "langevin"),
	}
}
