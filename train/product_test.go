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
		products, h := fitWithProducts(t, fmt.Sprintf("batch %d", batch), ds, val, cfg, 3e-3, nil)
		if steps := len(h.Epochs) * ((70 + batch - 1) / batch); products != steps {
			t.Fatalf("batch %d: %d products in %d steps", batch, products, steps)
		}
	}
}

// fitWithProducts fits an MLP 24-512-512-3 (its 512×512 layer the one large enough to be left:
// graph's productMinSize) with Keras's Adam at learning rate lr twice, the optimizer taking
// products and not, its weights set by set (nil: as initialized), and fails the test unless
// both give the same history and weights to the bit; it returns the products handed over and
// the history.
func fitWithProducts(t *testing.T, name string, ds, val *datasets.Dataset, cfg Config, lr float64, set func(*layers.Net)) (int, *History) {
	t.Helper()
	fit := func(opt samplers.Optimizer) ([]float64, *History) {
		net, err := layers.NewNet(tensor.Float32, 3)
		if err != nil {
			t.Fatal(err)
		}
		m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 24, Hidden: []int{512, 512}, Out: 3})
		if err != nil {
			t.Fatal(err)
		}
		if set != nil {
			set(net)
		}
		h, err := Fit(context.Background(), m, opt, ds, val, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return weights(m), h
	}
	counted := &countProducts{Adam: samplers.NewKerasAdam(lr)}
	got, hGot := fit(counted)
	want, hWant := fit(noRows{samplers.NewKerasAdam(lr)})
	if fmt.Sprint(hGot) != fmt.Sprint(hWant) {
		t.Fatalf("%s: history %v with products, %v without", name, hGot, hWant)
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: weight %d is %v with products, %v without", name, i, got[i], want[i])
		}
	}
	return counted.products, hWant
}

// TestFitUnprovedProduct: a weight gradient the Program left uncomputed but cannot prove finite
// from its operands (graph.Program.Finite) is computed by the Program and handed over as any
// other, not as a product. Each batch has two rows of each of two kinds: x = 1 of class 0, on
// which the net's first hidden layer outputs h (2⁶²) and whose logits' gradient is zero (softmax
// puts all on class 0), and x = 2⁻⁶⁰ of class 1, on which it outputs h·2⁻⁶⁰ and the second
// layer's gradient is 2⁶³. So the 512×512 layer's operands, its inputs and their gradients,
// bound its gradient's sums at 2·4·h·2⁶³ = 2¹²⁸, past what Finite accepts, while the sums
// themselves are 2⁶⁶ (Adam's moments of them finite) and the loss 2¹⁴; a learning rate of
// 2⁻⁸⁰ keeps the net so through the fit. With h = 2⁶⁰ the bound holds and every step hands the
// product over, so that the scale alone decides.
func TestFitUnprovedProduct(t *testing.T) {
	const n, batch = 8, 4
	cfg := Config{Epochs: 2, BatchSize: batch, Seed: 4, Sequential: true}
	for _, tc := range []struct {
		log2H    int // log2 of the first hidden layer's outputs on x = 1
		products int // products handed over in the fit
	}{{62, 0}, {60, 2 * n / batch}} {
		ds := &datasets.Dataset{Name: "two rows", N: n, D: 24, Shape: []int{24}, X: make([]float64, n*24), Y: make([]int, n)}
		for r := range n {
			x := 1.0
			if r%2 == 1 {
				x, ds.Y[r] = 0x1p-60, 1+r%4/3 // classes 1 and 2 (three logits)
			}
			for j := range 24 {
				ds.X[r*24+j] = x
			}
		}
		name := fmt.Sprintf("h = 2^%d", tc.log2H)
		products, hist := fitWithProducts(t, name, ds, nil, cfg, 0x1p-80, func(net *layers.Net) {
			h := math.Ldexp(1, tc.log2H)
			for _, p := range net.Params() {
				w := p.Value.Data().([]float32)
				clear(w) // biases 0
				switch s := p.Value.Shape(); {
				case s.Eq(tensor.Shape{24, 512}):
					fill(w, h/24)
				case s.Eq(tensor.Shape{512, 512}):
					fill(w, 1/(512*h)) // the second hidden layer outputs 1 on x = 1
				case s.Eq(tensor.Shape{512, 3}):
					for i := 0; i < len(w); i += 3 {
						w[i] = 0x1p65 // class 0's logit; dh₂ = 2⁶⁵/batch on class 1 and 2 rows
					}
				}
			}
		})
		if products != tc.products {
			t.Fatalf("%s: %d products handed over, want %d", name, products, tc.products)
		}
		for _, e := range hist.Epochs {
			if e.Loss == 0 || math.IsInf(e.Loss, 0) || math.IsNaN(e.Loss) {
				t.Fatalf("%s: the fit's loss is %v: the test's premise fails", name, e.Loss)
			}
		}
	}
}

func fill(w []float32, x float64) {
	for i := range w {
		w[i] = float32(x)
	}
}
