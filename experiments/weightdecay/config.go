package weightdecay

import (
	"math"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/hypergrad"
	"github.com/hyperflat/hyperflat/layers"
	"gorgonia.org/tensor"
)

// Config is the whole protocol of one run. The paper preset is the authors' code's defaults
// (weight_decay.py: 1000 Adam steps per hyper-step, 100 hyper-steps, ζ on linspace(0, 5)) with
// five replicates; the quick preset trains 25× less and its sizes depend on the model and the
// dataset, so its defaults are zero and Finish derives them (the derived tags say how).
type Config struct {
	// Model is the classifier of Section 4.2: the linear one of the main text, or the
	// torchvision ResNets of Appendix C.2 (untrained, 1000-way head, a one-channel stem on
	// MNIST, as load_model in weight_decay.py).
	Model string `flag:"model" json:"model" default:"linear" choices:"linear,resnet18,resnet34" usage:"classifier"`
	// Dataset is where the 50 training, validation and selection images and the test set
	// come from.
	Dataset string `flag:"dataset" json:"dataset" default:"mnist" choices:"mnist,cifar10" usage:"image dataset"`
	// Zetas is the Eq. 7 penalty grid, in the units of weight_decay.py, which multiplies ζ by
	// η² (and halves it); ζ = 0, Eq. 1, always runs besides. The code's grid 0…5 has no
	// visible effect at the quick preset's scale, so the quick grid is wider.
	Zetas []float64 `flag:"zetas" json:"zetas" paper:"1,2,3,4,5" derived:"10,100,1000 (30,300 for linear on cifar10)" usage:"Eq. 7 penalties ζ (paper-code units: ζη²/2 is applied offline, ζη² online)"`
	// Repeats is the number of replicates: each draws its own initial weights (the code's
	// seed_everything(fit_num)) and runs every ζ from them.
	Repeats int `flag:"repeats" json:"repeats" paper:"5" derived:"5 (2 for a ResNet)" usage:"replicates (initializations)"`
	// InnerSteps are the full-batch Adam steps on the training images per hyper-step.
	InnerSteps int `flag:"inner-steps" json:"inner-steps" paper:"1000" derived:"100 (50 for linear on cifar10, 10 for a ResNet)" usage:"Adam steps per hyper-step"`
	// OuterSteps are the hyper-steps (outer RMSprop steps on λ); θ is warm-started across them.
	OuterSteps int `flag:"outer-steps" json:"outer-steps" paper:"100" derived:"40 (8 for a ResNet)" usage:"hyper-steps"`
	// LR is Adam's step, also the η of the decoupled decay θ ← θ − ηλ⊙θ, of the T1–T2
	// hypergradient and of ζ's scaling. Quick steps 10× larger than the code's 1e-4 so that
	// Eq. 1 overfits the validation images within its shorter run.
	LR float64 `flag:"lr" json:"lr" paper:"0.0001" derived:"0.001 (0.002 for linear on cifar10)" usage:"inner Adam step η"`
	// OuterLR is RMSprop's step on λ (Lorraine et al. 2019, as the code).
	OuterLR float64 `flag:"outer-lr" json:"outer-lr" default:"0.01" usage:"outer RMSprop step on λ"`
	// Width multiplies the ResNets' channels (1 is torchvision's); the quick preset's narrow
	// ResNets fit the CI budget. The linear model ignores it.
	Width float64 `flag:"width" json:"width" paper:"1" derived:"1 (0.0625 for a ResNet)" usage:"ResNet width multiplier"`
	// Images is the size of each of the training, validation and selection sets, drawn from
	// the training split (50 in the paper; the selection set picks ζ without the test set).
	Images int `flag:"images" json:"images" default:"50" usage:"images in each of the training, validation and selection sets"`
	// TestRows is how many test images, a fixed random subset, are evaluated at every
	// hyper-step; the test set's size or more evaluates all of it, as the paper does.
	TestRows int `flag:"test-rows" json:"test-rows" paper:"10000" derived:"10000, all (500 for a ResNet)" usage:"test images evaluated per hyper-step"`
	// Dtype is the precision of the weights and activations (float32, as the PyTorch code).
	Dtype string `flag:"dtype" json:"dtype" default:"float32" choices:"float32,float64" usage:"floating-point precision"`
	// Online runs Eq. 7 by Algorithm C.3, run_fit's online=True in weight_decay.py: a λ step
	// on ζη²‖a_t‖ at every inner step instead of one on (ζη²/2)·√(Σ_t‖a_t‖²) per hyper-step
	// (offline, the code's default and this one's). Eq. 1 (ζ = 0) is the same either way.
	// omitempty: runs stored before the flag existed keep their identity.
	Online bool `flag:"online" json:"online,omitempty" default:"false" usage:"Eq. 7 online (Algorithm C.3: a λ step on ζη²‖a_t‖ every inner step) instead of offline"`
	// Protocol is clean, this package's reading of the paper (the look-ahead T1–T2
	// hypergradient, BatchNorm evaluated in eval mode with its running statistics, in batches of
	// 500), or authors, what weight_decay.py does: the T1–T2 term −ηθ⊙∇R̂_V(θ) at the current
	// iterate, and every accuracy computed with BatchNorm in training mode (the code never
	// calls model.eval()) on the code's batches: the 50 validation images at once, the test set
	// in DataLoader batches of 50 (MNIST) or 4 (CIFAR-10). docs/reproduction/weightdecay-protocol.md
	// lists every difference that remains.
	Protocol string `flag:"protocol" json:"protocol" default:"clean" choices:"clean,authors" usage:"clean (look-ahead T1-T2, eval-mode BatchNorm) or authors (weight_decay.py: T1-T2 at the current θ, training-mode BatchNorm on its batches)"`
}

