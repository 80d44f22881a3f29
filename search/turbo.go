package search

import (
	"context"
	"math"
	"math/rand/v2"
)

// TuRBO is TuRBO-1 (Eriksson et al. 2019, "Scalable global optimization via local Bayesian
// optimization"), one of the AHSC paper's baselines (max_evals = 30, n_init = 2d + 1, batch
// size 1). It keeps a single trust region: a box centred at the best point of the current
// run, of side Length scaled per dimension by the GP's lengthscales (normalized to geometric
// mean 1, so that the box stretches along the directions the objective varies slowly in).
// Inside it, the next point is the minimizer of one Thompson sample of a GP fitted to the
// run's points, over candidates that perturb the centre in a random subset of dimensions
// (each with probability min(20/d, 1)). SuccessTol consecutive improvements (by more than
// 10⁻³ of the incumbent's magnitude) double the side, up to LengthMax; FailureTol consecutive
// non-improvements halve it; once it falls below LengthMin the run is abandoned and a new one
// starts from a fresh Latin hypercube design, forgetting the old run's points. A failed
// evaluation (error or non-finite loss) counts as a non-improvement and stays out of the GP.
// Failed evaluations count against the budget, as in the papers' code.
// As in the reference, the Thompson sample is of noisy observations (the fitted noise
// included), so that near-ties between candidates are broken at random.
//
// TuRBO is a Sampler whose state — the side length, the counters, where the current run began —
// is recomputed from the trial history on every Ask (TrustRegionState), so a TuRBO value holds
// no state and can be reused; the initial design is a Latin hypercube continued point by point
// (see lhsNext). It is sequential: trials still running count only as design points.
//
// Deviations from the reference implementation: the GP's hyperparameters are fitted by L-BFGS
// (FitGP; the reference takes 50 Adam steps) within the reference's bounds; the candidates are
// a Latin hypercube of the box rather than a scrambled Sobol sequence; and candidates are
// rounded through Space.FromUnit, with configs already evaluated dropped (in a discrete space
// the small boxes late in a run otherwise map back onto the centre, and TuRBO would spend the
// budget re-evaluating it). When no new config is left in the box, the candidates are drawn
// from the whole space instead.
//
// The zero value is TuRBO-1 with the paper's settings.
type TuRBO struct {
	// NInit is the size of each run's initial design; 0 means 2d + 1.
	NInit int
	// Candidates is the size of the Thompson-sampling candidate set; 0 means min(100d, 5000).
	// Sampling jointly over them costs O(Candidates³).
	Candidates int
	// LengthInit, LengthMin and LengthMax bound the trust region's side in the unit cube;
	// zeros mean 0.8, 0.5⁷ and 1.6.
	LengthInit, LengthMin, LengthMax float64
	// SuccessTol and FailureTol are the counts of consecutive successes and failures that
	// expand and shrink the region; zeros mean 3 and ⌈max(4, d)⌉ (batch size 1).
	SuccessTol, FailureTol int
	// GPRestarts is the number of L-BFGS runs per GP fit (GPOptions.Restarts); 0 means 1,
	// from the reference's initial values (lengthscales ½, signal variance 1).
	// The GP's bounds are the reference implementation's: lengthscales [0.005, 2], signal
	// variance [0.05, 20], noise variance [5·10⁻⁴, 0.2].
	GPRestarts int
	// Priors adds FitGP's weak hyperparameter priors; by default the GP is fitted by maximum
	// likelihood, as in the reference.
	Priors bool
}

// TrustRegion is TuRBO's state after a sequence of trials.
type TrustRegion struct {
	// Length is the trust region's side before lengthscale scaling.
	Length float64
	// Successes and Failures count the current streak.
	Successes, Failures int
	// Restarts counts abandoned runs.
	Restarts int
	// Start is the index, among the full-fidelity trials, of the current run's first trial.
	Start int
}

// Name is the method's label.
func (TuRBO) Name() string { return "TuRBO" }

