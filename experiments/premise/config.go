package premise

import (
	"slices"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
)

// Config is the whole protocol of one run. The paper preset samples 60 configurations on each
// of five tables at the ahsc experiment's paper sizes, so that at least the paper's N1 = 50
// are measured on each: a few per table train to a dead network whose μ is 0 after one epoch,
// which AHSC drops and the correlations leave out (credit-g: 4 of 50). The quick preset
// measures a few small ones on the two embedded tables so that tests run in seconds.
type Config struct {
	// Datasets are the tables measured: Bayesmark's and the OpenML sets of the ahsc
	// experiment, each prepared, split and trained as that experiment does.
	Datasets []string `flag:"datasets" json:"datasets" quick:"iris,wine" paper:"australian,blood-transfusion,breast,credit-g,vehicle" choices:"breast,digits,iris,wine,vehicle,blood-transfusion,australian,car,phoneme,segment,credit-g,kc1" usage:"comma-separated tables of the ahsc experiment"`
	// Configs is the number of configurations sampled per dataset from the ahsc experiment's
	// space (Table 2), each one cell.
	Configs int `flag:"configs" json:"configs" quick:"6" paper:"60" usage:"configurations sampled per dataset"`
	// Repeat is the ahsc repeat whose split and initial weights every configuration uses, so
	// that the correlations compare configurations, not splits.
	Repeat int `flag:"repeat" json:"repeat" default:"0" usage:"the ahsc experiment's repeat whose split and initial weights are used"`
	// Epochs, Patience and MinDelta are the full training's, as the ahsc experiment's
	// (early stopping on the validation loss).
	Epochs   int     `flag:"epochs" json:"epochs" quick:"8" paper:"200" usage:"most epochs of a full training"`
	Patience int     `flag:"patience" json:"patience" default:"5" usage:"early stopping: epochs without improvement"`
	MinDelta float64 `flag:"min-delta" json:"min-delta" default:"0.001" usage:"early stopping: least improvement of the validation loss"`
	// MaxLog2Width caps the OpenML space's widest layer (Table 2: 2^10) and TabRows
	// subsamples larger tables, as the ahsc experiment's flags of the same names.
	MaxLog2Width int `flag:"max-log2-width" json:"max-log2-width" quick:"6" paper:"10" usage:"the OpenML space's widest layer is 2^this (4..10)"`
	TabRows      int `flag:"tab-rows" json:"tab-rows" quick:"600" paper:"0" usage:"tables larger than this are subsampled (0: never)"`
	// HessianRows are the training rows whose mean loss the Hessian is taken of (0: all).
	HessianRows int `flag:"hessian-rows" json:"hessian-rows" default:"0" usage:"training rows of the Hessian's loss (0: all)"`
	// ExactParams is the most parameters whose Hessian is formed exactly (one Hessian-vector
	// product per parameter, then its eigenvalues); larger models are estimated.
	ExactParams int `flag:"exact-params" json:"exact-params" quick:"500" paper:"1000" usage:"models with at most this many parameters get the exact Hessian"`
	// Probes are the Rademacher vectors of the Hutchinson estimates of tr H and ‖H‖_F²
	// (both from the same products), Lanczos the iterations of the top-eigenvalue estimate.
	Probes  int `flag:"probes" json:"probes" quick:"8" paper:"32" usage:"Hutchinson probes for tr H and ‖H‖_F²"`
	Lanczos int `flag:"lanczos" json:"lanczos" quick:"10" paper:"20" usage:"Lanczos iterations for λ_max"`
	// Adam is where ε enters every model's Adam update, as the ahsc experiment's --adam: hat
	// (Keras's and scikit-learn's ε̂, the authors' libraries) or torch (PyTorch's), which every
	// run stored before the flag existed trained with; Finish stores torch as "" (omitempty),
	// so those runs keep their identity and resume with it.
	Adam string `flag:"adam" json:"adam,omitempty" default:"hat" choices:"hat,torch" usage:"where ε enters Adam: hat (Keras's and scikit-learn's ε̂, as the authors' code) or torch (PyTorch's; the runs stored before this flag)"`
	// Figure is the dataset of Figure 1's curves ("" for none): its configurations are also
	// trained epoch by epoch from their screening point, scored after each epoch, and the
	// figure shows those of least and greatest μ.
	Figure string `flag:"figure" json:"figure" quick:"iris" paper:"australian" usage:"dataset of Figure 1's training curves (\"\": none); one of --datasets"`
}

