package samplers

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Problem supplies the gradients of a chain. A Problem is used by one chain only, from one
// goroutine at a time, so it may own a compiled graph.Program.
type Problem interface {
	// N returns the dataset size n.
	N() int
	// Grad returns the gradient of the mean loss over the examples batch (indices in
	// [0, n); all of them, in order, for LD) with respect to params, one value per
	// parameter. The values are read before Grad is called again, so they may be a
	// program's reused result buffers; batch must not be retained or modified.
	Grad(ctx context.Context, params []*tensor.Dense, batch []int) ([]G.Value, error)
}

// ExampleProblem is a Problem with per-example gradients, which DP-SGLD needs.
type ExampleProblem interface {
	Problem
	// ExampleGrad returns the gradient of the loss of example i with respect to params,
	// under the same reuse rules as Grad.
	ExampleGrad(ctx context.Context, params []*tensor.Dense, i int) ([]G.Value, error)
}

// Method selects the sampler RunChains runs.
type Method int

const (
	MethodLD     Method = iota // Langevin dynamics on the full-batch gradient
	MethodSGLD                 // stochastic gradient Langevin dynamics on mini-batch gradients
	MethodDPSGLD               // DP-SGLD: clipped per-example mini-batch gradients
)

func (m Method) String() string {
	switch m {
	case MethodLD:
		return "LD"
	case MethodSGLD:
		return "SGLD"
	case MethodDPSGLD:
		return "DP-SGLD"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ChainConfig configures RunChains.
type ChainConfig struct {
	Method Method
	Chains int     // number of independent chains, ≥ 1
	Steps  int     // T ≥ 0: each chain visits θ_0, …, θ_T
	Eta    float64 // step size η
	Beta   float64 // inverse temperature β (+Inf: noiseless gradient descent)
	// Batch is the mini-batch size b of SGLD and DP-SGLD, 1 ≤ b ≤ n; LD ignores it.
	Batch int
	// Shuffle draws a fresh permutation of the examples from the chain's Rand at the start
	// of every epoch; otherwise the batches run through the examples in order. Either way
	// an epoch is ⌊n/b⌋ batches of exactly b examples and the n mod b left over are
	// skipped that epoch.
	Shuffle bool
	Clip    float64 // DP-SGLD clipping norm L
	Seed    uint64  // chain c draws from ChainRand(Seed, c)
	// Workers is the number of goroutines running chains; ≤ 0 means GOMAXPROCS. It does
	// not change the results.
	Workers int
}

// ChainRand returns the random source of chain c of a run seeded with seed: a ChaCha8
// generator keyed by (seed, c), so that chains draw independent streams.
func ChainRand(seed uint64, c int) *rand.Rand {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], uint64(c))
	copy(key[16:], "hyperflat/sampl.")
	return rand.New(rand.NewChaCha8(key))
}

func (c *ChainConfig) validate() error {
	switch {
	case c.Method != MethodLD && c.Method != MethodSGLD && c.Method != MethodDPSGLD:
		return fmt.Errorf("samplers: unknown method %d", c.Method)
	case c.Chains < 1:
		return fmt.Errorf("samplers: %d chains; want ≥ 1", c.Chains)
	case c.Steps < 0:
		return fmt.Errorf("samplers: %d steps; want ≥ 0", c.Steps)
	case c.Method == MethodDPSGLD && !(c.Clip > 0):
		return fmt.Errorf("samplers: DP-SGLD clipping norm %v; want > 0", c.Clip)
	}
	return checkLangevin(c.Eta, c.Beta, 1)
}

var errPeer = errors.New("samplers: stopped because another chain failed")

