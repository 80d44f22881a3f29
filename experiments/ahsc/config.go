package ahsc

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
)

// Config is the whole protocol of one run. The paper preset is Section 4's: 20 repeats, 30
// evaluations per black-box method (Bayesmark's 45 calls), N1 = 50 and N2 = 10, full data and
// the authors' epochs; the quick preset shrinks every size so that iris runs in seconds.
type Config struct {
	// Dataset is one of Table 1's 14 datasets, or all-tabular (its 12 tables) or all (the 14).
	Dataset string `flag:"dataset" json:"dataset" default:"iris" choices:"mnist,svhn,breast,digits,iris,wine,vehicle,blood-transfusion,australian,car,phoneme,segment,credit-g,kc1,all-tabular,all" usage:"dataset of Table 1, all-tabular (the 12 tables) or all (the 14)"`
	// SkipMissing lets a multi-dataset run go on without the datasets it cannot load, each
	// named in the notes; without it such a run fails at once, naming them all, rather than
	// report after hours a Table 1 with holes. omitempty keeps the identity of runs stored
	// before the flag existed.
	SkipMissing bool `flag:"skip-missing" json:"skip-missing,omitempty" default:"false" usage:"run the datasets that can be loaded and note the others, instead of failing"`
	// Methods are the searches compared: AHSC, Table 1's five baselines (tpe is the paper's
	// Hyperopt) and two ablations that rank the one-epoch screenings by the validation loss
	// or by the exact ‖H‖_F² instead of μ. Listed twice, a method runs once.
	Methods []string `flag:"methods" json:"methods" default:"ahsc,random,tpe,bohb,hebo,turbo" choices:"ahsc,random,tpe,bohb,hebo,turbo,ahsc-valloss,ahsc-hessian,ahsc-bbo" usage:"comma-separated methods to compare"`
	// Protocol is clean (selection on validation data only, this package's preprocessing) or
	// authors (the choices of the authors' code, each one as far as the data here allow: see
	// docs/reproduction/ahsc-protocol.md). Both score Bayesmark's sets as Bayesmark does.
	Protocol string `flag:"protocol" json:"protocol" default:"clean" choices:"clean,authors" usage:"clean (validation-only selection) or authors (the authors' code's choices)"`
	// Data is a user's table (CSV, TSV or ARFF with a header line, optionally gzipped), run
	// with the OpenML protocol instead of Dataset; Finish makes the path absolute.
	Data string `flag:"data" json:"data" default:"" usage:"a CSV, TSV or ARFF file to use instead of --dataset"`
	// Target is the class column of Data; "" is its last column.
	Target string `flag:"target" json:"target" default:"" usage:"the class column of --data (\"\": the last column)"`
	// Space is a user's search space file (YAML or JSON; see search.ParseSpaceFile) for
	// Data's model, or, in `hyperflat trial`, for one dataset's; Finish makes the path
	// absolute and reads the file into userSpace. A run on the paper's datasets searches
	// Table 2's spaces, the ones their paper values come from (plan refuses --space there).
	// The path is in the run's identity (omitempty keeps the identity of runs stored before
	// the flag existed), the hash of the parsed space in every cell's configuration: a resume
	// or a worker that reads another space is refused, as for Data.
	Space string `flag:"space" json:"space,omitempty" default:"" usage:"a YAML or JSON search space replacing Table 2's, with --data only (README: Your own table and search space)"`
	// Metric is Data's metric: auto is ROC-AUC for two classes (as the OpenML sets) and
	// accuracy for more.
	Metric string `flag:"metric" json:"metric" default:"auto" choices:"auto,auc,accuracy" usage:"metric for --data"`
	// Repeats are the independent repeats per dataset and method, each with its own split
	// (tables) and search stream; Table 1 reports medians over 20.
	Repeats int `flag:"repeats" json:"repeats" quick:"5" paper:"20" usage:"independent repeats"`
	// Budget is the evaluations of each black-box method on the OpenML sets, the images and
	// a user's table (the authors' max_evals=30).
	Budget int `flag:"budget" json:"budget" quick:"10" paper:"30" usage:"evaluations per black-box method (OpenML, images, --data)"`
	// BayesmarkBudget is their evaluations on the Bayesmark sets (the starter kit's 45 calls
	// of one suggestion).
	BayesmarkBudget int `flag:"bayesmark-budget" json:"bayesmark-budget" quick:"15" paper:"45" usage:"evaluations per black-box method on the Bayesmark sets"`
	// N1 is the configurations AHSC screens by one epoch of training (Algorithm 1).
	N1 int `flag:"n1" json:"n1" quick:"15" paper:"50" usage:"configurations AHSC screens"`
	// N2 is the screened configurations of least μ that AHSC trains fully.
	N2 int `flag:"n2" json:"n2" quick:"3" paper:"10" usage:"configurations AHSC trains fully"`
	// Epochs bound a full training on a table (hpobench/util/eval.py: 200, early-stopped).
	Epochs int `flag:"epochs" json:"epochs" quick:"20" paper:"200" usage:"most epochs of a full training on a table"`
	// ImageEpochs bound a full training on MNIST or SVHN (the image baselines' 50 epochs).
	ImageEpochs int `flag:"image-epochs" json:"image-epochs" quick:"2" paper:"50" usage:"most epochs of a full training on MNIST or SVHN"`
	// Patience and MinDelta are the early stopping of every full training (Keras semantics and
	// values, as hpobench/util/eval.py, no weight restore), on the validation loss rather than
	// that code's training loss.
	Patience int     `flag:"patience" json:"patience" default:"5" usage:"early stopping: epochs without improvement"`
	MinDelta float64 `flag:"min-delta" json:"min-delta" default:"0.001" usage:"early stopping: least improvement of the validation loss"`
	// ImageTrain and ImageTest keep stratified subsets of the MNIST and SVHN training and test
	// images (0: all of them), drawn once for every repeat.
	ImageTrain int `flag:"image-train" json:"image-train" quick:"2000" paper:"0" usage:"MNIST/SVHN training images kept (0: all)"`
	ImageTest  int `flag:"image-test" json:"image-test" quick:"1000" paper:"0" usage:"MNIST/SVHN test images kept (0: all)"`
	// TabRows subsamples larger tables to this many rows (stratified, per repeat; 0: never).
	TabRows int `flag:"tab-rows" json:"tab-rows" quick:"600" paper:"0" usage:"tables larger than this are subsampled per repeat (0: never)"`
	// MaxLog2Width caps the OpenML space's widest layer at 2^MaxLog2Width (Table 2: 1024).
	MaxLog2Width int `flag:"max-log2-width" json:"max-log2-width" quick:"8" paper:"10" usage:"the OpenML space's widest layer is 2^this (4..10)"`
	// Folds is the stratified cross-validation of the Bayesmark objective (the starter kit's 5).
	Folds int `flag:"folds" json:"folds" quick:"3" paper:"5" usage:"cross-validation folds of the Bayesmark objective"`
	// Dtype is the float type every model computes in. "" is each suite's own: float64 on
	// Bayesmark's sets, whose objective is scikit-learn's MLPClassifier (float64), and float32
	// on the OpenML sets, a user's table and the images, which the authors' code trains
	// through Keras (float32 by default); TestDtypeAgreement measures that float32 selects and
	// scores the OpenML sets as float64 does, within the spread between seeds. omitempty keeps
	// the identity of runs stored before the flag existed.
	Dtype string `flag:"dtype" json:"dtype,omitempty" default:"" usage:"float32 or float64 for every model (\"\": float64 on Bayesmark's sets, float32 elsewhere)"`
	// Adam is where ε enters every model's Adam update. hat adds it to the uncorrected √v
	// (Kingma & Ba's ε̂), as the libraries of the authors' code do: Keras
	// (keras.optimizers.Adam: the OpenML, image and ahsc-bbo models) and scikit-learn
	// (MLPClassifier's adam solver: Bayesmark's). torch adds it to the bias-corrected √v̂, as
	// PyTorch does — in effect ε·√(1−β2ᵗ) in place of ε̂ — which every run stored before the
	// flag existed used; Finish stores torch as "" (omitempty), so those runs keep their
	// identity and resume with it.
	Adam string `flag:"adam" json:"adam,omitempty" default:"hat" choices:"hat,torch" usage:"where ε enters Adam: hat (Keras's and scikit-learn's ε̂, as the authors' code) or torch (PyTorch's; the runs stored before this flag)"`
	// BBOScreen is how ahsc-bbo reduces a screening's per-batch ratios to its score: committed
	// is the authors' committed optimizer.py, the minimum over every batch, the last partial
	// one included (which then decides); max the maximum over batches (Algorithm 1's
	// reduction); min-full the minimum over the full batches. Part of the run's identity;
	// Finish stores committed as "" (omitempty), so runs stored before the flag keep theirs.
	BBOScreen string `flag:"bbo-screen" json:"bbo-screen,omitempty" default:"" derived:"committed" usage:"ahsc-bbo's reduction of the per-batch ratios: committed (optimizer.py's minimum over every batch), max, or min-full (minimum over the full batches)"`
	// BayesmarkModel is the model the Bayesmark sets train: sklearn is scikit-learn's
	// MLPClassifier as Bayesmark's MLP-adam problem fits it (SklearnBayesmarkBuild, package
	// skmlp; --protocol authors only), hyperflat this package's MLP trained by package train
	// (the clean protocol's model, and the authors' before the flag). auto is sklearn under
	// authors and hyperflat under clean. Finish stores hyperflat as "" (omitempty), and also
	// sklearn when the run has no Bayesmark set, so that the runs stored before the flag keep
	// their identity and resume with it, while a run of the sklearn model never shares an
	// identity (and cells) with them.
	BayesmarkModel string `flag:"bayesmark-model" json:"bayesmark-model,omitempty" default:"auto" derived:"sklearn under --protocol authors, hyperflat otherwise" choices:"auto,sklearn,hyperflat" usage:"the Bayesmark sets' model: sklearn (scikit-learn's MLPClassifier, as Bayesmark fits it; --protocol authors), hyperflat (this package's MLP) or auto (sklearn under authors, hyperflat under clean)"`
	// TPEStartup is TPE's random start-up trials: Hyperopt's 20, fewer for small budgets so
	// that the model gets a third of them.
	TPEStartup int `flag:"tpe-startup" json:"tpe-startup" default:"0" derived:"min(20, (2·budget+2)/3): 7 for quick, 20 for paper" usage:"TPE's random start-up trials"`
	// Whitebox records every full training of every method (convexity.Task.Whitebox): μ, the
	// training risk's Hessian trace and top eigenvalue, the Eq. 7 regularizer along training
	// and the generalization gaps, stored per evaluation (the evaluations table's whitebox_
	// columns), and makes every cell store the configuration both selection rules return.
	// The record's settings are the convexity.WhiteboxOptions (0: their defaults). All of
	// them are omitempty: runs stored before the flags keep their identity. --max-mem counts
	// the record's memory (layers.EstimateMLPRecordBytes, EstimateConvNetRecordBytes) in
	// every trial's estimate.
	Whitebox       bool `flag:"whitebox" json:"whitebox,omitempty" default:"false" usage:"record μ, Hessian trace and top eigenvalue, the Eq. 7 regularizer and the generalization gaps of every full training"`
	WhiteboxProbes int  `flag:"whitebox-probes" json:"whitebox-probes,omitempty" default:"0" derived:"4" usage:"--whitebox: Rademacher probes of the Hutchinson trace"`
	WhiteboxIters  int  `flag:"whitebox-iters" json:"whitebox-iters,omitempty" default:"0" derived:"10 (stopped at a residual of 1e-3·|λ|)" usage:"--whitebox: Lanczos steps (Hessian-vector products) for the top eigenvalue"`
	WhiteboxStride int  `flag:"whitebox-stride" json:"whitebox-stride,omitempty" default:"0" derived:"8 epochs' steps" usage:"--whitebox: the Eq. 7 regularizer samples every this-th optimizer step"`
	WhiteboxRows   int  `flag:"whitebox-rows" json:"whitebox-rows,omitempty" default:"0" derived:"256" usage:"--whitebox: rows of the training and validation splits the curvature and the regularizer's gradients use"`
	// Select is the rule that returns each search's configuration: validation (search.Best,
	// the paper's) or eq7 (the least validation loss + Zeta × the Eq. 7 regularizer, the
	// PAC-Bayes paper's objective as a selection rule; needs --whitebox). With --whitebox
	// every cell stores both rules' choices whichever this is; it decides which one the
	// summary compares. Finish stores validation as "".
	Select string  `flag:"select" json:"select,omitempty" default:"validation" derived:"validation" choices:"validation,eq7" usage:"the rule returning each search's configuration: validation or eq7 (validation loss + zeta × Eq. 7 regularizer; needs --whitebox)"`
	Zeta   float64 `flag:"zeta" json:"zeta,omitempty" default:"0.01" derived:"0.01 with --whitebox" usage:"--whitebox: ζ of the eq7 rule, fixed (no nested choice): validation loss + ζ × regularizer"`

	// userSpace is the parsed Space file (nil without one).
	userSpace *search.SpaceFile
	// trial: the configuration of `hyperflat trial` (TrialConfig), which may take a Space
	// for a paper dataset.
	trial bool
}

