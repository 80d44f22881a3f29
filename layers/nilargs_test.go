package layers

import (
	"math"
	"testing"

	"gorgonia.org/tensor"
)

// Issue 52 (class 8): every constructor given a nil Net, and Logits of a nil model, was a
// nil-pointer panic, and non-finite settings were accepted; each is an error.
func TestNilNetIsAnErrorNotAPanic(t *testing.T) {
	var net *Net
	cases := map[string]func() error{
		"Net.Param":           func() error { _, err := net.Param("w", []int{1}, nil); return err },
		"Net.State":           func() error { _, err := net.State("s", []int{1}, nil); return err },
		"NewLinear":           func() error { _, err := NewLinear(net, "l", 1, 1, LinearConfig{}); return err },
		"NewConv2d":           func() error { _, err := NewConv2d(net, "c", 1, 1, 3, 3, Conv2dConfig{}); return err },
		"NewBatchNorm":        func() error { _, err := NewBatchNorm(net, "b", 1, BatchNormConfig{}); return err },
		"NewMLP":              func() error { _, err := NewMLP(net, "m", MLPConfig{}); return err },
		"NewLinearClassifier": func() error { _, err := NewLinearClassifier(net, 2, 2, LinearConfig{}); return err },
		"NewMNISTConvNet":     func() error { _, err := NewMNISTConvNet(net, ConvNetConfig{}); return err },
		"NewSVHNConvNet":      func() error { _, err := NewSVHNConvNet(net, ConvNetConfig{}); return err },
		"NewBasicBlock":       func() error { _, err := NewBasicBlock(net, "b", 1, 1, 1); return err },
		"NewResNet":           func() error { _, err := NewResNet(net, ResNet18(3, 10)); return err },
		"NewWeightDecay":      func() error { _, err := NewWeightDecay(net, nil, 0, 0); return err },
		"Logits(nil)":         func() error { _, err := Logits(nil, nil, nil); return err },
		// Non-finite settings, which were accepted (a NaN ResNet width built one channel).
		"BatchNorm momentum NaN": func() error {
			_, err := NewBatchNorm(newNet(t), "b", 1, BatchNormConfig{Momentum: math.NaN()})
			return err
		},
		"BatchNorm ε +Inf":     func() error { _, err := NewBatchNorm(newNet(t), "b", 1, BatchNormConfig{Eps: math.Inf(1)}); return err },
		"WeightDecay init NaN": func() error { _, err := NewWeightDecay(newNetWithParam(t), nil, PerTensor, math.NaN()); return err },
		"ResNet width NaN": func() error {
			_, err := NewResNet(newNet(t), ResNetConfig{Blocks: [4]int{1, 1, 1, 1}, InChannels: 1, Classes: 2, Width: math.NaN()})
			return err
		},
		"ResNet width +Inf": func() error {
			_, err := NewResNet(newNet(t), ResNetConfig{Blocks: [4]int{1, 1, 1, 1}, InChannels: 1, Classes: 2, Width: math.Inf(1)})
			return err
		},
		"ResNet width 1e15": func() error {
			_, err := NewResNet(newNet(t), ResNetConfig{Blocks: [4]int{1, 1, 1, 1}, InChannels: 1, Classes: 2, Width: 1e15})
			return err
		},
	}
	for name, f := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", name, r)
				}
			}()
			if err := f(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}()
	}
}

func newNet(t *testing.T) *Net {
	t.Helper()
	n, err := NewNet(tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newNetWithParam(t *testing.T) *Net {
	t.Helper()
	n := newNet(t)
	if _, err := n.Param("w", []int{2}, nil); err != nil {
		t.Fatal(err)
	}
	return n
}
