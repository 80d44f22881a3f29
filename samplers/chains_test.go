package samplers_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// record keeps a copy of every iterate of every chain.
type record struct {
	mu    sync.Mutex
	iters map[int][][]float64 // chain → t → θ_t
}

func (r *record) visit(c, t int, ps []*tensor.Dense) error {
	xs, err := flatErr(ps)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.iters[c]) != t {
		return errors.New("iterates out of order")
	}
	r.iters[c] = append(r.iters[c], xs)
	return nil
}

func runRecorded(t *testing.T, cfg samplers.ChainConfig) map[int][][]float64 {
	t.Helper()
	data := gaussData(rand.New(rand.NewPCG(5, 6)), 23, []float64{1, -1, 2})
	r := &record{iters: map[int][][]float64{}}
	err := samplers.RunChains(context.Background(), cfg,
		func(int) (samplers.Problem, error) { return newGauss[float32](data, 0.5, []int{3}), nil },
		func(_ int, rng *rand.Rand) ([]*tensor.Dense, error) { // θ_0 ~ N(0, I) from the chain's source
			return []*tensor.Dense{dense[float32]([]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}, 3)}, nil
		}, r.visit)
	if err != nil {
		t.Fatal(err)
	}
	return r.iters
}

func TestChainsDeterministic(t *testing.T) {
	const chains, steps = 5, 40
	for _, m := range []samplers.Method{samplers.MethodLD, samplers.MethodSGLD, samplers.MethodDPSGLD} {
		for _, shuffle := range []bool{false, true} {
			cfg := samplers.ChainConfig{Method: m, Chains: chains, Steps: steps, Eta: 0.05, Beta: 0.5,
				Batch: 4, Shuffle: shuffle, Clip: 1, Seed: 11}
			cfg.Workers = 1
			one := runRecorded(t, cfg)
			cfg.Workers = 3
			three := runRecorded(t, cfg)
			for c := range chains {
				if len(one[c]) != steps+1 {
					t.Fatalf("%v: chain %d visited %d iterates; want t = 0..%d", m, c, len(one[c]), steps)
				}
				for s := range one[c] {
					for j := range one[c][s] {
						if math.Float64bits(one[c][s][j]) != math.Float64bits(three[c][s][j]) {
							t.Fatalf("%v shuffle=%v: chain %d θ_%d differs between 1 and 3 workers", m, shuffle, c, s)
						}
					}
				}
			}
			if equal(one[0][steps], one[1][steps]) {
				t.Errorf("%v: chains 0 and 1 ended equal; their random streams should differ", m)
			}
		}
	}
	cfg := samplers.ChainConfig{Method: samplers.MethodSGLD, Chains: 2, Steps: 5, Eta: 0.05, Beta: 0.5, Batch: 4, Seed: 11}
	a := runRecorded(t, cfg)
	cfg.Seed = 12
	if b := runRecorded(t, cfg); equal(a[0][5], b[0][5]) {
		t.Error("seeds 11 and 12 gave the same chain")
	}
}

// TestChainsBatches checks the documented batch order: sequential batches of b run through
// the examples and skip the n mod b left over; shuffled epochs are permutations.
func TestChainsBatches(t *testing.T) {
	for _, shuffle := range []bool{false, true} {
		var got [][]int
		prob := &batchLog{n: 7, log: &got}
		cfg := samplers.ChainConfig{Method: samplers.MethodSGLD, Chains: 1, Steps: 6, Eta: 0.1, Beta: math.Inf(1),
			Batch: 3, Shuffle: shuffle}
		err := samplers.RunChains(context.Background(), cfg,
			func(int) (samplers.Problem, error) { return prob, nil },
			func(int, *rand.Rand) ([]*tensor.Dense, error) {
				return []*tensor.Dense{dense[float64]([]float64{0}, 1)}, nil
			}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 6 {
			t.Fatalf("%d batches; want 6", len(got))
		}
		if !shuffle {
			want := [][]int{{0, 1, 2}, {3, 4, 5}, {0, 1, 2}, {3, 4, 5}, {0, 1, 2}, {3, 4, 5}}
			for s := range want {
				for k := range want[s] {
					if got[s][k] != want[s][k] {
						t.Fatalf("sequential batches %v; want %v", got, want)
					}
				}
			}
			continue
		}
		for e := 0; e < 3; e++ { // within an epoch the two batches are disjoint
			seen := map[int]bool{}
			for _, i := range append(append([]int{}, got[2*e]...), got[2*e+1]...) {
				if seen[i] || i < 0 || i >= 7 {
					t.Fatalf("epoch %d batches %v %v are not part of a permutation", e, got[2*e], got[2*e+1])
				}
				seen[i] = true
			}
		}
	}
}

type batchLog struct {
	n   int
	log *[][]int
}

func (b *batchLog) N() int { return b.n }
func (b *batchLog) Grad(_ context.Context, ps []*tensor.Dense, batch []int) ([]G.Value, error) {
	*b.log = append(*b.log, append([]int(nil), batch...))
	return []G.Value{dense[float64]([]float64{0}, 1)}, nil
}

func TestChainsErrors(t *testing.T) {
	data := gaussData(rand.New(rand.NewPCG(5, 6)), 10, []float64{1})
	newProblem := func(int) (samplers.Problem, error) { return newGauss[float64](data, 1, []int{1}), nil }
	init := func(int, *rand.Rand) ([]*tensor.Dense, error) {
		return []*tensor.Dense{dense[float64]([]float64{0}, 1)}, nil
	}
	cfg := samplers.ChainConfig{Method: samplers.MethodLD, Chains: 6, Steps: 1000, Eta: 0.01, Beta: 1, Workers: 3}

	// The failing chain's error comes back, and stops the others.
	boom := errors.New("boom")
	err := samplers.RunChains(context.Background(), cfg, newProblem, init, func(c, t int, _ []*tensor.Dense) error {
		if c == 2 && t == 5 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "chain 2") {
		t.Errorf("error %v; want boom from chain 2", err)
	}

	// Cancelling the context stops the run.
	ctx, cancel := context.WithCancel(context.Background())
	err = samplers.RunChains(ctx, cfg, newProblem, init, func(c, t int, _ []*tensor.Dense) error {
		if t == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run returned %v", err)
	}

	// DP-SGLD needs per-example gradients.
	cfg = samplers.ChainConfig{Method: samplers.MethodDPSGLD, Chains: 1, Steps: 1, Eta: 0.01, Beta: 1, Batch: 2, Clip: 1}
	prob := &batchLog{n: 4, log: new([][]int)}
	err = samplers.RunChains(context.Background(), cfg, func(int) (samplers.Problem, error) { return prob, nil }, init, nil)
	if err == nil || !strings.Contains(err.Error(), "not an ExampleProblem") {
		t.Errorf("DP-SGLD without ExampleGrad: %v", err)
	}
	// Bad configurations.
	for _, bad := range []samplers.ChainConfig{
		{Method: samplers.MethodSGLD, Chains: 1, Steps: 1, Eta: 0.01, Beta: 1, Batch: 11},
		{Method: samplers.MethodLD, Chains: 0, Steps: 1, Eta: 0.01, Beta: 1},
		{Method: samplers.MethodLD, Chains: 1, Steps: 1, Eta: 0, Beta: 1},
		{Method: samplers.MethodDPSGLD, Chains: 1, Steps: 1, Eta: 0.01, Beta: 1, Batch: 1},
	} {
		if err := samplers.RunChains(context.Background(), bad, newProblem, init, nil); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