// The values of Config.Adam.
const (
	adamHat   = "hat"
	adamTorch = "torch"
)

// The values of Config.BBOScreen.
const (
	bboCommitted = "committed"
	bboMax       = "max"
	bboMinFull   = "min-full"
)

// bboReduce is ahsc-bbo's reduction of the per-batch ratios.
func (c *Config) bboReduce() convexity.Reduce {
	switch c.BBOScreen {
	case bboMax:
		return convexity.MaxOverBatches
	case bboMinFull:
		return convexity.MinOverFullBatches
	}
	return convexity.MinOverBatches
}

// The bounds of the count flags (see validate).
const (
	maxRepeats = 1000
	maxBudget  = 2000  // evaluations of a black-box search: HEBO's and TuRBO's Gaussian processes hold budget² floats
	maxScreen  = 10000 // AHSC's screenings, each one epoch of training
	maxEpochs  = 100000
	maxFolds   = 100
	maxRows    = 1 << 30 // more than any table or image set has: only a limit to catch typos
)

var (
	// DefaultMethods are Table 1's columns.
	DefaultMethods = []string{"ahsc", "random", "tpe", "bohb", "hebo", "turbo"}
	// Methods are every method the experiment runs: Table 1's and two ablations of the ranking.
	Methods = []string{"ahsc", "random", "tpe", "bohb", "hebo", "turbo", "ahsc-valloss", "ahsc-hessian", "ahsc-bbo"}
)

