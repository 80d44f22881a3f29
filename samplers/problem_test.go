package samplers_test

import (
	"context"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gauss is the empirical risk R̂(θ) = (1/n) Σ_i ½‖θ − x_i‖²/s² of n points x_i in R^d,
// with θ split into tensors of the given shapes. Its Gibbs law ∝ exp(−βnR̂) is
// N(x̄, s²/(βn)·I). Gradients come back in reused buffers, as a graph program's do.
type gauss[T graph.Float] struct {
	xs     [][]float64
	s2     float64
	shapes [][]int
	grads  []G.Value
	mean   []float64 // scratch
	full   []float64 // mean of all the data, for full batches
}

func newGauss[T graph.Float](xs [][]float64, s2 float64, shapes ...[]int) *gauss[T] {
	p := &gauss[T]{xs: xs, s2: s2, shapes: shapes}
	for _, sh := range shapes {
		p.grads = append(p.grads, tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(sh...)))
		if _, ok := any(T(0)).(float32); ok {
			p.grads[len(p.grads)-1] = tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(sh...))
		}
	}
	return p
}

// gaussData draws n points in R^d around the given mean with unit spread.
func gaussData(rng *rand.Rand, n int, mean []float64) [][]float64 {
	xs := make([][]float64, n)
	for i := range xs {
		xs[i] = make([]float64, len(mean))
		for j := range mean {
			xs[i][j] = mean[j] + rng.NormFloat64()
		}
	}
	return xs
}

func (p *gauss[T]) N() int { return len(p.xs) }

// params returns θ = 0 in p's shapes.
func (p *gauss[T]) params() []*tensor.Dense {
	var ps []*tensor.Dense
	for _, sh := range p.shapes {
		size := 1
		for _, s := range sh {
			size *= s
		}
		ps = append(ps, dense[T](make([]float64, size), sh...))
	}
	return ps
}

// grad writes (θ − mean of x over batch)/s² into p.grads.
func (p *gauss[T]) grad(params []*tensor.Dense, batch []int) ([]G.Value, error) {
	if p.mean == nil {
		p.mean = make([]float64, len(p.xs[0]))
		p.full = make([]float64, len(p.xs[0]))
		for _, x := range p.xs {
			for k := range x {
				p.full[k] += x[k] / float64(len(p.xs))
			}
		}
	}
	mean := p.full
	if len(batch) != len(p.xs) {
		mean = p.mean
		clear(mean)
		for _, b := range batch {
			for k, x := range p.xs[b] {
				mean[k] += x / float64(len(batch))
			}
		}
	}
	k := 0
	for i, pt := range params {
		th, err := graph.Elements[T](pt)
		if err != nil {
			return nil, err
		}
		g, err := graph.Elements[T](p.grads[i])
		if err != nil {
			return nil, err
		}
		for j := range th {
			g[j] = T((float64(th[j]) - mean[k]) / p.s2)
			k++
		}
	}
	return p.grads, nil
}

func (p *gauss[T]) Grad(_ context.Context, params []*tensor.Dense, batch []int) ([]G.Value, error) {
	return p.grad(params, batch)
}

func (p *gauss[T]) ExampleGrad(_ context.Context, params []*tensor.Dense, i int) ([]G.Value, error) {
	return p.grad(params, []int{i})
}
