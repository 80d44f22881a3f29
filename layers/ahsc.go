package layers

import (
	"fmt"

	"github.com/hyperflat/hyperflat/graph"
)

// Padding is Keras's convolution padding mode.
type Padding string

// Padding modes.
const (
	Valid Padding = "valid"
	Same  Padding = "same"
)

func (p Padding) geometry(k int) (graph.Geometry, error) {
	switch p {
	case Valid, "":
		return graph.Geometry{}, nil
	case Same:
		return graph.SamePadding(k, k), nil
	}
	return graph.Geometry{}, fmt.Errorf("layers: padding %q; want valid or same", string(p))
}

// ConvNetConfig holds the AHSC paper's image-model hyperparameters (its Table 2) and the input
// geometry.
type ConvNetConfig struct {
	Filters int     // number of filters, 2..6 in the paper's space (doubled per block for SVHN)
	Kernel  int     // kernel size k (k×k), 2..6
	Padding Padding // valid or same
	Blocks  int     // number of convolution blocks, 1..3

	// SVHN only.
	Dropout      float64 // dropout rate after each block, 0.2..0.5
	FinalDropout float64 // dropout rate before the head, 0.2..0.5
	Units        int     // width of the dense layer, 32..512

	InChannels, Height, Width, Classes int
}

// NewMNISTConvNet builds the AHSC MNIST model: Blocks × [Conv2D(Filters, k×k, padding, ReLU,
// He-uniform) → MaxPool 2×2] → Flatten → Dense(128, ReLU, He-uniform) → Dense(Classes).
// Zero input geometry means 1×28×28 and 10 classes. Architectures whose feature maps vanish
// are refused with an error, as Keras refuses them.
func NewMNISTConvNet(net *Net, cfg ConvNetConfig) (*Classifier, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	defaults(&cfg, 1, 28, 28)
	geom, err := cfg.Padding.geometry(cfg.Kernel)
	if err != nil {
		return nil, err
	}
	if cfg.Filters <= 0 || cfg.Kernel <= 0 || cfg.Blocks <= 0 {
		return nil, fmt.Errorf("layers: MNIST ConvNet with %d filters, kernel %d, %d blocks", cfg.Filters, cfg.Kernel, cfg.Blocks)
	}
	var body Sequential
	c, h, w := cfg.InChannels, cfg.Height, cfg.Width
	for i := 0; i < cfg.Blocks; i++ {
		conv, err := NewConv2d(net, fmt.Sprintf("block%d.conv", i), c, cfg.Filters, cfg.Kernel, cfg.Kernel, Conv2dConfig{Geometry: geom, KernelInit: HeUniform})
		if err != nil {
			return nil, err
		}
		h, w = convOut(h, w, cfg.Kernel, cfg.Padding)
		if err := checkSpatial(fmt.Sprintf("block %d convolution", i), h, w); err != nil {
			return nil, err
		}
		h, w = h/2, w/2
		if err := checkSpatial(fmt.Sprintf("block %d pooling", i), h, w); err != nil {
			return nil, err
		}
		body = append(body, conv, ReLU, MaxPool2d{KH: 2, KW: 2})
		c = cfg.Filters
	}
	dense, err := NewLinear(net, "dense", c*h*w, 128, LinearConfig{KernelInit: HeUniform})
	if err != nil {
		return nil, err
	}
	body = append(body, Flatten{}, dense, ReLU)
	head, err := NewLinear(net, "head", 128, cfg.Classes, LinearConfig{})
	if err != nil {
		return nil, err
	}
	return &Classifier{N: net, Body: body, Top: head}, nil
}

// NewSVHNConvNet builds the AHSC SVHN model: for block i, Conv2D(Filters·2ⁱ, k×k, padding,
// ReLU) → BatchNorm → Conv2D(same) → MaxPool 2×2 → Dropout(Dropout); then Flatten →
// Dense(Units, ReLU) → Dropout(FinalDropout) → Dense(Classes). Keras defaults elsewhere
// (Glorot-uniform kernels, batch-norm momentum 0.99, ε 1e-3). Zero input geometry means
// 3×32×32 and 10 classes.
func NewSVHNConvNet(net *Net, cfg ConvNetConfig) (*Classifier, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	defaults(&cfg, 3, 32, 32)
	geom, err := cfg.Padding.geometry(cfg.Kernel)
	if err != nil {
		return nil, err
	}
	if cfg.Filters <= 0 || cfg.Kernel <= 0 || cfg.Blocks <= 0 || cfg.Units <= 0 {
		return nil, fmt.Errorf("layers: SVHN ConvNet with %d filters, kernel %d, %d blocks, %d units", cfg.Filters, cfg.Kernel, cfg.Blocks, cfg.Units)
	}
	var body Sequential
	c, h, w := cfg.InChannels, cfg.Height, cfg.Width
	for i := 0; i < cfg.Blocks; i++ {
		f := cfg.Filters << i
		conv1, err := NewConv2d(net, fmt.Sprintf("block%d.conv1", i), c, f, cfg.Kernel, cfg.Kernel, Conv2dConfig{Geometry: geom})
		if err != nil {
			return nil, err
		}
		bn, err := NewBatchNorm(net, fmt.Sprintf("block%d.bn", i), f, BatchNormConfig{})
		if err != nil {
			return nil, err
		}
		conv2, err := NewConv2d(net, fmt.Sprintf("block%d.conv2", i), f, f, cfg.Kernel, cfg.Kernel, Conv2dConfig{Geometry: geom})
		if err != nil {
			return nil, err
		}
		for j := 0; j < 2; j++ {
			h, w = convOut(h, w, cfg.Kernel, cfg.Padding)
			if err := checkSpatial(fmt.Sprintf("block %d convolution %d", i, j+1), h, w); err != nil {
				return nil, err
			}
		}
		h, w = h/2, w/2
		if err := checkSpatial(fmt.Sprintf("block %d pooling", i), h, w); err != nil {
			return nil, err
		}
		body = append(body, conv1, ReLU, bn, conv2, ReLU, MaxPool2d{KH: 2, KW: 2}, Dropout{Net: net, Rate: cfg.Dropout})
		c = f
	}
	dense, err := NewLinear(net, "dense", c*h*w, cfg.Units, LinearConfig{})
	if err != nil {
		return nil, err
	}
	body = append(body, Flatten{}, dense, ReLU, Dropout{Net: net, Rate: cfg.FinalDropout})
	head, err := NewLinear(net, "head", cfg.Units, cfg.Classes, LinearConfig{})
	if err != nil {
		return nil, err
	}
	return &Classifier{N: net, Body: body, Top: head}, nil
}

func defaults(cfg *ConvNetConfig, c, h, w int) {
	if cfg.InChannels == 0 {
		cfg.InChannels, cfg.Height, cfg.Width = c, h, w
	}
	if cfg.Classes == 0 {
		cfg.Classes = 10
	}
}

func convOut(h, w, k int, p Padding) (int, int) {
	if p == Same {
		return h, w
	}
	return h - k + 1, w - k + 1
}
