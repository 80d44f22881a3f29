package samplers_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// moments accumulates per-coordinate sums of θ and θ² over the iterates t ≥ burn of
// every chain; visit is called concurrently for different chains, so each chain has its
// own accumulator.
type moments struct {
	burn      int
	sum, sum2 [][]float64 // [chain][coordinate]
	count     []int
}

func newMoments(chains, burn int) *moments {
	return &moments{burn: burn, sum: make([][]float64, chains), sum2: make([][]float64, chains), count: make([]int, chains)}
}

func (m *moments) visit(c, t int, params []*tensor.Dense) error {
	if t < m.burn {
		return nil
	}
	k := 0
	for _, p := range params {
		var xs []float64
		if p.Dtype() == tensor.Float64 {
			xs = p.Float64s()
		} else {
			var err error
			if xs, err = graph.ToFloat64s(p); err != nil {
				return err
			}
		}
		for _, x := range xs {
			if len(m.sum[c]) <= k {
				m.sum[c] = append(m.sum[c], 0)
				m.sum2[c] = append(m.sum2[c], 0)
			}
			m.sum[c][k] += x
			m.sum2[c][k] += x * x
			k++
		}
	}
	m.count[c]++
	return nil
}

// meanVar returns, per coordinate, the mean and the variance over all chains.
func (m *moments) meanVar() (mean, variance []float64) {
	d := len(m.sum[0])
	mean, variance = make([]float64, d), make([]float64, d)
	var n float64
	for c := range m.sum {
		n += float64(m.count[c])
		for k := range d {
			mean[k] += m.sum[c][k]
			variance[k] += m.sum2[c][k]
		}
	}
	for k := range d {
		mean[k] /= n
		variance[k] = variance[k]/n - mean[k]*mean[k]
	}
	return mean, variance
}

// TestLangevinGaussian samples N(x̄, s²/(βn)·I) with LD and SGLD and checks the mean and
// variance of the iterates.
//
// R̂(θ) = (1/n) Σ ½‖θ − x_i‖² (s = 1, curvature k = 1) in d = 8 dimensions split over
// tensors of shapes (2, 3) and (2), with n = 100 and β = 0.01, so the target is
// N(x̄, I/(βn)) = N(x̄, I). For the quadratic the LD chain is an AR(1) process
// θ' − x̄ = (1 − ηk)(θ − x̄) + √(2η/(βn))ξ whose stationary variance is
// 1/(βnk) · 1/(1 − ηk/2): η = 0.02 biases it by +1.0%. SGLD's batch noise adds about
// η·Var(ĝ)·βn/2 ≈ 0.02·(0.9/10)·1/2 ≈ 0.1% more with b = 10. The autocorrelation times
// are ≈ 2/(ηk) = 100 for θ and 1/(ηk) = 50 for θ², so 32 chains × 80,000 iterates after
// a burn-in of 1,000 (where (1−η)^1000 ≈ 2e-9) give a Monte Carlo error of about 0.6% of
// the standard deviation for each mean and 0.6% for each variance (0.9% with the 16
// chains of the float32 run).
func TestLangevinGaussian(t *testing.T) {
	if testing.Short() {
		t.Skip("long Monte Carlo run")
	}
	const (
		n, chains, steps, burn = 100, 32, 81000, 1000
		beta, eta              = 0.01, 0.02
	)
	shapes := [][]int{{2, 3}, {2}}
	data := gaussData(rand.New(rand.NewPCG(1, 2)), n, []float64{1, -2, 3, 0.5, -1, 2, 4, -3})
	xbar := make([]float64, 8)
	for _, x := range data {
		for k := range xbar {
			xbar[k] += x[k] / n
		}
	}
	targetVar := 1 / (beta * n)
	for _, tc := range []struct {
		method samplers.Method
		batch  int
		f32    bool
	}{{samplers.MethodLD, 0, false}, {samplers.MethodSGLD, 10, false}, {samplers.MethodSGLD, 10, true}} {
		name := fmt.Sprintf("%v/float32=%v", tc.method, tc.f32)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			chains := chains
			if tc.f32 {
				chains /= 2
			}
			m := newMoments(chains, burn)
			cfg := samplers.ChainConfig{Method: tc.method, Chains: chains, Steps: steps, Eta: eta, Beta: beta,
				Batch: tc.batch, Shuffle: true, Seed: 42}
			newProblem := func(int) (samplers.Problem, error) {
				if tc.f32 {
					return newGauss[float32](data, 1, shapes...), nil
				}
				return newGauss[float64](data, 1, shapes...), nil
			}
			init := func(c int, _ *rand.Rand) ([]*tensor.Dense, error) {
				if tc.f32 {
					return newGauss[float32](data, 1, shapes...).params(), nil
				}
				return newGauss[float64](data, 1, shapes...).params(), nil
			}
			if err := samplers.RunChains(context.Background(), cfg, newProblem, init, m.visit); err != nil {
				t.Fatal(err)
			}
			mean, variance := m.meanVar()
			var worstMean, worstVar, avgVar float64
			for k := range mean {
				worstMean = max(worstMean, math.Abs(mean[k]-xbar[k])/math.Sqrt(targetVar))
				worstVar = max(worstVar, math.Abs(variance[k]/targetVar-1))
				avgVar += variance[k] / targetVar / float64(len(mean))
			}
			t.Logf("%s: worst |mean − x̄|/sd = %.4f, worst |var/target − 1| = %.4f, pooled var/target = %.4f (discretization alone: %.4f)",
				name, worstMean, worstVar, avgVar, 1/(1-eta/2))
			if worstMean > 0.05 {
				t.Errorf("mean off by %.3f sd; want ≤ 0.05", worstMean)
			}
			if worstVar > 0.05 {
				t.Errorf("variance off by %.1f%%; want ≤ 5%%", 100*worstVar)
			}
			if math.Abs(avgVar-1/(1-eta/2)) > 0.02 {
				t.Errorf("pooled variance ratio %.4f; want the discrete-time %.4f ± 0.02", avgVar, 1/(1-eta/2))
			}
		})
	}
}