// The --protocol values.
const (
	protocolClean   = "clean"
	protocolAuthors = "authors"
)

// DefaultConfig returns the preset's configuration (quick or paper) for the default model and
// dataset, finished, or an error naming an unknown preset. To change the model or the dataset,
// use Experiment().Configure with their flags, so that the quick preset's sizes follow them.
func DefaultConfig(preset string) (*Config, error) {
	opt, err := Experiment().Resolve(experiments.Options{Preset: preset})
	if err != nil {
		return nil, err
	}
	return opt.Config.(*Config), nil
}

// Finish fills the quick preset's zero fields from the model and the dataset, then validates.
func (c *Config) Finish(preset string) error {
	if preset == experiments.Quick {
		c.deriveQuick()
	}
	return c.validate()
}

// deriveQuick fills the zero fields with the quick preset's sizes: 5 replicates of 40
// hyper-steps of 100 Adam steps at 1e-3 for the linear model, enough for Eq. 1 to overfit the
// validation images; on CIFAR-10's 3072 inputs half the inner steps at twice the rate, and two
// ζ values; a ResNet at a sixteenth of the width, 2 replicates of 8 hyper-steps of 10 steps,
// evaluated on 500 test images.
func (c *Config) deriveQuick() {
	q := Config{Zetas: []float64{10, 100, 1000}, Repeats: 5, InnerSteps: 100, OuterSteps: 40,
		LR: 1e-3, Width: 1, TestRows: 10000}
	switch {
	case c.resnet():
		q.Repeats, q.InnerSteps, q.OuterSteps, q.Width, q.TestRows = 2, 10, 8, 1.0/16, 500
	case c.Dataset == "cifar10":
		q.InnerSteps, q.LR, q.Zetas = 50, 2e-3, []float64{30, 300}
	}
	if len(c.Zetas) == 0 {
		c.Zetas = q.Zetas
	}
	fill(&c.Repeats, q.Repeats)
	fill(&c.InnerSteps, q.InnerSteps)
	fill(&c.OuterSteps, q.OuterSteps)
	fill(&c.TestRows, q.TestRows)
	fill(&c.LR, q.LR)
	fill(&c.Width, q.Width)
}

// fill sets a zero field to its derived value.
func fill[T int | float64](p *T, v T) {
	if *p == 0 {
		*p = v
	}
}

// maxZetas bounds the grid: a run has a cell per replicate and ζ.
const maxZetas = 1000

