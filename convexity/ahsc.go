package convexity

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/search"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Ranking is what AHSC sorts its one-epoch screenings by (ascending).
type Ranking int

const (
	// ByMu is the paper's method: the closed-form strong convexity μ.
	ByMu Ranking = iota
	// ByValLoss is the "one epoch is all you need" ablation (Egele et al. 2023): the
	// validation loss after one epoch.
	ByValLoss
	// ByHessian ranks by a Hutchinson estimate of the exact ‖H‖_F² of the training loss.
	ByHessian
)

func (r Ranking) String() string {
	switch r {
	case ByValLoss:
		return "one-epoch-val-loss"
	case ByHessian:
		return "hessian-frobenius"
	}
	return "strong-convexity"
}

// Screened is one configuration's one-epoch screening.
type Screened struct {
	Config search.Config
	Score  float64 // μ, validation loss or ‖H‖_F², by the ranking
	Err    string  // why the configuration was dropped, if it was
}

// AHSC is Algorithm 1 of the AHSC paper as a search.Method on a Task: sample N1
// configurations, train each for one epoch, score it, drop scores ≤ 0 (not strongly convex)
// and failures, fully train the N2 lowest through the objective, and return those trials (the
// best is then chosen on validation data by search.Best). Screening runs on Workers
// goroutines; the result does not depend on their number.
//
// Failed evaluations count against the budget, as in the papers' code: a configuration whose
// screening fails — training diverged (train.ErrDiverged: NaN or infinite loss, gradient or
// parameter), over the memory budget (ErrTooBig), past the trial timeout (ErrTrialTimeout), or
// a score that is NaN, infinite or not positive — uses up one of the N1 screenings and is
// dropped with the reason in Screen[i].Err; a full training that fails uses up one of the N2
// and is returned as a search.Failed trial with the reason in Err. Failed screenings never
// enter the ranking. Cancelling ctx stops the search with ctx.Err().
type AHSC struct {
	Task    *Task
	N1, N2  int // 50 and 10 in the paper
	Rank    Ranking
	Mu      MuOptions // BatchSize 0: each candidate's own batch size
	Workers int
	// HessianRows and HessianSamples size the ByHessian estimate (training rows used and
	// Hutchinson vectors; 256 and 16 by default).
	HessianRows, HessianSamples int

	// Screen is filled by Search with every screening, in sampling order.
	Screen []Screened
}

// Name identifies the method and its ranking.
func (a *AHSC) Name() string {
	if a.Rank == ByMu {
		return "ahsc"
	}
	return "ahsc-" + a.Rank.String()
}

// Search runs AHSC. obj performs the full trainings (so that they match the baselines'); the
// budget is not used: the cost is N1 one-epoch trainings plus N2 full ones.
func (a *AHSC) Search(ctx context.Context, rng *rand.Rand, space search.Space, obj search.Objective, _ int) ([]search.Trial, error) {
	if a.Task == nil || a.N1 <= 0 || a.N2 <= 0 {
		return nil, fmt.Errorf("convexity: AHSC needs a task and positive N1, N2")
	}
	if err := space.Validate(); err != nil {
		return nil, err
	}
	cfgs := make([]search.Config, a.N1)
	for i := range cfgs {
		var err error
		if cfgs[i], err = (search.Random{}).Ask(rng, space, nil); err != nil {
			return nil, err
		}
	}
	a.Screen = make([]Screened, a.N1)
	workers := max(1, min(a.Workers, a.N1))
	defer graph.Concurrent(workers)() // one configuration per core: no intra-op splitting
	var wg sync.WaitGroup
	jobs := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s := Screened{Config: cfgs[i], Score: math.NaN()}
				score, err := a.screen(ctx, cfgs[i], rand.New(rand.NewPCG(uint64(i), 0xa45c)))
				switch {
				case err != nil:
					s.Err = err.Error()
				case !(score > 0) || math.IsInf(score, 0):
					s.Err = fmt.Sprintf("score %v is not positive and finite", score)
				default:
					s.Score = score
				}
				a.Screen[i] = s
			}
		}()
	}
	for i := range cfgs {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var kept []int
	for i, s := range a.Screen {
		if s.Err == "" {
			kept = append(kept, i)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("convexity: every screened configuration failed (first: %s)", a.Screen[0].Err)
	}
	sort.SliceStable(kept, func(x, y int) bool { return a.Screen[kept[x]].Score < a.Screen[kept[y]].Score })
	if len(kept) > a.N2 {
		kept = kept[:a.N2]
	}
	var trials []search.Trial
	for _, i := range kept {
		if err := ctx.Err(); err != nil {
			return trials, err
		}
		t := search.Trial{ID: len(trials), Config: cfgs[i], Fidelity: 1, State: search.Complete}
		v, err := obj(ctx, cfgs[i], 1)
		if ctxErr := ctx.Err(); ctxErr != nil {
			t.State, t.Value, t.Err = search.Failed, math.NaN(), ctxErr.Error() // interrupted, as in search.Sequential
			return append(trials, t), ctxErr
		}
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			t.State, t.Value = search.Failed, math.NaN()
			if err != nil {
				t.Err = err.Error()
			} else {
				t.Err = fmt.Sprintf("objective value %v", v)
			}
		} else {
			t.Value = v
		}
		trials = append(trials, t)
	}
	return trials, nil
}

