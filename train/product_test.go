package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	"gorgonia.org/tensor"
)

// countProducts is Adam counting the gradients it was given as products.
type countProducts struct {
	*samplers.Adam
	products int
}

func (o *countProducts) TellProducts(prods []samplers.Product) {
	for _, p := range prods {
		if p.A != nil {
			o.products++
		}
	}
	o.Adam.TellProducts(prods)
}

// TestFitProducts: on dense inputs at small batches Fit leaves the weight gradient of a large
// hidden layer to Adam as a product (graph.Program.DeferProduct) at every step, the last short
// batch of each epoch too, and trains the weights and history of the same fit with every
// gradient computed, to the bit.
func TestFitProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	table := func(n int) *datasets.Dataset {
		ds := &datasets.Dataset{Name: "dense", N: n, D: 24, Shape: []int{24}, X: make([]float64, n*24), Y: make([]int, n)}
		for i := range ds.X {
			ds.X[i] = rng.NormFloat64()
		}
		for i := range ds.Y {
			ds.Y[i] = rng.IntN(3)
		}
		return ds
	}
	ds, val := table(70), table(30)
	for _, batch := range []int{4, 8} {
		cfg := Config{Epochs: 3, BatchSize: batch, Seed: 4, Early: &EarlyStopping{Patience: 1, RestoreBest: true}}
		fit := func(opt samplers.Optimizer) ([]float64, *History) {
			net, err := layers.NewNet(tensor.Float32, 3)
			if err != nil {
				t.Fatal(err)
			}
			// the 512×512 layer is the one large enough to be left (graph's productMinSize)
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 24, Hidden: []int{512, 512}, Out: 3})
			if err != nil {
				t.Fatal(err)
			}
			h, err := Fit(context.Background(), m, opt, ds, val, cfg)
			if err != nil {
				t.Fatal(err)
			}
			return weights(m), h
		}
		counted := &countProducts{Adam: samplers.NewKerasAdam(3e-3)}
		got, hGot := fit(counted)
		want, hWant := fit(noRows{samplers.NewKerasAdam(3e-3)})
		if steps := len(hWant.Epochs) * ((70 + batch - 1) / batch); counted.products != steps {
			t.Fatalf("batch %d: %d products in %d steps", batch, counted.products, steps)
		}
		if fmt.Sprint(hGot) != fmt.Sprint(hWant) {
			t.Fatalf("batch %d: history %v with products, %v without", batch, hGot, hWant)
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("batch %d: weight %d is %v with products, %v without", batch, i, got[i], want[i])
			}
		}
	}
}