// Datasets is every table the experiment can measure (the ahsc experiment's tabular sets).
var Datasets = []string{"breast", "digits", "iris", "wine", "vehicle", "blood-transfusion", "australian", "car", "phoneme", "segment", "credit-g", "kc1"}

// The bounds of the count flags: far above any sensible run, they catch typos before a run
// allocates for them.
const (
	maxConfigs = 10000
	maxEpochs  = 100000
	maxRows    = 1 << 30
	maxExact   = 20000 // an exact Hessian holds n² floats: 3.2 GB at the bound
	maxProbes  = 100000
)

// DefaultConfig returns the preset's configuration (experiments.Quick or
// experiments.PaperScale), finished, or an error naming an unknown preset.
func DefaultConfig(preset string) (*Config, error) {
	opt, err := Experiment().Resolve(experiments.Options{Preset: preset})
	if err != nil {
		return nil, err
	}
	return opt.Config.(*Config), nil
}

// Finish puts the datasets in canonical form (lower case, each once, in the order given) and
// validates everything.
func (c *Config) Finish(string) error {
	switch c.Adam {
	case "torch":
		c.Adam = ""
	case "", "hat":
	default:
		return experiments.FlagErrorf("adam", "%q: want hat or torch", c.Adam)
	}
	seen := map[string]bool{}
	c.Datasets = slices.DeleteFunc(c.Datasets, func(d string) bool {
		d = strings.ToLower(strings.TrimSpace(d))
		dup := seen[d]
		seen[d] = true
		return dup
	})
	for i, d := range c.Datasets {
		if c.Datasets[i] = strings.ToLower(strings.TrimSpace(d)); !slices.Contains(Datasets, c.Datasets[i]) {
			return experiments.FlagErrorf("datasets", "has %q: want some of %s", d, strings.Join(Datasets, ", "))
		}
	}
	if len(c.Datasets) == 0 {
		return experiments.FlagErrorf("datasets", "is empty: want some of %s", strings.Join(Datasets, ", "))
	}
	c.Figure = strings.ToLower(strings.TrimSpace(c.Figure))
	if c.Figure != "" && !slices.Contains(c.Datasets, c.Figure) {
		return experiments.FlagErrorf("figure", "%q is not among --datasets (%s)", c.Figure, strings.Join(c.Datasets, ", "))
	}
	err := experiments.CheckCounts(
		experiments.Count{Flag: "configs", V: c.Configs, Lo: 2, Hi: maxConfigs},
		experiments.Count{Flag: "repeat", V: c.Repeat, Lo: 0, Hi: maxConfigs},
		experiments.Count{Flag: "epochs", V: c.Epochs, Lo: 1, Hi: maxEpochs},
		experiments.Count{Flag: "patience", V: c.Patience, Lo: 1, Hi: maxEpochs},
		experiments.Count{Flag: "max-log2-width", V: c.MaxLog2Width, Lo: 4, Hi: 10},
		experiments.Count{Flag: "tab-rows", V: c.TabRows, Lo: 0, Hi: maxRows},
		experiments.Count{Flag: "hessian-rows", V: c.HessianRows, Lo: 0, Hi: maxRows},
		experiments.Count{Flag: "exact-params", V: c.ExactParams, Lo: 0, Hi: maxExact},
		experiments.Count{Flag: "probes", V: c.Probes, Lo: 2, Hi: maxProbes},
		experiments.Count{Flag: "lanczos", V: c.Lanczos, Lo: 1, Hi: maxProbes})
	if err != nil {
		return err
	}
	if !(c.MinDelta >= 0) {
		return experiments.FlagErrorf("min-delta", "%g: want a number ≥ 0", c.MinDelta)
	}
	return nil
}