// DefaultConfig returns the preset's configuration (experiments.Quick or
// experiments.PaperScale), finished, or an error naming an unknown preset.
func DefaultConfig(preset string) (*Config, error) {
	c := &Config{}
	if err := experiments.ApplyPreset(c, preset); err != nil {
		return nil, err
	}
	if err := c.Finish(preset); err != nil {
		return nil, err
	}
	return c, nil
}

// Finish derives TPE's start-up trials, puts the methods in canonical form (lower case, each
// once, in the order given) and validates everything.
func (c *Config) Finish(string) error {
	switch c.Adam {
	case adamTorch:
		c.Adam = ""
	case "", adamHat:
	default:
		return experiments.FlagErrorf("adam", "%q: want %s or %s", c.Adam, adamHat, adamTorch)
	}
	switch c.BBOScreen {
	case bboCommitted:
		c.BBOScreen = ""
	case "", bboMax, bboMinFull:
	default:
		return experiments.FlagErrorf("bbo-screen", "%q: want %s, %s or %s", c.BBOScreen, bboCommitted, bboMax, bboMinFull)
	}
	switch c.BayesmarkModel {
	case bayesmarkAuto:
		c.BayesmarkModel = ""
		if c.Protocol == protocolAuthors {
			c.BayesmarkModel = bayesmarkSklearn
		}
	case bayesmarkHyperflat:
		c.BayesmarkModel = ""
	case "", bayesmarkSklearn:
	default:
		return experiments.FlagErrorf("bayesmark-model", "%q: want auto, %s or %s", c.BayesmarkModel, bayesmarkSklearn, bayesmarkHyperflat)
	}
	if !slices.ContainsFunc(c.datasets(), func(d string) bool { return groupOf(d) == bayesmark }) {
		c.BayesmarkModel = "" // no Bayesmark set: no model to choose
	}
	if c.TPEStartup == 0 {
		c.TPEStartup = min(20, (2*c.Budget+2)/3)
	}
	if err := c.finishWhitebox(); err != nil {
		return err
	}
	var methods []string
	for _, m := range c.Methods {
		m = strings.ToLower(strings.TrimSpace(m))
		if !slices.Contains(Methods, m) {
			return experiments.FlagErrorf("methods", "has the unknown method %q: want some of %s", m, strings.Join(Methods, ", "))
		}
		if !slices.Contains(methods, m) {
			methods = append(methods, m)
		}
	}
	if len(methods) == 0 {
		return experiments.FlagErrorf("methods", "is empty: want some of %s", strings.Join(Methods, ", "))
	}
	c.Methods = methods
	return c.validate()
}

