package weightdecay

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/layers"
)

// classes is the width of the linear model's head (both datasets have ten classes).
const classes = 10

// buildModel builds the classifier with initial weights drawn from seed, as load_model in
// weight_decay.py: nn.Linear with its default initialization, or torchvision's ResNet with
// its default 1000-way head.
func buildModel(cfg *Config, d *subsets, seed uint64) (layers.FeatureModel, error) {
	net, err := layers.NewNet(cfg.dtype(), seed)
	if err != nil {
		return nil, err
	}
	switch cfg.Model {
	case "linear":
		in := d.train.D
		return layers.NewLinearClassifier(net, in, classes, layers.LinearConfig{
			KernelInit: layers.TorchDefault([]int{in, classes}), BiasInit: layers.TorchDefault([]int{in, classes})})
	case "resnet18", "resnet34":
		channels := d.train.Shape[0]
		rc := layers.ResNet18(channels, 1000)
		if cfg.Model == "resnet34" {
			rc = layers.ResNet34(channels, 1000)
		}
		rc.Width = cfg.Width
		return layers.NewResNet(net, rc)
	}
	return nil, fmt.Errorf("unknown model %q", cfg.Model)
}

// estimateBytes is a coarse estimate of what one optimization holds, computed from the
// architecture without building it: ten parameter-sized buffers (weights, gradient, Adam's two
// moments, λ, its RMSprop state, the hypergradient, the Fisher terms' two gradients and a
// second-order product) and, per forward tensor of the images in flight (training,
// validation, selection), four activation-sized ones (forward, backward and the two passes of
// the second-order product). shape is one image's [C, H, W].
func estimateBytes(cfg *Config, shape []int) int64 {
	c, h := shape[0], shape[1]
	params, acts := paramCount(cfg.Model, c*h*h, cfg.Width), 10.0
	if cfg.resnet() {
		blocks := []int{2, 2, 2, 2}
		if cfg.Model == "resnet34" {
			blocks = []int{3, 4, 6, 3}
		}
		w := cfg.Width
		side := (h + 1) / 2 // the 7×7 stride-2 stem
		acts = 3 * 64 * w * float64(side*side)
		side = (side + 1) / 2 // max-pool
		for i, n := range blocks {
			if i > 0 {
				side = (side + 1) / 2
			}
			// Each basic block keeps two convolutions, two batch-norms, two ReLUs and the sum.
			acts += float64(n) * 7 * 64 * w * float64(int(1)<<i) * float64(side*side)
		}
	}
	inFlight := float64(3 * cfg.Images)
	need := float64(cfg.dtype().Size()) * (10*params + 4*inFlight*acts)
	// A huge --width makes the float beyond int64, whose conversion is then undefined (on
	// amd64, negative: a size that would pass every limit).
	if !(need < math.MaxInt64/2) {
		return math.MaxInt64 / 2
	}
	return int64(need)
}

// fitsInMemory refuses, before any model is built, a configuration whose optimizations cannot
// fit in the memory available (avail bytes; 0: unknown, then nothing is refused) when
// workers of the cells run at once: without the check, --model resnet18 --width 200 ended in
// the Go runtime's fatal out-of-memory while it initialized the first convolution.
func fitsInMemory(cfg *Config, shape []int, cells, workers int, avail int64) error {
	need := estimateBytes(cfg, shape)
	at := int64(max(1, min(workers, cells)))
	if avail <= 0 || need <= avail/at {
		return nil
	}
	about := "about"
	if need == math.MaxInt64/2 {
		about = "more than"
	}
	what := fmt.Sprintf("an optimization of %s on %s holds %s %s", cfg.Model, cfg.Dataset, about, convexity.FormatBytes(need))
	if at > 1 {
		what += fmt.Sprintf(", %d at once (--workers) about %s", at, convexity.FormatBytes(min(need*at, math.MaxInt64/2)))
	}
	flag, lower := "images", "lower --images"
	if cfg.resnet() {
		flag, lower = "width", "lower --width (memory grows with its square) or --images"
	}
	if at > 1 {
		lower += " or --workers"
	}
	return experiments.FlagErrorf(flag, "%s: %s, more than the %s of memory available (the machine's, or its cgroup's limit): %s",
		flagValue(cfg, flag), what, convexity.FormatBytes(avail), lower)
}

// flagValue is the value of --width or --images, as the refusal names it.
func flagValue(cfg *Config, flag string) string {
	if flag == "width" {
		return fmt.Sprintf("%g", cfg.Width)
	}
	return fmt.Sprintf("%d", cfg.Images)
}

// paramCount is the model's parameter count from torchvision's (3-channel input, 1000-way
// head), the convolutions scaled by the width multiplier squared; in is the input size of
// the linear model. It is a float64 so that no width overflows it.
func paramCount(model string, in int, width float64) float64 {
	switch model {
	case "resnet18", "resnet34":
		// torchvision's totals, their batch-norm scales and shifts (which grow with the width,
		// not its square) and the 1000-way head.
		total, bn := 11_689_512.0, 9_600.0
		if model == "resnet34" {
			total, bn = 21_797_672, 17_024
		}
		head := 512*1000 + 1000.0
		return (total-head-bn)*width*width + bn*width + 512*width*1000 + 1000
	}
	return float64(in*classes + classes)
}
