package datasets_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/datasets"
)

// A stratified train/validation/test split of an embedded dataset, standardized with the
// training statistics.
func ExampleLoadEmbedded() {
	iris, err := datasets.LoadEmbedded("iris")
	if err != nil {
		panic(err)
	}
	parts, err := datasets.Split(iris, rand.New(rand.NewPCG(1, 0)), 0.6, 0.2, 0.2)
	if err != nil {
		panic(err)
	}
	std, err := datasets.FitStandardizer(parts[0])
	if err != nil {
		panic(err)
	}
	train, _ := std.Transform(parts[0])
	val, _ := std.Transform(parts[1])
	fmt.Println(train.N, val.N, train.D, parts[0].ClassCounts(), parts[1].ClassCounts())
	// Output: 90 30 4 [30 30 30] [10 10 10]
}

// The OpenML experiments' preprocessing: one-hot encode every column, fitted on the
// training split, then scale each row to unit L2 norm.
func ExampleFitOneHotEncoder() {
	train := &datasets.Dataset{Name: "toy", N: 3, D: 2, Shape: []int{2}, X: []float64{1, 10, 2, 10, 1, 20}, Y: []int{0, 1, 0}}
	test := &datasets.Dataset{Name: "toy", N: 1, D: 2, Shape: []int{2}, X: []float64{2, 30}, Y: []int{1}}
	enc, err := datasets.FitOneHotEncoder(train)
	if err != nil {
		panic(err)
	}
	t, _ := enc.Transform(test) // 30 was never seen in training: all zeros
	t, _ = datasets.NormalizeRows(t)
	fmt.Println(enc.Dim(), t.X)
	// Output: 4 [0 1 0 0]
}

// Mini-batch indices of one epoch, shuffled by a seeded generator.
func ExampleBatches() {
	batches, err := datasets.Batches(5, 2, rand.New(rand.NewPCG(7, 0)))
	if err != nil {
		panic(err)
	}
	n := 0
	for b := range batches {
		n += len(b)
	}
	fmt.Println(n)
	// Output: 5
}

// Load reads a registry dataset from the data directory chosen by a --data flag, the
// HYPERFLAT_DATA environment variable or the default; a missing file says where to get it.
func ExampleLoad() {
	dir := datasets.ResolveDir("/nonexistent")
	_, _, err := datasets.Load(context.Background(), "kc1", dir)
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	fmt.Println(err)
	// Output:
	// true
	// kc1: /nonexistent/openml_hpobench/kc1/kc1.arff not found; download kc1.arff (169,887 bytes, sha256 82fa208e6fc2c3b96072401c11c077897f713d8d93f7ad4cda89b8e4636bb5c0) from http://promise.site.uottawa.ca/SERepository/datasets/kc1.arff and place it there, or set --data-dir / HYPERFLAT_DATA to a directory that has it
}