// TestLangevinStep checks one step against the documented update and noise order.
func TestLangevinStep(t *testing.T) {
	ps := []*tensor.Dense{dense[float64]([]float64{1, 2}, 2), dense[float64]([]float64{3}, 1)}
	gs := []G.Value{dense[float64]([]float64{0.5, -1}, 2), dense[float64]([]float64{2}, 1)}
	l := &samplers.Langevin{Eta: 0.1, Beta: 2, N: 5, Rand: samplers.ChainRand(9, 0)}
	if err := l.Step(ps, gs); err != nil {
		t.Fatal(err)
	}
	std := math.Sqrt(2 * 0.1 / (2 * 5)) // √(2η/(βn)) = √0.02
	if l.NoiseStd() != std {
		t.Errorf("NoiseStd = %v; want %v", l.NoiseStd(), std)
	}
	replay := samplers.ChainRand(9, 0)
	want := []float64{1 - 0.05 + std*replay.NormFloat64(), 2 + 0.1 + std*replay.NormFloat64(), 3 - 0.2 + std*replay.NormFloat64()}
	if got := flat(t, ps); !equal(got, want) {
		t.Errorf("θ = %v; want %v", got, want)
	}
	// β = +Inf is gradient descent, with no draws and no Rand.
	gd := &samplers.Langevin{Eta: 0.1, Beta: math.Inf(1), N: 5}
	if err := gd.Step(ps, gs); err != nil {
		t.Fatal(err)
	}
	if got := flat(t, ps); got[0] != want[0]-0.05 {
		t.Errorf("noiseless step gave %v; want %v", got[0], want[0]-0.05)
	}
	if err := (&samplers.Langevin{Eta: 0.1, Beta: 1, N: 5}).Step(ps, gs); err == nil {
		t.Error("noisy step without Rand accepted")
	}
}

// dpProblem has four examples with hand-picked gradients for parameters of shapes (2) and
// (1); its gradients do not depend on θ.
type dpProblem struct{ gs [][]float64 }

