package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func oneHotTable(rng *rand.Rand, n, d, perRow int) *datasets.Dataset {
	ds := &datasets.Dataset{Name: "onehot", N: n, D: d, Shape: []int{d}, X: make([]float64, n*d), Y: make([]int, n)}
	for i := 0; i < n; i++ {
		for _, j := range rng.Perm(d)[:perRow] {
			ds.X[i*d+j] = 1 / float64(perRow) * (1 + rng.Float64())
		}
		ds.Y[i] = rng.IntN(3)
	}
	return ds
}

// Sparse batches are the dense batches: over a sequence of fills of one program, from a
// sparse table, a dense one and the sparse one again.
func TestSparseFillMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sparse := oneHotTable(rng, 60, 200, 5)
	denseDS := &datasets.Dataset{Name: "dense", N: 60, D: 200, Shape: []int{200}, X: make([]float64, 60*200), Y: make([]int, 60)}
	for i := range denseDS.X {
		denseDS.X[i] = rng.NormFloat64()
	}
	var c DataCache
	if c.sparseRows(sparse) == nil {
		t.Fatal("a table 2.5% full was not compressed")
	}
	if c.sparseRows(denseDS) != nil {
		t.Fatal("a dense table was compressed")
	}
	const b, k = 8, 3
	p := &program{}
	x, y := make([]float32, b*200), make([]float32, b*k)
	for step, ds := range []*datasets.Dataset{sparse, sparse, denseDS, sparse, sparse} {
		idx := rng.Perm(60)[:b]
		fillBatch(p, x, y, ds, c.sparseRows(ds), idx, k)
		wantX, wantY := make([]float32, b*200), make([]float32, b*k)
		fillBatch(&program{}, wantX, wantY, ds, nil, idx, k)
		if !slices.Equal(x, wantX) || !slices.Equal(y, wantY) {
			t.Fatalf("step %d (%s): the batch differs from the dense fill", step, ds.Name)
		}
	}
}

func TestSparseCacheDeclines(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c DataCache
	for _, tc := range []struct {
		name string
		ds   *datasets.Dataset
	}{
		{"narrow", oneHotTable(rng, 30, 40, 1)},
		{"1 in 10 nonzero", oneHotTable(rng, 30, 200, 20)},
	} {
		if c.sparseRows(tc.ds) != nil {
			t.Errorf("%s: compressed", tc.name)
		}
	}
}

// noRows is Adam without StepRows, so the Trainer hands it whole gradients.
type noRows struct{ a *samplers.Adam }

func (o noRows) Step(p []*tensor.Dense, g []G.Value) error { return o.a.Step(p, g) }
func (o noRows) NonFiniteAfterStep() int                   { return o.a.NonFiniteAfterStep() }

// countRows is Adam without deferral, counting the steps whose first-layer gradient came
// with its rows.
type countRows struct {
	a     *samplers.Adam
	known int
}

func (o *countRows) Step(p []*tensor.Dense, g []G.Value) error { return o.a.Step(p, g) }
func (o *countRows) NonFiniteAfterStep() int                   { return o.a.NonFiniteAfterStep() }
func (o *countRows) StepRows(p []*tensor.Dense, g []G.Value, rows [][]int32) error {
	if rows != nil && rows[0] != nil {
		o.known++
	}
	return o.a.StepRows(p, g, rows)
}

// countDeferred is Adam counting the steps that deferred the first layer's other rows and
// the rows it settled.
type countDeferred struct {
	*samplers.Adam
	deferred, settled, settledAll int
}

func (o *countDeferred) StepDeferred(p []*tensor.Dense, g []G.Value, rows [][]int32, lazy []bool) error {
	if lazy[0] {
		o.deferred++
	}
	for _, l := range lazy[1:] {
		if l {
			return fmt.Errorf("a layer after the first deferred")
		}
	}
	return o.Adam.StepDeferred(p, g, rows, lazy)
}

func (o *countDeferred) Settle(p []*tensor.Dense, i int, rows []int32) error {
	if rows == nil {
		o.settledAll++
	} else {
		o.settled += len(rows)
	}
	return o.Adam.Settle(p, i, rows)
}

// TestFitWithGradientRows: on a one-hot table the Trainer hands Adam the rows of the first
// layer's gradient (the inputs each batch has) at every step, and the weights it trains are
// those of the same fit with whole gradients, to the bit.
func TestFitWithGradientRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ds := oneHotTable(rng, 96, 1024, 2)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		fit := func(opt samplers.Optimizer) []float64 {
			m := newMLP(t, dt, 7, 1024, 3)
			if _, err := Fit(context.Background(), m, opt, ds, nil, Config{Epochs: 3, BatchSize: 16, Seed: 8}); err != nil {
				t.Fatal(err)
			}
			return weights(m)
		}
		counted := &countRows{a: samplers.NewKerasAdam(0.01)}
		got, want := fit(counted), fit(noRows{samplers.NewKerasAdam(0.01)})
		if steps := 3 * 96 / 16; counted.known != steps {
			t.Fatalf("%v: %d of %d steps had the first layer's gradient rows", dt, counted.known, steps)
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%v: weight %d is %v with gradient rows, %v without", dt, i, got[i], want[i])
			}
		}
	}
}

