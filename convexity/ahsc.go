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

// Screened is one configuration's one-epoch screening (Algorithm 1, lines 6–13).
type Screened struct {
	Config search.Config
	// Score is what the screening measured: μ, the validation loss or ‖H‖_F², by the
	// ranking; NaN when the screening failed before it could score.
	Score float64
	// Reason says why the configuration was dropped before the ranking — the screening's
	// error, or a score that is not positive and finite (Algorithm 1, lines 11–13: not
	// strongly convex); "" for a configuration that was ranked.
	Reason string
}

// Result is what an AHSC search did.
type Result struct {
	// Trials are the full trainings of the N2 ranked configurations of least score, in
	// ranking order (Algorithm 1, lines 15–17); search.Best picks the selected one.
	Trials []search.Trial
	// Screenings are the N1 screenings, in sampling order.
	Screenings []Screened
}

// Dropped is the number of screenings dropped before the ranking.
func (r Result) Dropped() int {
	n := 0
	for _, s := range r.Screenings {
		if s.Reason != "" {
			n++
		}
	}
	return n
}

// AHSC is Algorithm 1 of the AHSC paper (Yedida & Saha 2024, Section 3.2) on a Task: sample
// N1 configurations, train each for one epoch, score it, drop scores ≤ 0 (not strongly
// convex) and failures, fully train the N2 lowest, and return those trials (the best is then
// chosen on validation data by search.Best). Screening runs on Workers goroutines; the result
// does not depend on their number.
//
// Failed evaluations count against the budget, as in the papers' code: a configuration whose
// screening fails — training diverged (train.ErrDiverged: NaN or infinite loss, gradient or
// parameter), over the memory budget (ErrTooBig), past the trial timeout (ErrTrialTimeout), or
// a score that is NaN, infinite or not positive — uses up one of the N1 screenings and is
// dropped with the reason in its Screened.Reason; a full training that fails uses up one of
// the N2 and is returned as a search.Failed trial with the reason in Err. Failed screenings
// never enter the ranking. Cancelling ctx stops the search with ctx.Err().
type AHSC struct {
	Task    *Task
	N1, N2  int // 50 and 10 in the paper
	Rank    Ranking
	Mu      MuOptions // BatchSize 0: each candidate's own batch size
	Workers int
	// HessianRows and HessianSamples size the ByHessian estimate (training rows used and
	// Hutchinson vectors; 256 and 16 by default).
	HessianRows, HessianSamples int
}

// Name identifies the method and its ranking.
func (a *AHSC) Name() string {
	if a.Rank == ByMu {
		return "ahsc"
	}
	return "ahsc-" + a.Rank.String()
}

// Search is Run as a search.Method: it returns the full trainings only. The budget is not
// used: the cost is N1 one-epoch trainings plus N2 full ones.
func (a *AHSC) Search(ctx context.Context, rng *rand.Rand, space search.Space, obj search.Objective, _ int) ([]search.Trial, error) {
	res, err := a.Run(ctx, rng, space, obj)
	return res.Trials, err
}

// Run runs AHSC on space: the N1 configurations and, for ByHessian, the Hutchinson probes
// are drawn from rng; obj performs the full trainings (a.Task.Objective(), so that they match
// the baselines'). The result holds the screenings even when the search fails because every
// screening was dropped.
func (a *AHSC) Run(ctx context.Context, rng *rand.Rand, space search.Space, obj search.Objective) (Result, error) {
	if a == nil || a.Task == nil || a.N1 <= 0 || a.N2 <= 0 {
		return Result{}, fmt.Errorf("convexity: AHSC needs a task and positive N1, N2")
	}
	if rng == nil || obj == nil {
		return Result{}, fmt.Errorf("convexity: AHSC.Run needs a random source and an objective (got a nil one)")
	}
	if err := space.Validate(); err != nil {
		return Result{}, err
	}
	cfgs := make([]search.Config, a.N1)
	for i := range cfgs {
		var err error
		if cfgs[i], err = (search.Random{}).Ask(rng, space, nil); err != nil {
			return Result{}, err
		}
	}
	probes := rng.Uint64() // drawn by every ranking, so that all of them screen the same configurations
	res := Result{Screenings: a.screenAll(ctx, cfgs, probes)}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	kept, err := a.lowest(res.Screenings)
	if err != nil {
		return res, err
	}
	res.Trials, err = trainFully(ctx, cfgs, kept, obj)
	return res, err
}

