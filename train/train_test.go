package train

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// blobs draws n points per class around k well-separated centres in d dims.
func blobs(seed uint64, n, k, d int) *datasets.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	ds := &datasets.Dataset{Name: "blobs", N: n * k, D: d, Shape: []int{d}}
	for c := 0; c < k; c++ {
		ds.Classes = append(ds.Classes, string(rune('a'+c)))
	}
	for i := 0; i < n*k; i++ {
		c := i % k
		for j := 0; j < d; j++ {
			centre := 0.0
			if j%k == c {
				centre = 3
			}
			ds.X = append(ds.X, centre+rng.NormFloat64())
		}
		ds.Y = append(ds.Y, c)
	}
	return ds
}

func newMLP(t testing.TB, dt tensor.Dtype, seed uint64, d, k int) *layers.MLP {
	t.Helper()
	net, err := layers.NewNet(dt, seed)
	if err != nil {
		t.Fatal(err)
	}
	m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: d, Hidden: []int{16}, Out: k})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func weights(m layers.Model) []float64 {
	var w []float64
	for _, p := range m.Net().Params() {
		switch d := p.Value.Data().(type) {
		case []float64:
			w = append(w, d...)
		case []float32:
			for _, v := range d {
				w = append(w, float64(v))
			}
		}
	}
	return w
}

func TestFitLearnsSeparableBlobs(t *testing.T) {
	tr, va := blobs(1, 60, 3, 4), blobs(2, 30, 3, 4)
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		m := newMLP(t, dt, 3, 4, 3)
		h, err := Fit(context.Background(), m, samplers.NewAdam(0.01), tr, va, Config{Epochs: 15, BatchSize: 16, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		last := h.Epochs[len(h.Epochs)-1]
		if last.ValAccuracy < 0.95 || last.Loss > h.Epochs[0].Loss {
			t.Errorf("%v: final %+v (first loss %v)", dt, last, h.Epochs[0].Loss)
		}
	}
}

func TestSameSeedGivesBitIdenticalWeights(t *testing.T) {
	tr := blobs(5, 40, 2, 6)
	run := func() []float64 {
		net, err := layers.NewNet(tensor.Float64, 11)
		if err != nil {
			t.Fatal(err)
		}
		hidden, err := layers.NewLinear(net, "h", 6, 12, layers.LinearConfig{})
		if err != nil {
			t.Fatal(err)
		}
		head, err := layers.NewLinear(net, "out", 12, 2, layers.LinearConfig{})
		if err != nil {
			t.Fatal(err)
		}
		m := &layers.Classifier{N: net, Body: layers.Sequential{hidden, layers.ReLU, layers.Dropout{Net: net, Rate: 0.3}}, Top: head}
		if _, err := Fit(context.Background(), m, samplers.NewAdam(0.01), tr, nil, Config{Epochs: 3, BatchSize: 7, Seed: 99}); err != nil {
			t.Fatal(err)
		}
		return weights(m)
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("weight %d differs between two runs with the same seed: %v vs %v", i, a[i], b[i])
		}
	}
}

func TestDivergenceStopsWithAnError(t *testing.T) {
	tr := blobs(6, 20, 2, 3)
	m := newMLP(t, tensor.Float64, 1, 3, 2)
	_, err := Fit(context.Background(), m, &samplers.SGD{LR: 1e300}, tr, nil, Config{Epochs: 5, BatchSize: 10})
	if !errors.Is(err, ErrDiverged) {
		t.Fatalf("err = %v; want ErrDiverged", err)
	}
}

