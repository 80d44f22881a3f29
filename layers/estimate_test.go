package layers_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/train"
	"gorgonia.org/tensor"
)

// randomData is n examples of the given shape in k classes.
func randomData(n, k int, shape ...int) *datasets.Dataset {
	d := 1
	for _, s := range shape {
		d *= s
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ds := &datasets.Dataset{Name: "random", N: n, D: d, Shape: shape, X: make([]float64, n*d), Y: make([]int, n)}
	for c := 0; c < k; c++ {
		ds.Classes = append(ds.Classes, string(rune('a'+c)))
	}
	for i := range ds.X {
		ds.X[i] = rng.NormFloat64()
	}
	for i := range ds.Y {
		ds.Y[i] = i % k
	}
	return ds
}

// measureStep returns the heap a model retains once built, compiled for training at batch
// size batch and stepped once by Adam through train.Trainer.Step: the live heap after a
// garbage collection, less the live heap before the model was built.
func measureStep(t *testing.T, ds *datasets.Dataset, batch int, build func(net *layers.Net) (layers.Model, error), dt tensor.Dtype) int64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	// No collection while the model is built and stepped: one in the middle would empty the
	// graph's workspace pools (sync.Pool) part way, so that the heap left after the step
	// held them or not by the collector's timing (8.4 to 11.5 MB for the svhn convnet).
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	net, err := layers.NewNet(dt, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := build(net)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.NewTrainer(m, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	opt := samplers.NewAdam(1e-3)
	idx := make([]int, batch)
	for i := range idx {
		idx[i] = i
	}
	if _, err := tr.Step(context.Background(), opt, ds, idx, rand.New(rand.NewPCG(3, 4))); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(tr)
	runtime.KeepAlive(opt)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestEstimatesMatchMeasuredMemory holds EstimateMLPBytes and EstimateConvNetBytes to
// between 0.8 and 2 times the heap a model retains after one training step: never an
// underestimate by more than 20%, never an overestimate by more than a factor of 2.
func TestEstimatesMatchMeasuredMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and steps four models")
	}
	type tc struct {
		name     string
		ds       *datasets.Dataset
		batch    int
		dt       tensor.Dtype
		build    func(net *layers.Net) (layers.Model, error)
		estimate int64
	}
	mlp := func(in int, hidden []int, out int) func(net *layers.Net) (layers.Model, error) {
		return func(net *layers.Net) (layers.Model, error) {
			return layers.NewMLP(net, "mlp", layers.MLPConfig{In: in, Hidden: hidden, Out: out})
		}
	}
	mnist := layers.ConvNetConfig{Filters: 6, Kernel: 3, Padding: layers.Same, Blocks: 2}
	svhn := layers.ConvNetConfig{Filters: 4, Kernel: 3, Padding: layers.Valid, Blocks: 2, Units: 128, Dropout: 0.2, FinalDropout: 0.3}
	cases := []tc{
		{"mlp-784-512-256-f64", randomData(128, 10, 784), 128, tensor.Float64, mlp(784, []int{512, 256}, 10),
			layers.EstimateMLPBytes(784, []int{512, 256}, 10, 128, tensor.Float64)},
		{"mlp-64-1024x3-f32-batch512", randomData(512, 10, 64), 512, tensor.Float32, mlp(64, []int{1024, 1024, 1024}, 10),
			layers.EstimateMLPBytes(64, []int{1024, 1024, 1024}, 10, 512, tensor.Float32)},
		{"mnist-convnet-f32", randomData(64, 10, 1, 28, 28), 64, tensor.Float32,
			func(net *layers.Net) (layers.Model, error) { return layers.NewMNISTConvNet(net, mnist) },
			layers.EstimateConvNetBytes(mnist, false, 64, tensor.Float32)},
		{"svhn-convnet-f32", randomData(32, 10, 3, 32, 32), 32, tensor.Float32,
			func(net *layers.Net) (layers.Model, error) { return layers.NewSVHNConvNet(net, svhn) },
			layers.EstimateConvNetBytes(svhn, true, 32, tensor.Float32)},
	}
	for _, c := range cases {
		got := measureStep(t, c.ds, c.batch, c.build, c.dt)
		ratio := float64(c.estimate) / float64(got)
		t.Logf("%s: estimate %d B, measured %d B, ratio %.2f", c.name, c.estimate, got, ratio)
		if ratio < 0.8 || ratio > 2 {
			t.Errorf("%s: estimate %d B is %.2f times the measured %d B; want 0.8 to 2", c.name, c.estimate, ratio, got)
		}
	}
}

func TestEstimatesScaleAndRefuse(t *testing.T) {
	a := layers.EstimateMLPBytes(10, []int{100}, 3, 32, tensor.Float64)
	b := layers.EstimateMLPBytes(10, []int{100}, 3, 64, tensor.Float64)
	c := layers.EstimateMLPBytes(10, []int{100}, 3, 32, tensor.Float32)
	if !(b > a) || c*2 != a && c*2 != a-1 && c*2 != a+1 {
		t.Errorf("batch 32 %d, batch 64 %d, float32 %d", a, b, c)
	}
	// Kernel 6 three times on 28×28 without padding vanishes: NewMNISTConvNet refuses it.
	if e := layers.EstimateConvNetBytes(layers.ConvNetConfig{Filters: 2, Kernel: 6, Blocks: 3}, false, 8, tensor.Float32); e != 0 {
		t.Errorf("vanishing architecture estimated at %d", e)
	}
}

// TestRecordEstimatesScaleAndRefuse: the record's estimate grows with its rows and with a
// validation gradient to compute, is several times the training's for a one-hot table's
// wide MLP (the OpenML protocol's), and refuses what the training's estimate refuses.
func TestRecordEstimatesScaleAndRefuse(t *testing.T) {
	rows := layers.RecordRows{Train: 256, Val: 256, N: 1000, Batch: 64}
	base := layers.EstimateMLPRecordBytes(300, []int{128}, 3, rows, tensor.Float32)
	fewer, noVal, oneBatch := rows, rows, rows
	fewer.Train, noVal.Val, oneBatch.Batch = 64, 0, 0
	if e := layers.EstimateMLPRecordBytes(300, []int{128}, 3, fewer, tensor.Float32); !(e < base) {
		t.Errorf("64 rows %d, 256 rows %d", e, base)
	}
	if e := layers.EstimateMLPRecordBytes(300, []int{128}, 3, noVal, tensor.Float32); !(e < base) {
		t.Errorf("without a validation gradient %d, with %d", e, base)
	}
	if e := layers.EstimateMLPRecordBytes(300, []int{128}, 3, oneBatch, tensor.Float32); !(e > base) {
		t.Errorf("μ in one batch of 1,000 rows %d, in batches of 64 %d", e, base)
	}
	wide := []int{1024, 1024, 1024, 1024}
	training := layers.EstimateMLPBytes(5000, wide, 1, 256, tensor.Float32)
	if record := layers.EstimateMLPRecordBytes(5000, wide, 1, rows, tensor.Float32); record < 2*training {
		t.Errorf("5,000 one-hot inputs, 4×1024: record %d B, training %d B", record, training)
	}
	if e := layers.EstimateConvNetRecordBytes(layers.ConvNetConfig{Filters: 2, Kernel: 6, Blocks: 3}, false, rows, tensor.Float32); e != 0 {
		t.Errorf("vanishing architecture's record estimated at %d", e)
	}
}
