package convexity

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/search"
	"gorgonia.org/tensor"
)

// memData is n rows of the given shape in k classes: Gaussian entries, or with oneHot 20
// ones a row among zeros (a one-hot table's rows, as OpenML's nominal columns give).
func memData(seed uint64, n, k int, oneHot bool, shape ...int) *datasets.Dataset {
	d := 1
	for _, s := range shape {
		d *= s
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	ds := &datasets.Dataset{Name: "mem", N: n, D: d, Shape: shape, X: make([]float64, n*d), Y: make([]int, n)}
	for c := 0; c < k; c++ {
		ds.Classes = append(ds.Classes, string(rune('a'+c)))
	}
	for i := 0; i < n; i++ {
		row := ds.X[i*d : (i+1)*d]
		for j := range row {
			if oneHot {
				if j < 20 {
					row[rng.IntN(d)] = 1
				}
			} else {
				row[j] = rng.NormFloat64()
			}
		}
		ds.Y[i] = i % k
	}
	return ds
}

// measureRecord returns the heap the white-box record of m under task (Whitebox options
// opt) holds at its peak: the record built, one iterate of the regularizer sampled, then
// finished (μ, trace, top eigenvalue) as Task.Evaluate does. The record's programs take
// every buffer from recordPool and give it back when finished, and μ's passes give theirs
// back before the curvature's estimates, its peak; so with a fresh pool of room enough —
// set here, whatever earlier tests left in the process's — every buffer the record holds at
// its peak is in the pool after it, and the rest (the rows it bound to the model's graph,
// the graph's new nodes) is held by the model. The heap retained after finish, less the heap
// before, is then the record's peak. As in layers' TestEstimatesMatchMeasuredMemory, the
// collector is off meanwhile, so that the graph's workspace pools (sync.Pool) are measured
// full, not emptied part way by a collection's timing; two collections before empty them of
// what earlier tests left.
func measureRecord(t *testing.T, task *Task, m layers.FeatureModel, opt WhiteboxOptions, batch int) int64 {
	t.Helper()
	saved := recordPool
	defer func() { recordPool = saved }()
	recordPool = graph.NewPool(recordPoolBytes)
	o, err := opt.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	gc := debug.SetGCPercent(-1)
	r, err := newRecorder(task, m, o, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.strideFor(batch)
	if r.follows() {
		if err := r.beforeStep(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.finish(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	debug.SetGCPercent(gc)
	runtime.GC()
	runtime.ReadMemStats(&after)
	// the model and the task's data, made before, must not be collected after the record
	runtime.KeepAlive(m)
	runtime.KeepAlive(task)
	if recordPool.Bytes() == 0 {
		t.Fatal("the record gave its buffers back to another pool than the one measured")
	}
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestRecordEstimatesMatchMeasuredMemory holds layers.EstimateMLPRecordBytes and
// EstimateConvNetRecordBytes to between 0.8 and 2 times the heap a record holds at its peak
// (measureRecord), as the training's estimates are held: MLPs of a few hundred Gaussian
// inputs and of 2,000 one-hot ones, float64 and float32, with and without a validation
// gradient (a task validating on its training data), and both convnets.
func TestRecordEstimatesMatchMeasuredMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("records six models")
	}
	type tc struct {
		name     string
		train    *datasets.Dataset
		val      *datasets.Dataset // nil: the training data
		batch    int
		rows     int
		loss     losses.Kind
		dt       tensor.Dtype
		build    func(net *layers.Net) (layers.FeatureModel, error)
		estimate func(rows layers.RecordRows) int64
	}
	mlp := func(in int, hidden []int, out int) (func(net *layers.Net) (layers.FeatureModel, error), func(layers.RecordRows, tensor.Dtype) int64) {
		return func(net *layers.Net) (layers.FeatureModel, error) {
				return layers.NewMLP(net, "mlp", layers.MLPConfig{In: in, Hidden: hidden, Out: out})
			}, func(r layers.RecordRows, dt tensor.Dtype) int64 {
				return layers.EstimateMLPRecordBytes(in, hidden, out, r, dt)
			}
	}
	dense, denseEst := mlp(300, []int{128, 128}, 3)
	wide, wideEst := mlp(2000, []int{256}, 1)
	mnist := layers.ConvNetConfig{Filters: 6, Kernel: 3, Padding: layers.Same, Blocks: 2}
	svhn := layers.ConvNetConfig{Filters: 4, Kernel: 3, Padding: layers.Valid, Blocks: 2, Units: 128, Dropout: 0.2, FinalDropout: 0.3}
	cases := []tc{
		{"mlp-300-128x2-f64", memData(1, 600, 3, false, 300), memData(2, 300, 3, false, 300), 64, 0, losses.Multiclass, tensor.Float64, dense,
			func(r layers.RecordRows) int64 { return denseEst(r, tensor.Float64) }},
		{"mlp-300-128x2-f32-no-val", memData(1, 600, 3, false, 300), nil, 100, 0, losses.Multiclass, tensor.Float32, dense,
			func(r layers.RecordRows) int64 { return denseEst(r, tensor.Float32) }},
		{"mlp-onehot2000-256-binary-f32", memData(3, 500, 2, true, 2000), memData(4, 200, 2, true, 2000), 32, 0, losses.Binary, tensor.Float32, wide,
			func(r layers.RecordRows) int64 { return wideEst(r, tensor.Float32) }},
		{"mnist-convnet-f32", memData(5, 80, 10, false, 1, 28, 28), memData(6, 40, 10, false, 1, 28, 28), 64, 32, losses.Multiclass, tensor.Float32,
			func(net *layers.Net) (layers.FeatureModel, error) { return layers.NewMNISTConvNet(net, mnist) },
			func(r layers.RecordRows) int64 {
				return layers.EstimateConvNetRecordBytes(mnist, false, r, tensor.Float32)
			}},
		{"svhn-convnet-f32", memData(7, 80, 10, false, 3, 32, 32), memData(8, 40, 10, false, 3, 32, 32), 64, 32, losses.Multiclass, tensor.Float32,
			func(net *layers.Net) (layers.FeatureModel, error) { return layers.NewSVHNConvNet(net, svhn) },
			func(r layers.RecordRows) int64 {
				return layers.EstimateConvNetRecordBytes(svhn, true, r, tensor.Float32)
			}},
	}
	for _, c := range cases {
		net, err := layers.NewNet(c.dt, 1)
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.build(net)
		if err != nil {
			t.Fatal(err)
		}
		task := &Task{Train: c.train, Val: c.val, Loss: c.loss, Whitebox: &WhiteboxOptions{Rows: c.rows}}
		if c.val == nil {
			task.Val = c.train
		}
		rows, err := task.RecordRows(c.batch)
		if err != nil {
			t.Fatal(err)
		}
		est := c.estimate(rows)
		got := measureRecord(t, task, m, *task.Whitebox, c.batch)
		ratio := float64(est) / float64(got)
		t.Logf("%s: estimate %d B, measured %d B, ratio %.2f (rows %+v)", c.name, est, got, ratio, rows)
		if ratio < 0.8 || ratio > 2 {
			t.Errorf("%s: estimate %d B is %.2f times the measured %d B; want 0.8 to 2", c.name, est, ratio, got)
		}
	}
}

// TestMemoryLimitCountsTheRecord: a task whose Estimate counts the record (as Estimate's
// doc asks, through RecordRows) and whose limit lies between the training's estimate and
// the training's with the record is refused, before the model is built (with folds, before
// they are trained), with a reason that names the record; without the record the same
// configuration trains.
func TestMemoryLimitCountsTheRecord(t *testing.T) {
	task := tinyTask(nil)
	builds := 0
	build := task.Build
	task.Build = func(cfg search.Config, s uint64) (*Candidate, error) {
		builds++
		return build(cfg, s)
	}
	const batch = 8 // tinyTask's 4-4-3 MLP
	training := layers.EstimateMLPBytes(4, []int{4}, 3, batch, tensor.Float64)
	task.Estimate = func(search.Config) (int64, error) {
		rows, err := task.RecordRows(batch)
		if err != nil || task.Whitebox == nil {
			return training, err
		}
		return training + layers.EstimateMLPRecordBytes(4, []int{4}, 3, rows, tensor.Float64), nil
	}
	task.Whitebox = &WhiteboxOptions{}
	with, err := task.Estimate(search.Config{})
	if err != nil || with <= training {
		t.Fatalf("with the record %d B (%v), without %d B", with, err, training)
	}
	task.MaxBytes = (training + with) / 2
	cfg := search.Config{Space: task.Space, Values: []float64{0.02}}
	e := task.Evaluate(context.Background(), cfg, 1)
	if !errors.Is(e.Err, ErrTooBig) || builds != 0 {
		t.Fatalf("recorded: err %v after %d builds; want ErrTooBig before any", e.Err, builds)
	}
	for _, want := range []string{"white-box record", "--whitebox", "--max-mem", FormatBytes(with)} {
		if !strings.Contains(e.Err.Error(), want) {
			t.Errorf("%q lacks %q", e.Err, want)
		}
	}
	// Cross-validated, the final training's record refuses the configuration before the
	// folds, which record nothing and fit, are trained.
	fold := tinyTask(nil)
	fold.Build, fold.MaxBytes = task.Build, task.MaxBytes
	fold.Estimate = func(search.Config) (int64, error) { return training, nil }
	task.Folds = []*Task{fold}
	if e := task.Evaluate(context.Background(), cfg, 1); !errors.Is(e.Err, ErrTooBig) || builds != 0 {
		t.Errorf("with folds: err %v after %d builds; want ErrTooBig before any", e.Err, builds)
	}
	task.Folds = nil
	task.Whitebox = nil
	if e := task.Evaluate(context.Background(), cfg, 1); e.Err != nil || builds != 1 {
		t.Errorf("without the record: err %v after %d builds", e.Err, builds)
	}
}
