package layers

import (
	"fmt"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
)

// torchBN is PyTorch's BatchNorm2d: momentum 0.1 (0.9 of the old value kept), ε 1e-5, and the
// unbiased batch variance folded into the running variance.
var torchBN = BatchNormConfig{Momentum: 0.9, Eps: 1e-5, Unbiased: true}

// BasicBlock is ResNet's two-convolution residual block (torchvision's BasicBlock):
// relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)), where the shortcut is a strided 1×1
// convolution with batch-norm when the block changes resolution or width, else the identity.
type BasicBlock struct {
	Conv1, Conv2 *Conv2d
	BN1, BN2     *BatchNorm
	DownConv     *Conv2d    // nil for an identity shortcut
	DownBN       *BatchNorm // nil for an identity shortcut
}

// NewBasicBlock adds a block from in to out channels whose first convolution has the given
// stride.
func NewBasicBlock(net *Net, name string, in, out, stride int) (*BasicBlock, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	b := &BasicBlock{}
	conv := func(suffix string, cin, cout, k, s, pad int) (*Conv2d, error) {
		return NewConv2d(net, name+"."+suffix, cin, cout, k, k, Conv2dConfig{
			Geometry: graph.Geometry{StrideH: s, StrideW: s, PadH: pad, PadW: pad}, NoBias: true, KernelInit: KaimingNormalFanOut})
	}
	var err error
	if b.Conv1, err = conv("conv1", in, out, 3, stride, 1); err != nil {
		return nil, err
	}
	if b.BN1, err = NewBatchNorm(net, name+".bn1", out, torchBN); err != nil {
		return nil, err
	}
	if b.Conv2, err = conv("conv2", out, out, 3, 1, 1); err != nil {
		return nil, err
	}
	if b.BN2, err = NewBatchNorm(net, name+".bn2", out, torchBN); err != nil {
		return nil, err
	}
	if stride != 1 || in != out {
		if b.DownConv, err = conv("downsample.0", in, out, 1, stride, 0); err != nil {
			return nil, err
		}
		if b.DownBN, err = NewBatchNorm(net, name+".downsample.1", out, torchBN); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Forward applies the block.
func (b *BasicBlock) Forward(x *G.Node, p *Pass) (*G.Node, error) {
	y, err := Sequential{b.Conv1, b.BN1, ReLU, b.Conv2, b.BN2}.Forward(x, p)
	if err != nil {
		return nil, err
	}
	short := x
	if b.DownConv != nil {
		if short, err = (Sequential{b.DownConv, b.DownBN}).Forward(x, p); err != nil {
			return nil, err
		}
	}
	if y, err = graph.Add(y, short); err != nil {
		return nil, err
	}
	return graph.ReLU(y)
}

// ResNetConfig describes a torchvision-style ResNet with BasicBlocks.
type ResNetConfig struct {
	// Blocks per stage: {2,2,2,2} is ResNet-18, {3,4,6,3} ResNet-34.
	Blocks [4]int
	// InChannels of the input images (1 for MNIST, 3 for CIFAR-10).
	InChannels int
	// Classes is the width of the head; torchvision's default (and the PAC-Bayes paper's
	// code) keeps 1000 even for 10-class data.
	Classes int
	// Width scales the stage widths 64, 128, 256, 512 (1 = torchvision); small widths make
	// test-sized networks.
	Width float64
	// SmallStem replaces the 7×7 stride-2 convolution and max-pool by one 3×3 stride-1
	// convolution, the usual CIFAR variant; false is torchvision's (and the paper's) stem.
	SmallStem bool
}

// ResNet18 is torchvision's resnet18 with in input channels and the given head width.
func ResNet18(in, classes int) ResNetConfig {
	return ResNetConfig{Blocks: [4]int{2, 2, 2, 2}, InChannels: in, Classes: classes, Width: 1}
}

// ResNet34 is torchvision's resnet34 with in input channels and the given head width.
func ResNet34(in, classes int) ResNetConfig {
	return ResNetConfig{Blocks: [4]int{3, 4, 6, 3}, InChannels: in, Classes: classes, Width: 1}
}

// ResNet is a residual network: stem, four stages of BasicBlocks, global average pooling and
// a Linear head.
type ResNet struct {
	net    *Net
	stem   Sequential
	stages Sequential
	head   *Linear
}

// maxChannels bounds a ResNet's widest stage, so that no width overflows a channel count.
const maxChannels = 1 << 20

// NewResNet builds a ResNet on net, with parameters named like torchvision's.
func NewResNet(net *Net, cfg ResNetConfig) (*ResNet, error) {
	if net == nil || net.g == nil {
		return nil, errNilNet
	}
	if cfg.InChannels <= 0 || cfg.Classes <= 0 {
		return nil, fmt.Errorf("layers: ResNet with %d input channels and %d classes", cfg.InChannels, cfg.Classes)
	}
	if cfg.Width <= 0 {
		cfg.Width = 1
	}
	// A NaN or infinite width converted to channel counts is undefined (on amd64 one channel
	// everywhere, silently); a huge one overflows them.
	if !(cfg.Width*512 <= maxChannels) {
		return nil, fmt.Errorf("layers: ResNet width multiplier %v; want a finite width with at most %d channels (512·width)", cfg.Width, maxChannels)
	}
	width := func(c int) int { return max(1, int(float64(c)*cfg.Width+0.5)) }
	r := &ResNet{net: net}
	c0 := width(64)
	var stem *Conv2d
	var err error
	if cfg.SmallStem {
		stem, err = NewConv2d(net, "conv1", cfg.InChannels, c0, 3, 3, Conv2dConfig{
			Geometry: graph.Geometry{PadH: 1, PadW: 1}, NoBias: true, KernelInit: KaimingNormalFanOut})
	} else {
		stem, err = NewConv2d(net, "conv1", cfg.InChannels, c0, 7, 7, Conv2dConfig{
			Geometry: graph.Geometry{StrideH: 2, StrideW: 2, PadH: 3, PadW: 3}, NoBias: true, KernelInit: KaimingNormalFanOut})
	}
	if err != nil {
		return nil, err
	}
	bn, err := NewBatchNorm(net, "bn1", c0, torchBN)
	if err != nil {
		return nil, err
	}
	r.stem = Sequential{stem, bn, ReLU}
	if !cfg.SmallStem {
		r.stem = append(r.stem, MaxPool2d{KH: 3, KW: 3, Geom: graph.Geometry{StrideH: 2, StrideW: 2, PadH: 1, PadW: 1}})
	}
	in := c0
	for s, n := range cfg.Blocks {
		out := width(64 << s)
		for i := 0; i < n; i++ {
			stride := 1
			if s > 0 && i == 0 {
				stride = 2
			}
			blk, err := NewBasicBlock(net, fmt.Sprintf("layer%d.%d", s+1, i), in, out, stride)
			if err != nil {
				return nil, err
			}
			r.stages = append(r.stages, blk)
			in = out
		}
	}
	if r.head, err = NewLinear(net, "fc", in, cfg.Classes, LinearConfig{
		KernelInit: TorchDefault([]int{in, cfg.Classes}), BiasInit: TorchDefault([]int{in, cfg.Classes})}); err != nil {
		return nil, err
	}
	return r, nil
}

// Net is the network the ResNet is built on.
func (r *ResNet) Net() *Net { return r.net }

// Features are the globally pooled activations of the last stage.
func (r *ResNet) Features(x *G.Node, p *Pass) (*G.Node, error) {
	return Sequential{r.stem, r.stages, GlobalAvgPool{}}.Forward(x, p)
}

// Head is the final Linear layer.
func (r *ResNet) Head() *Linear { return r.head }

// Logits applies the whole network.
func (r *ResNet) Logits(x *G.Node, p *Pass) (*G.Node, error) { return Logits(r, x, p) }