// TestFitDeferred: on a one-hot table Fit lets Adam leave the first layer's rows that a
// batch does not select behind, settling them when a batch selects them and at each epoch's
// end, and trains the weights (and validation history, and the weights early stopping
// restores) of the same fit with whole gradients, to the bit.
func TestFitDeferred(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ds := oneHotTable(rng, 112, 1024, 2)
	val := oneHotTable(rng, 40, 1024, 2)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		cfg := Config{Epochs: 4, BatchSize: 16, Seed: 9, Early: &EarlyStopping{Patience: 1, RestoreBest: true}}
		fit := func(opt samplers.Optimizer) ([]float64, *History) {
			net, err := layers.NewNet(dt, 7)
			if err != nil {
				t.Fatal(err)
			}
			// a first layer wide enough to be deferred (samplers' deferMinWidth)
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 1024, Hidden: []int{64}, Out: 3})
			if err != nil {
				t.Fatal(err)
			}
			h, err := Fit(context.Background(), m, opt, ds, val, cfg)
			if err != nil {
				t.Fatal(err)
			}
			return weights(m), h
		}
		counted := &countDeferred{Adam: samplers.NewKerasAdam(0.03)}
		got, hGot := fit(counted)
		want, hWant := fit(noRows{samplers.NewKerasAdam(0.03)})
		steps := len(hWant.Epochs) * 112 / 16
		if counted.deferred != steps || counted.settledAll != len(hWant.Epochs) || counted.settled == 0 {
			t.Fatalf("%v: %d of %d steps deferred, %d rows settled for batches, %d whole settlements in %d epochs", dt, counted.deferred, steps, counted.settled, counted.settledAll, len(hWant.Epochs))
		}
		if fmt.Sprint(hGot) != fmt.Sprint(hWant) {
			t.Fatalf("%v: history %v deferred, %v not", dt, hGot, hWant)
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%v: weight %d is %v deferred, %v not", dt, i, got[i], want[i])
			}
		}
	}
}

// compressRows keeps every nonzero entry (NaN and ±Inf included, −0 not) in row order, on
// rows whose width is not a multiple of the eight it skips at once.
func TestCompressRowsKeepsEveryNonzero(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ds := oneHotTable(rng, 40, 203, 3)
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 5e-324, -1e300}
	for i, v := range specials {
		ds.X[i*37*ds.D/40+i] = v // spread over rows, columns and positions within eight
	}
	ds.X[len(ds.X)-1] = 2 // the last column of the last row, after the last whole eight
	sp := compressRows(ds)
	if sp == nil {
		t.Fatal("a one-hot table was not compressed")
	}
	var ptr []int
	var col []int32
	var val []float64
	ptr = append(ptr, 0)
	for i := 0; i < ds.N; i++ {
		for j, v := range ds.Row(i) {
			if v != 0 || math.IsNaN(v) {
				col, val = append(col, int32(j)), append(val, v)
			}
		}
		ptr = append(ptr, len(col))
	}
	same := func(a, b []float64) bool {
		return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	}
	if !slices.Equal(sp.ptr, ptr) || !slices.Equal(sp.col, col) || !same(sp.val, val) {
		t.Errorf("compressed rows differ from a scan of every entry:\nptr %v\nwant %v\ncol %v\nwant %v", sp.ptr, ptr, sp.col, col)
	}
}

// checkData names the first non-finite feature in row order, whether the Trainer keeps the
// dataset compressed or reads it whole.
func TestCheckDataNamesNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	wide := oneHotTable(rng, 30, 150, 2)
	dense := &datasets.Dataset{Name: "dense", N: 30, D: 150, Shape: []int{150}, X: make([]float64, 30*150), Y: make([]int, 30)}
	for i := range dense.X {
		dense.X[i] = rng.NormFloat64()
	}
	for _, ds := range []*datasets.Dataset{wide, dense} {
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			tr := &Trainer{data: &DataCache{}}
			ds.X[20*150+149] = 1 // rows 9 and 20 both fail; row 9 comes first
			ds.X[9*150+13], ds.X[20*150+5] = bad, bad
			err := tr.checkData(ds, nil, "training")
			if err == nil || !strings.Contains(err.Error(), "row 9, column 13") {
				t.Errorf("%s with %v at row 9, column 13: %v", ds.Name, bad, err)
			}
			if compressed := tr.data.sparseRows(ds) != nil; compressed != (ds == wide) {
				t.Errorf("%s: compressed %v", ds.Name, compressed)
			}
			ds.X[9*150+13], ds.X[20*150+5] = 0.5, 0.5
			if err := (&Trainer{data: &DataCache{}}).checkData(ds, nil, "training"); err != nil {
				t.Errorf("%s, finite: %v", ds.Name, err)
			}
		}
	}
}