func (c *Config) validate() error {
	c.Data = strings.TrimSpace(c.Data)
	if c.Data != "" {
		// Absolute, so that the run's identity and a worker started in another folder name
		// the same file.
		abs, err := filepath.Abs(c.Data)
		if err != nil {
			return experiments.FlagErrorf("data", "%q: %v", c.Data, err)
		}
		c.Data = abs
	}
	if c.Data == "" {
		if !slices.Contains(append(allSets(), "all-tabular", "all"), c.Dataset) {
			return experiments.FlagErrorf("dataset", "%q: want one of %s, all-tabular or all", c.Dataset, strings.Join(allSets(), ", "))
		}
		if c.Target != "" || c.Metric != "auto" {
			return experiments.FlagErrorf("target", "and --metric apply to --data only")
		}
	}
	if c.Protocol != protocolClean && c.Protocol != protocolAuthors {
		return experiments.FlagErrorf("protocol", "%q: want clean or authors", c.Protocol)
	}
	if c.BayesmarkModel == bayesmarkSklearn {
		if c.Protocol != protocolAuthors {
			return experiments.FlagErrorf("bayesmark-model", "sklearn applies to --protocol authors (the clean protocol searches its own space with the hyperflat model)")
		}
		if c.Adam == "" {
			return experiments.FlagErrorf("adam", "torch does not apply to the sklearn model, whose Adam is scikit-learn's (ε̂); add --bayesmark-model hyperflat to resume a run stored before these flags")
		}
	}
	if c.Dtype != "" && c.Dtype != dtypeFloat32 && c.Dtype != dtypeFloat64 {
		return experiments.FlagErrorf("dtype", "%q: want float32, float64 or \"\" (each suite's own)", c.Dtype)
	}
	if !slices.Contains([]string{"auto", "auc", "accuracy"}, c.Metric) {
		return experiments.FlagErrorf("metric", "%q: want auto, auc or accuracy", c.Metric)
	}
	// Every evaluation's record is held until the end, and every repeat's split is drawn
	// before the first cell; the bounds are far above the paper's sizes.
	err := experiments.CheckCounts(
		experiments.Count{Flag: "repeats", V: c.Repeats, Lo: 1, Hi: maxRepeats},
		experiments.Count{Flag: "budget", V: c.Budget, Lo: 1, Hi: maxBudget},
		experiments.Count{Flag: "bayesmark-budget", V: c.BayesmarkBudget, Lo: 1, Hi: maxBudget},
		experiments.Count{Flag: "n1", V: c.N1, Lo: 1, Hi: maxScreen},
		experiments.Count{Flag: "n2", V: c.N2, Lo: 1, Hi: maxScreen},
		experiments.Count{Flag: "epochs", V: c.Epochs, Lo: 1, Hi: maxEpochs},
		experiments.Count{Flag: "image-epochs", V: c.ImageEpochs, Lo: 1, Hi: maxEpochs},
		experiments.Count{Flag: "patience", V: c.Patience, Lo: 1, Hi: maxEpochs},
		experiments.Count{Flag: "folds", V: c.Folds, Lo: 2, Hi: maxFolds},
		experiments.Count{Flag: "tpe-startup", V: c.TPEStartup, Lo: 1, Hi: maxBudget},
		experiments.Count{Flag: "image-train", V: c.ImageTrain, Lo: 0, Hi: maxRows},
		experiments.Count{Flag: "image-test", V: c.ImageTest, Lo: 0, Hi: maxRows},
		experiments.Count{Flag: "tab-rows", V: c.TabRows, Lo: 0, Hi: maxRows})
	if err != nil {
		return err
	}
	if c.MaxLog2Width < 4 || c.MaxLog2Width > 10 {
		return experiments.FlagErrorf("max-log2-width", "%d: want 4 to 10 (Table 2's widths 16 to 1024)", c.MaxLog2Width)
	}
	if !(c.MinDelta >= 0) {
		return experiments.FlagErrorf("min-delta", "%g: want a number ≥ 0", c.MinDelta)
	}
	if c.BBOScreen != "" && !slices.Contains(c.Methods, "ahsc-bbo") {
		return experiments.FlagErrorf("bbo-screen", "%s applies to method ahsc-bbo, which --methods does not list", c.BBOScreen)
	}
	if slices.Contains(c.Methods, "ahsc-bbo") {
		for _, d := range c.datasets() {
			if c.Data != "" || !slices.Contains(bayesmarkSets, d) {
				return experiments.FlagErrorf("methods", "ahsc-bbo is the authors' Bayesmark optimizer: it runs on breast, digits, iris and wine, not %s", d)
			}
		}
	}
	return c.loadSpace()
}