func (c *Config) validate() error {
	if c.Model != "linear" && c.Model != "resnet18" && c.Model != "resnet34" {
		return experiments.FlagErrorf("model", "%q: want linear, resnet18 or resnet34", c.Model)
	}
	if c.Dataset != "mnist" && c.Dataset != "cifar10" {
		return experiments.FlagErrorf("dataset", "%q: want mnist or cifar10", c.Dataset)
	}
	if c.Dtype != "float32" && c.Dtype != "float64" {
		return experiments.FlagErrorf("dtype", "%q: want float32 or float64", c.Dtype)
	}
	if c.Protocol != protocolClean && c.Protocol != protocolAuthors {
		return experiments.FlagErrorf("protocol", "%q: want clean or authors", c.Protocol)
	}
	if len(c.Zetas) == 0 {
		return experiments.FlagErrorf("zetas", "is empty: want comma-separated positive numbers")
	}
	if len(c.Zetas) > maxZetas {
		return experiments.FlagErrorf("zetas", "has %d values: want at most %d", len(c.Zetas), maxZetas)
	}
	for _, z := range c.Zetas {
		if !positive(z) {
			return experiments.FlagErrorf("zetas", "has %g: want comma-separated positive numbers", z)
		}
	}
	// The bounds are far above the paper's sizes; a run holds a record of every hyper-step of
	// every replicate × ζ, and three sets of --images images.
	err := experiments.CheckCounts(
		experiments.Count{Flag: "repeats", V: c.Repeats, Lo: 1, Hi: 1000},
		experiments.Count{Flag: "inner-steps", V: c.InnerSteps, Lo: 1, Hi: 1000000},
		experiments.Count{Flag: "outer-steps", V: c.OuterSteps, Lo: 1, Hi: 100000},
		experiments.Count{Flag: "images", V: c.Images, Lo: 1, Hi: 20000}, // 3 × 20000 = MNIST's 60000 training images
		experiments.Count{Flag: "test-rows", V: c.TestRows, Lo: 1, Hi: 1 << 30})
	if err != nil {
		return err
	}
	for _, f := range []struct {
		flag string
		x    float64
	}{{"lr", c.LR}, {"outer-lr", c.OuterLR}, {"width", c.Width}} {
		if !positive(f.x) {
			return experiments.FlagErrorf(f.flag, "%g: want a positive number", f.x)
		}
	}
	return nil
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

func (c *Config) dtype() tensor.Dtype {
	if c.Dtype == "float64" {
		return tensor.Float64
	}
	return tensor.Float32
}

// available is the number of test images the dataset's files hold (datasets.Lookup): 10000
// for MNIST, 1000 for the partial CIFAR-10 here.
func (c *Config) available() int {
	if info, ok := datasets.Lookup(c.Dataset); ok && info.TestRows > 0 {
		return info.TestRows
	}
	return c.TestRows
}

// testRows is the number of test images a run evaluates: --test-rows, at most the test set.
func (c *Config) testRows() int { return min(c.TestRows, c.available()) }

func (c *Config) authors() bool { return c.Protocol == protocolAuthors }

// t1t2 is the T1–T2 form Bilevel takes: the authors' at the current iterate, or the exact
// look-ahead derivative.
func (c *Config) t1t2() hypergrad.T1T2Form {
	if c.authors() {
		return hypergrad.AtCurrent
	}
	return hypergrad.LookAhead
}

// evaluation is how a protocol computes the accuracies it logs: BatchNorm's mode and the
// batch sizes of the validation (and selection) images and of the test set.
type evaluation struct {
	mode             layers.Mode
	valBatch, tBatch int
}

// cleanBatch is the clean protocol's evaluation batch: with eval-mode BatchNorm the batch
// size changes nothing but the memory in flight.
const cleanBatch = 500

// evaluation is the protocol's. The authors' get_accuracy runs the model on the whole
// validation set at once, and get_test_stats on fetch_MNIST_data's DataLoader batches of 50
// or fetch_CIFAR_data's of 4, all in training mode: BatchNorm normalizes each batch by its
// own statistics, so the batch size is part of the result.
func (c *Config) evaluation() evaluation {
	if !c.authors() {
		return evaluation{layers.Eval, cleanBatch, cleanBatch}
	}
	e := evaluation{layers.Train, 0, 50} // 0: the whole set in one batch
	if c.Dataset == "cifar10" {
		e.tBatch = 4
	}
	return e
}

// penalty is the Bilevel regularizer's weight and form for the grid's ζ, as run_fit scales it:
// zeta·lr² (zeta = ζη²), applied online to ‖a_t‖, and offline to √(Σ_t‖a_t‖²) whose gradient
// X/(2√Y) halves it.
func (c *Config) penalty(zeta float64) (float64, hypergrad.Form) {
	if c.Online {
		return zeta * c.LR * c.LR, hypergrad.Sum
	}
	return zeta * c.LR * c.LR / 2, hypergrad.SqrtSum
}

func (c *Config) resnet() bool { return c.Model == "resnet18" || c.Model == "resnet34" }