// RunChains runs cfg.Chains independent Langevin chains of cfg.Steps steps each.
//
// Chain c gets its own Problem from newProblem(c), its own random source rng =
// ChainRand(cfg.Seed, c) and its own parameters θ_0 = init(c, rng), which must not be
// shared with another chain; they are updated in place. newProblem(c) and then init(c, rng)
// are called on the goroutine that runs chain c, so init may fill in tensors that
// newProblem bound into the chain's graph. visit (if not nil) is called with
// θ_t for t = 0, …, T in order, after init and after every step; the tensors it gets are
// updated by the next step, so it must copy what it keeps. visit is never called
// concurrently for one chain, but may be for different chains when cfg.Workers > 1.
//
// Each step t = 0, …, T−1 of chain c does, in this order:
//
//   - batch: LD uses all n examples in order. SGLD and DP-SGLD take the next b examples
//     of the epoch; when a new epoch starts and cfg.Shuffle is set, the order of the
//     epoch is the identity permutation of 0, …, n−1 shuffled by rng.Shuffle.
//   - gradient: Problem.Grad of the batch (LD, SGLD) or, for DP-SGLD, ExampleGrad of each
//     example of the batch in batch order, clipped and averaged (see DPSGLD).
//   - update: the Langevin step θ ← θ − η·g + √(2η/(βn))·ξ, drawing ξ from rng in the
//     order Langevin documents.
//
// A chain's results therefore depend only on (cfg, c, what init and the Problem do), not
// on cfg.Workers or scheduling: the same seed gives bit-identical chains.
//
// An error of any chain stops all chains; RunChains returns it wrapped with its chain
// index (that of the lowest index, if several chains fail). The cancellation of ctx,
// checked between steps and passed to the Problem, stops the run too.
func RunChains(ctx context.Context, cfg ChainConfig,
	newProblem func(chain int) (Problem, error),
	init func(chain int, rng *rand.Rand) ([]*tensor.Dense, error),
	visit func(chain, t int, params []*tensor.Dense) error) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if newProblem == nil || init == nil {
		return errors.New("samplers: RunChains needs newProblem and init")
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, cfg.Chains)

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, cfg.Chains)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				if err := runChain(ctx, &cfg, c, newProblem, init, visit); err != nil {
					errs[c] = err
					cancel(errPeer)
				}
			}
		}()
	}
feed:
	for c := range cfg.Chains {
		select {
		case next <- c:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()

	// Report the failure of the lowest chain index, passing over chains that only stopped
	// because of it (their Problem may have seen the cancellation as context.Canceled).
	stopped := context.Cause(ctx) == errPeer
	for _, err := range errs {
		if err != nil && !errors.Is(err, errPeer) && !(stopped && errors.Is(err, context.Canceled)) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return context.Cause(ctx)
}

func runChain(ctx context.Context, cfg *ChainConfig, c int,
	newProblem func(int) (Problem, error),
	init func(int, *rand.Rand) ([]*tensor.Dense, error),
	visit func(int, int, []*tensor.Dense) error) (err error) {
	defer func() {
		if err != nil && !errors.Is(err, errPeer) {
			err = fmt.Errorf("chain %d: %w", c, err)
		}
	}()
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	prob, err := newProblem(c)
	if err != nil {
		return err
	}
	if prob == nil {
		return errors.New("samplers: newProblem returned a nil Problem")
	}
	n := prob.N()
	if n < 1 {
		return fmt.Errorf("samplers: problem has %d examples", n)
	}
	var exProb ExampleProblem
	b := n
	if cfg.Method != MethodLD {
		b = cfg.Batch
		if b < 1 || b > n {
			return fmt.Errorf("samplers: batch size %d for %d examples; want 1 ≤ b ≤ n", b, n)
		}
	}
	if cfg.Method == MethodDPSGLD {
		var ok bool
		if exProb, ok = prob.(ExampleProblem); !ok {
			return fmt.Errorf("samplers: DP-SGLD needs per-example gradients; %T is not an ExampleProblem", prob)
		}
	}
	rng := ChainRand(cfg.Seed, c)
	params, err := init(c, rng)
	if err != nil {
		return err
	}
	if _, err := checkParams(params); err != nil {
		return err
	}
	step := Langevin{Eta: cfg.Eta, Beta: cfg.Beta, N: n, Rand: rng}
	dp := DPSGLD{Langevin: step, Clip: cfg.Clip}

	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	perEpoch, pos := n/b, 0 // batches per epoch; index of the next batch in the epoch
	if visit != nil {
		if err := visit(c, 0, params); err != nil {
			return err
		}
	}
	for t := range cfg.Steps {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		batch := order
		if cfg.Method != MethodLD {
			if pos == perEpoch {
				pos = 0
			}
			if pos == 0 && cfg.Shuffle {
				for i := range order {
					order[i] = i
				}
				rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
			}
			batch = order[pos*b : (pos+1)*b]
			pos++
		}
		if cfg.Method == MethodDPSGLD {
			err = dp.Step(ctx, params, b, func(k int) ([]G.Value, error) {
				return exProb.ExampleGrad(ctx, params, batch[k])
			})
		} else {
			var grads []G.Value
			if grads, err = prob.Grad(ctx, params, batch); err == nil {
				err = step.Step(params, grads)
			}
		}
		if err != nil {
			return fmt.Errorf("step %d: %w", t, err)
		}
		if visit != nil {
			if err := visit(c, t+1, params); err != nil {
				return err
			}
		}
	}
	return nil
}
