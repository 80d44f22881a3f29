package train

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	"gorgonia.org/tensor"
)

func TestIrisMLPReachesTheIssueBar(t *testing.T) {
	iris, err := datasets.LoadEmbedded("iris")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := datasets.Split(iris, rand.New(rand.NewPCG(1, 1)), 0.6, 0.2, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	std, err := datasets.FitStandardizer(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	var sets [3]*datasets.Dataset
	for i, p := range parts {
		if sets[i], err = std.Transform(p); err != nil {
			t.Fatal(err)
		}
	}
	net, err := layers.NewNet(tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 4, Hidden: []int{16}, Out: 3})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := tr.Fit(context.Background(), samplers.NewAdam(0.01), sets[0], sets[1], Config{Epochs: 100, BatchSize: 16, Seed: 2,
		Early: &EarlyStopping{Patience: 15, MinDelta: 1e-4, RestoreBest: true}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Evaluate(context.Background(), sets[2], 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iris: %d epochs, test accuracy %.3f", len(h.Epochs), res.Accuracy)
	if res.Accuracy < 0.93 {
		t.Errorf("iris MLP test accuracy %.3f < 0.93", res.Accuracy)
	}
}

func mnist(t *testing.T) (train, test *datasets.Dataset) {
	dir, err := datasets.SharedDataDir()
	if err != nil {
		t.Skipf("MNIST needs the shared data directory: %v", err)
	}
	train, test, err = datasets.Load(context.Background(), "mnist", dir)
	if err != nil {
		t.Fatal(err)
	}
	return train, test
}

func TestMNISTLinearThenConvNet(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on 10,000 MNIST images")
	}
	full, test := mnist(t)
	idx := rand.New(rand.NewPCG(3, 3)).Perm(full.N)[:10000]
	train := full.Subset(idx)
	fit := func(m layers.Model, lr float64, epochs int) float64 {
		tr, err := NewTrainer(m, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Fit(context.Background(), samplers.NewAdam(lr), train, nil, Config{Epochs: epochs, BatchSize: 64, Seed: 4}); err != nil {
			t.Fatal(err)
		}
		res, err := tr.Evaluate(context.Background(), test, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return res.Accuracy
	}
	net, err := layers.NewNet(tensor.Float32, 5)
	if err != nil {
		t.Fatal(err)
	}
	linear, err := layers.NewLinearClassifier(net, 784, 10, layers.LinearConfig{})
	if err != nil {
		t.Fatal(err)
	}
	linAcc := fit(linear, 1e-3, 5)
	net, err = layers.NewNet(tensor.Float32, 6)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := layers.NewMNISTConvNet(net, layers.ConvNetConfig{Filters: 6, Kernel: 3, Padding: layers.Same, Blocks: 1})
	if err != nil {
		t.Fatal(err)
	}
	convAcc := fit(conv, 1e-3, 2)
	t.Logf("MNIST (10,000 training images): linear %.4f, ConvNet %.4f on the 10,000 test images", linAcc, convAcc)
	if linAcc < 0.88 {
		t.Errorf("linear classifier test accuracy %.4f < 0.88", linAcc)
	}
	if convAcc <= linAcc {
		t.Errorf("ConvNet %.4f does not beat the linear classifier %.4f", convAcc, linAcc)
	}
}