// Search runs TuRBO for budget evaluations, one at a time.
func (t TuRBO) Search(ctx context.Context, rng *rand.Rand, space Space, obj Objective, budget int) ([]Trial, error) {
	return Sequential{Label: t.Name(), Sampler: t}.Search(ctx, rng, space, obj, budget)
}

// turboSettings are TuRBO's parameters with defaults filled in for d dimensions.
type turboSettings struct {
	nInit, nCand      int
	lInit, lMin, lMax float64
	succTol, failTol  int
}

func (t TuRBO) settings(d int) turboSettings {
	s := turboSettings{t.NInit, t.Candidates, t.LengthInit, t.LengthMin, t.LengthMax, t.SuccessTol, t.FailureTol}
	if s.nInit <= 0 {
		s.nInit = 2*d + 1
	}
	if s.nCand <= 0 {
		s.nCand = min(100*d, 5000)
	}
	if s.lInit <= 0 {
		s.lInit = 0.8
	}
	if s.lMin <= 0 {
		s.lMin = math.Pow(0.5, 7)
	}
	if s.lMax <= 0 {
		s.lMax = 1.6
	}
	if s.succTol <= 0 {
		s.succTol = 3
	}
	if s.failTol <= 0 {
		s.failTol = int(math.Ceil(math.Max(4, float64(d))))
	}
	return s
}

// gpOptions are the GP fit's options.
func (t TuRBO) gpOptions() GPOptions {
	o := GPOptions{
		Restarts:     t.GPRestarts,
		LengthBounds: [2]float64{0.005, 2},
		SignalBounds: [2]float64{0.05, 20},
		NoiseBounds:  [2]float64{5e-4, 0.2},
		NoPrior:      !t.Priors,
	}
	if o.Restarts <= 0 {
		o.Restarts = 1
	}
	return o
}

// TrustRegionState replays the trials (full-fidelity ones, in order) through TuRBO's
// success/failure rules and returns the resulting state.
func (t TuRBO) TrustRegionState(space Space, trials []Trial) TrustRegion {
	st, _ := t.replay(t.settings(len(space)), observations(space, trials))
	return st
}

// replay returns the state and the current run's observations.
func (t TuRBO) replay(s turboSettings, obs []observation) (TrustRegion, []observation) {
	st := TrustRegion{Length: s.lInit}
	var cur []observation
	restart := func(next int) {
		st = TrustRegion{Length: s.lInit, Restarts: st.Restarts + 1, Start: next}
		cur = nil
	}
	for i, o := range obs {
		if len(cur) < s.nInit {
			cur = append(cur, o)
			if len(cur) == s.nInit && allFailed(cur) {
				restart(i + 1) // nothing to centre a trust region on
			}
			continue
		}
		if o.state == Running {
			cur = append(cur, o)
			continue
		}
		best, ok := bestFinished(cur)
		if o.state == Complete && (!ok || o.y < best-1e-3*math.Abs(best)) {
			st.Successes++
			st.Failures = 0
		} else {
			st.Successes = 0
			st.Failures++
		}
		switch {
		case st.Successes == s.succTol:
			st.Length = math.Min(2*st.Length, s.lMax)
			st.Successes = 0
		case st.Failures == s.failTol:
			st.Length /= 2
			st.Failures = 0
		}
		cur = append(cur, o)
		if st.Length < s.lMin {
			restart(i + 1)
		}
	}
	return st, cur
}

