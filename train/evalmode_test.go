package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bnModel's logits are its inputs through one batch-norm layer (γ = 1, β = 0): which class
// wins is then a closed form of the batch's statistics.
type bnModel struct {
	net *layers.Net
	bn  *layers.BatchNorm
}

func (m *bnModel) Net() *layers.Net { return m.net }
func (m *bnModel) Logits(x *G.Node, p *layers.Pass) (*G.Node, error) {
	return m.bn.Forward(x, p)
}

// bnAccuracy is the training-mode accuracy of bnModel in batches of batch rows, by hand: each
// feature standardized by its batch's mean and biased variance (ε 1e-5), the argmax taken.
func bnAccuracy(d *datasets.Dataset, batch int) float64 {
	correct := 0
	for start := 0; start < d.N; start += batch {
		end := min(start+batch, d.N)
		n := float64(end - start)
		mean, vari := make([]float64, d.D), make([]float64, d.D)
		for i := start; i < end; i++ {
			for j := range d.D {
				mean[j] += d.X[i*d.D+j] / n
			}
		}
		for i := start; i < end; i++ {
			for j := range d.D {
				vari[j] += math.Pow(d.X[i*d.D+j]-mean[j], 2) / n
			}
		}
		for i := start; i < end; i++ {
			best, arg := math.Inf(-1), 0
			for j := range d.D {
				if z := (d.X[i*d.D+j] - mean[j]) / math.Sqrt(vari[j]+1e-5); z > best {
					best, arg = z, j
				}
			}
			if arg == d.Y[i] {
				correct++
			}
		}
	}
	return float64(correct) / float64(d.N)
}

// TestEvaluatorTrainingMode checks NewEvaluatorMode in training mode against the closed form
// (each batch normalized by its own statistics, so that the batch size changes the accuracy)
// and that eval mode reads the running statistics instead.
func TestEvaluatorTrainingMode(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, k = 40, 3
	d := &datasets.Dataset{Name: "bn", N: n, D: k, Shape: []int{k}, Classes: []string{"a", "b", "c"}}
	for i := range n {
		c := rng.IntN(k)
		for j := range k {
			// Feature j's scale grows with j, so raw argmax and standardized argmax disagree.
			d.X = append(d.X, float64(j+1)*rng.NormFloat64()+map[bool]float64{true: 0.8}[j == c]+float64(i%4))
		}
		d.Y = append(d.Y, c)
	}
	net, err := layers.NewNet(tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	bn, err := layers.NewBatchNorm(net, "bn", k, layers.BatchNormConfig{Eps: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	m := &bnModel{net: net, bn: bn}
	accs := map[int]float64{}
	for _, batch := range []int{4, 10, 0} {
		e, err := NewEvaluatorMode(m, d, k, batch, layers.Train)
		if err != nil {
			t.Fatal(err)
		}
		acc, _, err := e.Evaluate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := bnAccuracy(d, map[bool]int{true: n}[batch == 0]+batch)
		if math.Abs(acc-want) > 1e-12 {
			t.Errorf("training mode, batch %d: accuracy %v, want %v", batch, acc, want)
		}
		accs[batch] = acc
	}
	if accs[4] == accs[0] {
		t.Errorf("training mode: batches of 4 and the whole set give the same accuracy %v; the test data do not tell them apart", accs[4])
	}
	// Eval mode standardizes by the running statistics (mean 0, variance 1 when new): the raw
	// argmax, whatever the batch.
	e, err := NewEvaluatorMode(m, d, k, 4, layers.Eval)
	if err != nil {
		t.Fatal(err)
	}
	acc, _, err := e.Evaluate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw := 0
	for i := range n {
		best, arg := math.Inf(-1), 0
		for j := range k {
			if v := d.X[i*k+j]; v > best {
				best, arg = v, j
			}
		}
		if arg == d.Y[i] {
			raw++
		}
	}
	if want := float64(raw) / n; acc != want {
		t.Errorf("eval mode: accuracy %v, want the raw argmax's %v", acc, want)
	}
	if _, err := NewEvaluatorMode(nil, d, k, 4, layers.Train); err == nil {
		t.Error("a nil model accepted")
	}
}