func (p dpProblem) N() int { return len(p.gs) }
func (p dpProblem) Grad(context.Context, []*tensor.Dense, []int) ([]G.Value, error) {
	return nil, fmt.Errorf("DP-SGLD must use per-example gradients")
}
func (p dpProblem) ExampleGrad(_ context.Context, _ []*tensor.Dense, i int) ([]G.Value, error) {
	g := p.gs[i]
	return []G.Value{dense[float32](g[:2], 2), dense[float32](g[2:], 1)}, nil
}

// TestDPSGLDClips runs one DP-SGLD step of RunChains with clipping norm L = 5 over the batch
// of all four examples:
//
//	example 0: A = (3, 4), B = (12): ‖g‖ = 13 over both tensors (each tensor alone would
//	           pass or clip differently), so it is scaled by 5/13 to (15/13, 20/13, 60/13);
//	example 1: (0, 1e6, 0), huge: scaled by 5e-6 to (0, 5, 0);
//	example 2: (1, −2, 2), ‖g‖ = 3 ≤ 5: unchanged;
//	example 3: zero.
//
// The mean is ĝ = (15/13 + 1, 20/13 + 3, 60/13 + 2)/4 and, from θ_0 = (1, 1, 1),
// θ_1 = θ_0 − η·ĝ + √(2η/(βn))·ξ with ξ replayed from ChainRand(seed, 0).
func TestDPSGLDClips(t *testing.T) {
	prob := dpProblem{gs: [][]float64{{3, 4, 12}, {0, 1e6, 0}, {1, -2, 2}, {0, 0, 0}}}
	const eta, beta, seed = 0.1, 50.0, 3
	cfg := samplers.ChainConfig{Method: samplers.MethodDPSGLD, Chains: 1, Steps: 1, Eta: eta, Beta: beta,
		Batch: 4, Clip: 5, Seed: seed}
	var got []float64
	err := samplers.RunChains(context.Background(), cfg,
		func(int) (samplers.Problem, error) { return prob, nil },
		func(int, *rand.Rand) ([]*tensor.Dense, error) {
			return []*tensor.Dense{dense[float32]([]float64{1, 1}, 2), dense[float32]([]float64{1}, 1)}, nil
		},
		func(_, step int, ps []*tensor.Dense) (err error) {
			if step == 1 {
				got, err = flatErr(ps)
			}
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	mean := []float64{(15.0/13 + 1) / 4, (20.0/13 + 3) / 4, (60.0/13 + 2) / 4}
	std := math.Sqrt(2 * eta / (beta * 4))
	rng := samplers.ChainRand(seed, 0)
	for j := range mean {
		want := float64(float32(1 - eta*mean[j] + std*rng.NormFloat64()))
		if math.Abs(got[j]-want) > 1e-6 {
			t.Errorf("θ_%d = %.7g; want %.7g", j, got[j], want)
		}
	}
	// Without clipping the huge example would have moved θ_1 by η·1e6/4.
	if got[1] < 0 {
		t.Errorf("θ_1 = %v: the huge gradient was not clipped", got[1])
	}

	// A non-finite per-example gradient is an error naming the example and the parameter,
	// and the parameters stay as they were.
	d := &samplers.DPSGLD{Langevin: samplers.Langevin{Eta: eta, Beta: beta, N: 4, Rand: samplers.ChainRand(1, 1)}, Clip: 5}
	ps := []*tensor.Dense{dense[float32]([]float64{1, 1}, 2), dense[float32]([]float64{1}, 1)}
	bad := dpProblem{gs: [][]float64{{1, 1, 1}, {0, 0, math.Inf(-1)}}}
	err = d.Step(context.Background(), ps, 2, func(k int) ([]G.Value, error) {
		return bad.ExampleGrad(context.Background(), nil, k)
	})
	if err == nil || !strings.Contains(err.Error(), "batch example 1") || !strings.Contains(err.Error(), "parameter 1") {
		t.Errorf("error %v; want one naming batch example 1 and parameter 1", err)
	}
	if got := flat(t, ps); !equal(got, []float64{1, 1, 1}) {
		t.Errorf("parameters changed on error: %v", got)
	}
}
