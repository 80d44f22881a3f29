package train

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
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
	var c sparseCache
	if c.rows(sparse) == nil {
		t.Fatal("a table 2.5% full was not compressed")
	}
	if c.rows(denseDS) != nil {
		t.Fatal("a dense table was compressed")
	}
	const b, k = 8, 3
	p := &program{}
	x, y := make([]float32, b*200), make([]float32, b*k)
	for step, ds := range []*datasets.Dataset{sparse, sparse, denseDS, sparse, sparse} {
		idx := rng.Perm(60)[:b]
		fillBatch(p, x, y, ds, c.rows(ds), idx, k)
		wantX, wantY := make([]float32, b*200), make([]float32, b*k)
		fillBatch(&program{}, wantX, wantY, ds, nil, idx, k)
		if !slices.Equal(x, wantX) || !slices.Equal(y, wantY) {
			t.Fatalf("step %d (%s): the batch differs from the dense fill", step, ds.Name)
		}
	}
}

func TestSparseCacheDeclines(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c sparseCache
	for _, tc := range []struct {
		name string
		ds   *datasets.Dataset
	}{
		{"narrow", oneHotTable(rng, 30, 40, 1)},
		{"1 in 10 nonzero", oneHotTable(rng, 30, 200, 20)},
	} {
		if c.rows(tc.ds) != nil {
			t.Errorf("%s: compressed", tc.name)
		}
	}
}