// finishWhitebox checks the white-box flags and puts them in canonical form: Select's
// validation and every setting of a run without --whitebox stored as zero, so that runs
// stored before the flags keep their identity.
func (c *Config) finishWhitebox() error {
	if c.Select == convexity.ByValidation {
		c.Select = ""
	}
	if c.Select != "" && c.Select != convexity.ByEq7 {
		return experiments.FlagErrorf("select", "%q: want %s or %s", c.Select, convexity.ByValidation, convexity.ByEq7)
	}
	if !c.Whitebox {
		if c.Select != "" {
			return experiments.FlagErrorf("select", "eq7 needs the regularizer that --whitebox records")
		}
		c.WhiteboxProbes, c.WhiteboxIters, c.WhiteboxStride, c.WhiteboxRows, c.Zeta = 0, 0, 0, 0, 0
		return nil
	}
	if !(c.Zeta >= 0) || c.Zeta > 1e6 {
		return experiments.FlagErrorf("zeta", "%g: want a number from 0 to 1e6", c.Zeta)
	}
	o, err := c.whiteboxOptions().Resolved()
	if err != nil {
		return experiments.FlagErrorf("whitebox", "%v", err)
	}
	c.WhiteboxProbes, c.WhiteboxIters, c.WhiteboxStride, c.WhiteboxRows = o.Probes, o.PowerIters, o.Stride, o.Rows
	return nil
}

// whiteboxOptions are the record's settings (nil-free: see Task.Whitebox for when they apply).
func (c *Config) whiteboxOptions() convexity.WhiteboxOptions {
	return convexity.WhiteboxOptions{Probes: c.WhiteboxProbes, PowerIters: c.WhiteboxIters, Stride: c.WhiteboxStride, Rows: c.WhiteboxRows}
}

// BayesmarkDatasets lists the run's datasets that Bayesmark scores (breast, digits, iris,
// wine): the ones --bayesmark-out writes.
func (c *Config) BayesmarkDatasets() []string {
	var out []string
	for _, d := range c.datasets() {
		if c.Data == "" && slices.Contains(bayesmarkSets, d) {
			out = append(out, d)
		}
	}
	return out
}

// datasets lists the datasets a run covers.
func (c *Config) datasets() []string {
	switch {
	case c.Data != "":
		return []string{c.Data}
	case c.Dataset == "all":
		return allSets()
	case c.Dataset == "all-tabular":
		return append(slices.Clone(bayesmarkSets), openMLSets...)
	}
	return []string{c.Dataset}
}
