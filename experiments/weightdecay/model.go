package weightdecay

import (
	"fmt"

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
	params, acts := float64(paramCount(cfg.Model, c*h*h, cfg.Width)), 10.0
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
	return int64(float64(cfg.dtype().Size()) * (10*params + 4*inFlight*acts))
}

// paramCount is the model's parameter count from torchvision's (3-channel input, 1000-way
// head), the convolutions scaled by the width multiplier squared; in is the input size of
// the linear model.
func paramCount(model string, in int, width float64) int {
	switch model {
	case "resnet18", "resnet34":
		// torchvision's totals, their batch-norm scales and shifts (which grow with the width,
		// not its square) and the 1000-way head.
		total, bn := 11_689_512.0, 9_600.0
		if model == "resnet34" {
			total, bn = 21_797_672, 17_024
		}
		head := 512*1000 + 1000.0
		return int((total-head-bn)*width*width + bn*width + 512*width*1000 + 1000)
	}
	return in*classes + classes
}