func TestEarlyStoppingWithPatience(t *testing.T) {
	tr := blobs(7, 20, 2, 3)
	m := newMLP(t, tensor.Float64, 1, 3, 2)
	// A zero learning rate never improves the loss: training stops after 1 + patience epochs.
	h, err := Fit(context.Background(), m, &samplers.SGD{LR: 0}, tr, nil, Config{Epochs: 50, BatchSize: 40, Sequential: true,
		Early: &EarlyStopping{Monitor: "loss", Patience: 3, MinDelta: 1e-3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Epochs) != 4 || h.Stopped == "" || h.BestEpoch != 0 {
		t.Errorf("%d epochs, best %d, stopped %q; want 4, 0, a reason", len(h.Epochs), h.BestEpoch, h.Stopped)
	}
}

func TestBinaryRiskWithOneLogit(t *testing.T) {
	tr := blobs(8, 50, 2, 4)
	net, err := layers.NewNet(tensor.Float64, 2)
	if err != nil {
		t.Fatal(err)
	}
	m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 4, Hidden: []int{8}, Out: 1})
	if err != nil {
		t.Fatal(err)
	}
	trn, err := NewTrainer(m, losses.Binary, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trn.Fit(context.Background(), samplers.NewAdam(0.02), tr, nil, Config{Epochs: 20, BatchSize: 25, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := trn.Evaluate(context.Background(), tr, 0)
	if err != nil {
		t.Fatal(err)
	}
	auc, err := res.AUC(tr.Y)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accuracy < 0.95 || auc < 0.98 || res.Scores.K != 1 {
		t.Errorf("binary: accuracy %v, AUC %v, K %d", res.Accuracy, auc, res.Scores.K)
	}
}

func TestDecoupledAndCoupledDecayShrinkWeights(t *testing.T) {
	tr := blobs(9, 30, 2, 4)
	norm := func(mode DecayMode, lambda float64) float64 {
		m := newMLP(t, tensor.Float64, 1, 4, 2)
		wd, err := layers.NewWeightDecay(m.Net(), nil, layers.PerElement, lambda)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Fit(context.Background(), m, samplers.NewAdam(0.01), tr, nil, Config{Epochs: 10, BatchSize: 20, Seed: 1,
			Decay: &Decay{WD: wd, Mode: mode, LR: 0.01}}); err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for _, w := range weights(m) {
			s += w * w
		}
		return math.Sqrt(s)
	}
	for _, mode := range []DecayMode{Coupled, Decoupled} {
		free, decayed := norm(mode, 0), norm(mode, 5)
		if decayed >= free {
			t.Errorf("mode %d: ‖θ‖ %v with decay, %v without", mode, decayed, free)
		}
	}
}

func TestBatchNormModelTrainsAndEvaluates(t *testing.T) {
	// 2×6×6 "images": class 1 has a bright top half.
	rng := rand.New(rand.NewPCG(3, 3))
	ds := &datasets.Dataset{Name: "bars", N: 40, D: 72, Shape: []int{2, 6, 6}, Classes: []string{"dark", "bright"}}
	for i := 0; i < ds.N; i++ {
		c := i % 2
		for j := 0; j < ds.D; j++ {
			v := 0.1 * rng.NormFloat64()
			if c == 1 && (j%36) < 18 {
				v += 1
			}
			ds.X = append(ds.X, v)
		}
		ds.Y = append(ds.Y, c)
	}
	net, err := layers.NewNet(tensor.Float32, 5)
	if err != nil {
		t.Fatal(err)
	}
	m, err := layers.NewSVHNConvNet(net, layers.ConvNetConfig{Filters: 2, Kernel: 3, Padding: layers.Same, Blocks: 1,
		Dropout: 0.2, FinalDropout: 0.2, Units: 8, InChannels: 2, Height: 6, Width: 6, Classes: 2})
	if err != nil {
		t.Fatal(err)
	}
	trn, err := NewTrainer(m, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trn.Fit(context.Background(), samplers.NewAdam(0.01), ds, nil, Config{Epochs: 15, BatchSize: 8, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	res, err := trn.Evaluate(context.Background(), ds, 16)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accuracy < 0.95 {
		t.Errorf("inference-mode accuracy %v", res.Accuracy)
	}
}

func TestFitRefusesBadData(t *testing.T) {
	tr := blobs(1, 5, 2, 3)
	tr.X[4] = math.NaN()
	m := newMLP(t, tensor.Float64, 1, 3, 2)
	if _, err := Fit(context.Background(), m, samplers.NewAdam(0.01), tr, nil, Config{Epochs: 1}); err == nil {
		t.Error("NaN feature accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(ctx, m, samplers.NewAdam(0.01), blobs(1, 5, 2, 3), nil, Config{Epochs: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// sqrtModel computes logits x·√W with W = 0 at the start: the loss is finite (every logit is
// 0) but ∂/∂W = x/(2√W) is infinite.
type sqrtModel struct {
	net *layers.Net
	w   *layers.Param
}

func (m *sqrtModel) Net() *layers.Net { return m.net }
func (m *sqrtModel) Logits(x *G.Node, _ *layers.Pass) (*G.Node, error) {
	r, err := graph.Sqrt(m.w.Node)
	if err != nil {
		return nil, err
	}
	return graph.MatMul(x, r)
}

// blowUp is an optimizer that writes +Inf into the first parameter, standing in for a finite
// gradient step that overflows.
type blowUp struct{}

func (blowUp) Step(params []*tensor.Dense, _ []G.Value) error {
	params[0].Data().([]float64)[0] = math.Inf(1)
	return nil
}

// refuse is an optimizer that fails for a reason other than divergence.
type refuse struct{}

func (refuse) Step([]*tensor.Dense, []G.Value) error { return errors.New("bad settings") }

func TestDivergenceDetectsGradientsAndParameters(t *testing.T) {
	tr := blobs(6, 10, 2, 3)
	net, err := layers.NewNet(tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := net.Param("w", []int{3, 2}, layers.Zeros)
	if err != nil {
		t.Fatal(err)
	}
	sm := &sqrtModel{net: net, w: w}
	_, err = Fit(context.Background(), sm, samplers.NewAdam(0.01), tr, nil, Config{Epochs: 1, BatchSize: 10})
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "gradient of w") {
		t.Errorf("infinite gradient: err = %v; want ErrDiverged naming the gradient of w", err)
	}
	if v := w.Value.Data().([]float64); v[0] != 0 {
		t.Errorf("the parameter moved to %v on a non-finite gradient", v[0])
	}

	m := newMLP(t, tensor.Float64, 1, 3, 2)
	_, err = Fit(context.Background(), m, blowUp{}, tr, nil, Config{Epochs: 1, BatchSize: 10})
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "after the optimizer step") {
		t.Errorf("infinite parameter: err = %v; want ErrDiverged naming the parameter", err)
	}

	m = newMLP(t, tensor.Float64, 1, 3, 2)
	_, err = Fit(context.Background(), m, refuse{}, tr, nil, Config{Epochs: 1, BatchSize: 10})
	if err == nil || errors.Is(err, ErrDiverged) {
		t.Errorf("optimizer error: err = %v; want an error that is not ErrDiverged", err)
	}
}
