package layers

import "testing"

// Issue 52 (class 8): every constructor given a nil Net, and Logits of a nil model, was a
// nil-pointer panic; each is an error.
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