// Ask proposes the next point: the next design point of the current run, or the Thompson
// sample's minimizer in the trust region.
func (t TuRBO) Ask(rng *rand.Rand, space Space, trials []Trial) (Config, error) {
	if rng == nil {
		return Config{}, errNilRand
	}
	if err := space.Validate(); err != nil {
		return Config{}, err
	}
	d := len(space)
	s := t.settings(d)
	obs := observations(space, trials)
	seen := make(map[string]bool, len(obs))
	for _, o := range obs {
		seen[o.key] = true
	}
	st, cur := t.replay(s, obs)

	var x [][]float64
	var y []float64
	for _, o := range cur {
		if o.state == Complete {
			x = append(x, o.u)
			y = append(y, o.y)
		}
	}
	if len(cur) < s.nInit || len(x) == 0 {
		prev := make([][]float64, len(cur))
		for i, o := range cur {
			prev[i] = o.u
		}
		return designPoint(rng, space, prev, s.nInit, seen), nil
	}

	gp, err := FitGP(rng, x, y, t.gpOptions())
	if err != nil {
		return designPoint(rng, space, nil, 1, seen), nil
	}
	bestI := argsort(y)[0]
	center := x[bestI]

	// Box side per dimension: Length × lengthscale weights of geometric mean 1.
	w := append([]float64(nil), gp.Params.Lengthscales...)
	var mw, lg float64
	for _, v := range w {
		mw += v
	}
	mw /= float64(d)
	for j := range w {
		w[j] /= mw
		lg += math.Log(w[j])
	}
	gm := math.Exp(lg / float64(d))
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range w {
		w[j] /= gm
		lo[j] = math.Max(center[j]-w[j]*st.Length/2, 0)
		hi[j] = math.Min(center[j]+w[j]*st.Length/2, 1)
	}

	pert := latinHypercube(rng, s.nCand, lo, hi)
	prob := math.Min(20/float64(d), 1)
	cands, cfgs := uniqueCandidates(space, seen, func(add func([]float64)) {
		for _, p := range pert {
			u := append([]float64(nil), center...)
			hit := false
			for j := range u {
				if rng.Float64() <= prob {
					u[j] = p[j]
					hit = true
				}
			}
			if !hit {
				j := rng.IntN(d)
				u[j] = p[j]
			}
			add(u)
		}
	})
	if len(cands) == 0 {
		ones := make([]float64, d)
		for j := range ones {
			ones[j] = 1
		}
		cands, cfgs = uniqueCandidates(space, seen, func(add func([]float64)) {
			for _, u := range latinHypercube(rng, s.nCand, make([]float64, d), ones) {
				add(u)
			}
		})
	}
	if len(cands) == 0 { // every config of the space has been tried
		return designPoint(rng, space, nil, 1, seen), nil
	}
	sample := gp.Sample(rng, cands, 1, true)[0]
	best := 0
	for i, v := range sample {
		if v < sample[best] {
			best = i
		}
	}
	return cfgs[best], nil
}

// uniqueCandidates collects the canonical points generate offers, dropping configs in seen
// and repeats.
func uniqueCandidates(space Space, seen map[string]bool, generate func(add func([]float64))) ([][]float64, []Config) {
	var us [][]float64
	var cs []Config
	have := map[string]bool{}
	generate(func(u []float64) {
		cu, c, key := canonical(space, u)
		if seen[key] || have[key] {
			return
		}
		have[key] = true
		us = append(us, cu)
		cs = append(cs, c)
	})
	return us, cs
}

// designPoint continues a Latin hypercube design of strata points after prev, redrawing a
// few times to avoid configs in seen.
func designPoint(rng *rand.Rand, space Space, prev [][]float64, strata int, seen map[string]bool) Config {
	var c Config
	for try := 0; try < 20; try++ {
		c = space.FromUnit(lhsNext(rng, prev, max(strata, 1), len(space)))
		if !seen[configKey(c)] {
			break
		}
	}
	return c
}

func allFailed(obs []observation) bool {
	for _, o := range obs {
		if o.state != Failed {
			return false
		}
	}
	return true
}

// bestFinished returns the least finished value.
func bestFinished(obs []observation) (float64, bool) {
	best, ok := math.Inf(1), false
	for _, o := range obs {
		if o.state == Complete && o.y < best {
			best, ok = o.y, true
		}
	}
	return best, ok
}