// Trainers sharing a DataCache compress a dataset once; a cache given more datasets than it
// keeps starts over rather than growing.
func TestShareData(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ds := oneHotTable(rng, 20, 128, 2)
	c := &DataCache{}
	a, b := &Trainer{data: &DataCache{}}, &Trainer{data: &DataCache{}}
	a.ShareData(c)
	b.ShareData(c)
	b.ShareData(nil) // keeps c
	sa, sb := a.data.sparseRows(ds), b.data.sparseRows(ds)
	if sa == nil || sa != sb || len(c.rows) != 1 {
		t.Fatalf("shared cache: %p and %p, %d entries; want one compression", sa, sb, len(c.rows))
	}
	for range dataCacheSize {
		c.sparseRows(oneHotTable(rng, 2, 64, 1))
	}
	if len(c.rows) > dataCacheSize {
		t.Errorf("the cache holds %d datasets, more than %d", len(c.rows), dataCacheSize)
	}
	if _, ok := c.rows[sparseKey{ds, &ds.X[0], len(ds.X)}]; ok {
		t.Error("the cache kept its first dataset past its size")
	}
}

// TestFitPromisesBatchNonzeros: a fit on a one-hot table, whose Programs are told where each
// batch's nonzeros are, trains the weights (and history) of the same fit whose Programs scan
// every batch for them (the table filled densely), to the bit.
func TestFitPromisesBatchNonzeros(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ds := oneHotTable(rng, 96, 512, 3)
	val := oneHotTable(rng, 40, 512, 3)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		fit := func(dense bool) ([]float64, *History) {
			net, err := layers.NewNet(dt, 7)
			if err != nil {
				t.Fatal(err)
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 512, Hidden: []int{32}, Out: 3})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := NewTrainer(m, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if dense { // the cache says both tables are too full to compress
				tr.data.rows = map[sparseKey]*sparseRows{{ds, &ds.X[0], len(ds.X)}: nil, {val, &val.X[0], len(val.X)}: nil}
			}
			h, err := tr.Fit(context.Background(), noRows{samplers.NewKerasAdam(0.03)}, ds, val, Config{Epochs: 3, BatchSize: 16, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			return weights(m), h
		}
		got, hGot := fit(false)
		want, hWant := fit(true)
		if fmt.Sprint(hGot) != fmt.Sprint(hWant) {
			t.Fatalf("%v: history %v with promised nonzeros, %v scanned", dt, hGot, hWant)
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%v: weight %d is %v with promised nonzeros, %v scanned", dt, i, got[i], want[i])
			}
		}
	}
}

// TestBeforeStepSeesSettledWeights: BeforeStep is called before every StepEvery-th step,
// numbered from 0 across epochs, with the deferred rows settled (the weights it reads are
// those of an undeferred fit at that step), and leaves the training bit for bit as it was.
func TestBeforeStepSeesSettledWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := oneHotTable(rng, 64, 1024, 2)
	fit := func(opt samplers.Optimizer, every int, seen *[][]float64, at *[]int) []float64 {
		net, err := layers.NewNet(tensor.Float64, 7)
		if err != nil {
			t.Fatal(err)
		}
		m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 1024, Hidden: []int{64}, Out: 3})
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Epochs: 2, BatchSize: 16, Seed: 9, StepEvery: every}
		if seen != nil {
			cfg.BeforeStep = func(_ context.Context, step int) error {
				*seen = append(*seen, weights(m))
				*at = append(*at, step)
				return nil
			}
		}
		if _, err := Fit(context.Background(), m, opt, ds, nil, cfg); err != nil {
			t.Fatal(err)
		}
		return weights(m)
	}
	var deferredSeen, wholeSeen [][]float64
	var deferredAt, wholeAt []int
	got := fit(samplers.NewKerasAdam(0.03), 3, &deferredSeen, &deferredAt)
	fit(noRows{samplers.NewKerasAdam(0.03)}, 3, &wholeSeen, &wholeAt)
	want := fit(samplers.NewKerasAdam(0.03), 0, nil, nil)
	if fmt.Sprint(deferredAt) != "[0 3 6]" || fmt.Sprint(wholeAt) != "[0 3 6]" {
		t.Fatalf("BeforeStep at steps %v (deferred) and %v; 8 steps at StepEvery 3 are 0, 3, 6", deferredAt, wholeAt)
	}
	for k := range wholeSeen {
		if fmt.Sprint(deferredSeen[k]) != fmt.Sprint(wholeSeen[k]) {
			t.Fatalf("step %d: the hook saw other weights than an undeferred fit's", wholeAt[k])
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatal("a fit with BeforeStep ended with other weights than one without")
	}
}