// screen trains cfg for one epoch and scores it, both under the task's trial timeout.
func (a *AHSC) screen(ctx context.Context, cfg search.Config, rng *rand.Rand) (score float64, err error) {
	err = a.Task.trial(ctx, func(ctx context.Context) error {
		var err error
		score, err = a.screenOnce(ctx, cfg, rng)
		return err
	})
	return score, err
}

func (a *AHSC) screenOnce(ctx context.Context, cfg search.Config, rng *rand.Rand) (float64, error) {
	c, tr, err := a.Task.Fit(ctx, cfg, 1, false)
	if err != nil {
		return 0, err
	}
	switch a.Rank {
	case ByValLoss:
		_, loss, err := a.Task.score(ctx, tr, a.Task.Val, c.BatchSize)
		return loss, err
	case ByHessian:
		return hessianScore(ctx, c.Model, a.Task, a.HessianRows, a.HessianSamples, rng)
	}
	opt := a.Mu
	if opt.BatchSize == 0 {
		opt.BatchSize = c.BatchSize
	}
	return StrongConvexity(ctx, c.Model, a.Task.Train, opt)
}

// hessianScore is a Hutchinson estimate of ‖H‖_F² of the training loss on the first rows
// training examples.
func hessianScore(ctx context.Context, m layers.FeatureModel, t *Task, rows, samples int, rng *rand.Rand) (float64, error) {
	if rows <= 0 {
		rows = 256
	}
	if samples <= 0 {
		samples = 16
	}
	ds := t.Train
	rows = min(rows, ds.N)
	net := m.Net()
	k := 1
	if t.Loss != losses.Binary {
		k = max(len(ds.Classes), 2)
	}
	x := net.Input("hessian.x", append([]int{rows}, ds.Shape...)...)
	y := net.Input("hessian.y", rows, k)
	if err := G.Let(x, denseOf(net, ds.X[:rows*ds.D], append([]int{rows}, ds.Shape...))); err != nil {
		return 0, err
	}
	labels := make([]float64, rows*k)
	for i := 0; i < rows; i++ {
		if k == 1 {
			labels[i] = float64(ds.Y[i])
		} else {
			labels[i*k+ds.Y[i]] = 1
		}
	}
	if err := G.Let(y, denseOf(net, labels, []int{rows, k})); err != nil {
		return 0, err
	}
	logits, err := m.Logits(x, layers.NewPass(layers.Eval))
	if err != nil {
		return 0, err
	}
	kind := t.Loss
	if kind == "" {
		kind = losses.Multiclass
	}
	loss, err := losses.Risk(kind, logits, y)
	if err != nil {
		return 0, err
	}
	c, err := NewCurvature(loss, net.ParamNodes())
	if err != nil {
		return 0, err
	}
	e, err := c.FrobeniusSq(ctx, rng, samples)
	return e.Mean, err
}

// denseOf copies data into a tensor of the net's dtype.
func denseOf(net *layers.Net, data []float64, shape []int) *tensor.Dense {
	if net.Dtype() == tensor.Float32 {
		f := make([]float32, len(data))
		for i, v := range data {
			f[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), data...)))
}