// screenAll screens every configuration on a.Workers goroutines; screening i draws its
// Hessian probes from PCG(probes, i), so that the result does not depend on the workers.
func (a *AHSC) screenAll(ctx context.Context, cfgs []search.Config, probes uint64) []Screened {
	out := make([]Screened, len(cfgs))
	workers := max(1, min(a.Workers, len(cfgs)))
	defer graph.Concurrent(workers)() // one configuration per core: no intra-op splitting
	var wg sync.WaitGroup
	jobs := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				out[i] = a.Screen(ctx, cfgs[i], rand.New(rand.NewPCG(probes, uint64(i))))
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
	return out
}

// Screen trains cfg for one epoch and scores it by the ranking (Algorithm 1, lines 6–13),
// under the task's trial timeout; rng draws the Hessian probes (ByHessian only). A failed
// screening, or a score that is not positive and finite, is dropped with its Reason.
func (a *AHSC) Screen(ctx context.Context, cfg search.Config, rng *rand.Rand) Screened {
	s := Screened{Config: cfg, Score: math.NaN()}
	score, err := a.screen(ctx, cfg, rng)
	switch {
	case err != nil:
		s.Reason = err.Error()
	case !(score > 0) || math.IsInf(score, 0):
		s.Score = score
		s.Reason = fmt.Sprintf("score %v is not positive and finite", score)
	default:
		s.Score = score
	}
	return s
}

// lowest returns the indices of the N2 ranked screenings of least score (a stable sort, so
// ties keep the sampling order).
func (a *AHSC) lowest(screened []Screened) ([]int, error) {
	var kept []int
	for i, s := range screened {
		if s.Reason == "" {
			kept = append(kept, i)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("convexity: every screened configuration failed (first: %s)", screened[0].Reason)
	}
	sort.SliceStable(kept, func(x, y int) bool { return screened[kept[x]].Score < screened[kept[y]].Score })
	if len(kept) > a.N2 {
		kept = kept[:a.N2]
	}
	return kept, nil
}

// trainFully evaluates the kept configurations at full fidelity, in order (Algorithm 1,
// lines 15–17).
func trainFully(ctx context.Context, cfgs []search.Config, kept []int, obj search.Objective) ([]search.Trial, error) {
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
	if a == nil || a.Task == nil {
		return 0, fmt.Errorf("convexity: screening without a task")
	}
	if rng == nil && a.Rank == ByHessian {
		return 0, fmt.Errorf("convexity: the Hessian ranking needs a random source for its probes (got nil)")
	}
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
		_, _, loss, err := a.Task.score(ctx, tr, a.Task.Val)
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
	c, err := NewTrainingCurvature(m, t, rows)
	if err != nil {
		return 0, err
	}
	e, err := c.FrobeniusSq(ctx, rng, samples)
	return e.Mean, err
}

// NewTrainingCurvature is the curvature, in m's parameters at their current values, of the
// task's training risk (t.Loss, in inference mode, without weight decay) on the first rows
// examples of t.Train (all of them when rows ≤ 0): what ByHessian ranks by, and what a caller
// compares μ against (experiments/premise).
func NewTrainingCurvature(m layers.FeatureModel, t *Task, rows int) (*Curvature, error) {
	if m == nil || t == nil || t.Train == nil || t.Train.N == 0 {
		return nil, fmt.Errorf("convexity: NewTrainingCurvature needs a model and a task with training data (got a nil one)")
	}
	ds := t.Train
	if rows <= 0 || rows > ds.N {
		rows = ds.N
	}
	net := m.Net()
	k := 1
	if t.Loss != losses.Binary {
		k = max(len(ds.Classes), 2)
	}
	x := net.Input("hessian.x", append([]int{rows}, ds.Shape...)...)
	y := net.Input("hessian.y", rows, k)
	if err := G.Let(x, layers.NewTensor(net.Dtype(), ds.X[:rows*ds.D], append([]int{rows}, ds.Shape...)...)); err != nil {
		return nil, err
	}
	labels := make([]float64, rows*k)
	for i := 0; i < rows; i++ {
		if k == 1 {
			labels[i] = float64(ds.Y[i])
		} else {
			labels[i*k+ds.Y[i]] = 1
		}
	}
	if err := G.Let(y, layers.NewTensor(net.Dtype(), labels, rows, k)); err != nil {
		return nil, err
	}
	logits, err := m.Logits(x, layers.NewPass(layers.Eval))
	if err != nil {
		return nil, err
	}
	kind := t.Loss
	if kind == "" {
		kind = losses.Multiclass
	}
	loss, err := losses.Risk(kind, logits, y)
	if err != nil {
		return nil, err
	}
	return NewCurvature(loss, net.ParamNodes())
}
