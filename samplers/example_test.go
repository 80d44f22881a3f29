package samplers_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// meanProblem is R̂(θ) = (1/n) Σ_i ½(θ − x_i)², whose Gibbs law exp(−βnR̂) is
// N(mean x, 1/(βn)).
type meanProblem struct {
	xs   []float64
	grad *tensor.Dense // reused, as a graph program's result would be
}

func (p *meanProblem) N() int { return len(p.xs) }

func (p *meanProblem) Grad(_ context.Context, params []*tensor.Dense, batch []int) ([]G.Value, error) {
	var m float64
	for _, i := range batch {
		m += p.xs[i]
	}
	m /= float64(len(batch))
	p.grad.Float64s()[0] = params[0].Float64s()[0] - m
	return []G.Value{p.grad}, nil
}

// Four SGLD chains sample N(2, 1/(βn)) = N(2, 0.25); the callback sees every iterate.
func ExampleRunChains() {
	xs := []float64{1, 3, 2, 2.5, 1.5, 2, 2, 2.2, 1.8, 2} // mean 2
	cfg := samplers.ChainConfig{
		Method: samplers.MethodSGLD, Chains: 4, Steps: 20000, Batch: 5, Shuffle: true,
		Eta: 0.01, Beta: 0.4, // βn = 4
		Seed: 1, Workers: 2,
	}
	var sum, sum2 [4]float64 // one slot per chain: chains may run concurrently
	err := samplers.RunChains(context.Background(), cfg,
		func(chain int) (samplers.Problem, error) {
			return &meanProblem{xs: xs, grad: tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{0}))}, nil
		},
		func(chain int, rng *rand.Rand) ([]*tensor.Dense, error) {
			return []*tensor.Dense{tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{rng.NormFloat64()}))}, nil
		},
		func(chain, t int, params []*tensor.Dense) error {
			if t >= 1000 { // burn-in
				θ := params[0].Float64s()[0]
				sum[chain] += θ
				sum2[chain] += θ * θ
			}
			return nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	var s, s2 float64
	for c := range sum {
		s, s2 = s+sum[c], s2+sum2[c]
	}
	n := 4 * 19001.0
	fmt.Printf("mean %.1f, variance / 0.25 = %.1f\n", s/n, (s2/n-(s/n)*(s/n))/0.25)
	// Output: mean 2.0, variance / 0.25 = 1.0
}

// Adam steps any list of tensors, such as hyperparameters.
func ExampleAdam() {
	lambda := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, -1}))
	opt := samplers.NewAdam(0.1)
	for range 3 {
		g := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, 0.5}))
		if err := opt.Step([]*tensor.Dense{lambda}, []G.Value{g}); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Printf("%.4f\n", lambda.Float64s()) // each step moves by ≈ lr against the sign
	// Output: [0.7000 -1.3000]
}

// The privacy of 1000 full-batch DP-SGLD steps on 10,000 examples.
func ExampleAccountant() {
	a := samplers.Accountant{Eta: 0.1, Beta: 1, N: 10000, Batch: 10000, Clip: 1}
	// c = T·η·β·n·L²/b² = 1000·0.1·1·1e4·1/1e8 = 0.01, so ε = 0.01 + 2√(0.01·log 1e5).
	eps, alpha, _ := a.Epsilon(1000, 1e-5)
	fmt.Printf("ε = %.4f at Rényi order α = %.1f\n", eps, alpha)
	// Output: ε = 0.6886 at Rényi order α = 34.9
}
