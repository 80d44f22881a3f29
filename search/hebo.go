package search

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
)

// HEBO is a Gaussian-process optimizer after HEBO (Cowen-Rivers et al. 2022, winner of the
// NeurIPS 2020 black-box optimization challenge), the AHSC paper's strongest black-box
// baseline, run there as 5 batches of 6 suggestions. Each proposal refits everything from the
// trials so far (HEBO is stateless between suggestions too):
//
//  1. Until InitPoints trials have finished, it proposes a random design (Latin hypercube
//     strata continued across calls; HEBO uses scrambled Sobol points).
//  2. The losses are power-transformed as HEBO does: Box-Cox when all are positive, else
//     Yeo-Johnson, on y/std(y), λ by maximum likelihood, falling back to Yeo-Johnson and then
//     to plain standardization when the transform degenerates. Failed trials are imputed with
//     the worst finished loss, so that the model steers away from where training breaks;
//     no NaN or infinity ever reaches the GP. Failed evaluations count against the budget,
//     as in the papers' code.
//  3. A GP (Matérn-5/2 ARD; FitGP) is fitted with a Kumaraswamy input warping on every Float
//     and Int dimension, learned jointly with the kernel by maximum a posteriori.
//  4. The acquisition is HEBO's MACE: the three objectives (LCB, −log EI, −log PI), minimized
//     jointly. Their Pareto front is approximated by an evolutionary search over the unit
//     cube (random initial population plus perturbations of the best trials, then rounds of
//     uniform crossover and Gaussian mutation among the current front). Every candidate is
//     rounded through Space.FromUnit first, so integer and categorical dimensions are scored
//     at the values that will be evaluated, and configs already tried are skipped.
//  5. A batch is a random subset of the front; for batches of more than two, the front's
//     points of least posterior mean and of largest posterior variance are always included
//     (as in HEBO). The front's spread over the exploit/explore trade-off is what makes the
//     batch diverse. Trials still running when Ask is called enter the model with their
//     posterior mean as value (Kriging believer), so that asynchronous callers are not
//     handed the same point twice.
//
// Differences from HEBO: no random noise added to the acquisitions (HEBO perturbs them with the
// fitted noise), a simpler evolutionary optimizer than NSGA-II, Latin hypercube rather than
// Sobol initial points, categorical dimensions modelled ordinally in their ToUnit coordinate
// rather than one-hot, and this package's Matérn-5/2 GP rather than HEBO's own model.
//
// The zero value is ready to use.
type HEBO struct {
	// InitPoints is the random design's size; 0 means 1 + d, as HEBO.
	InitPoints int
	// BatchSize is the number of suggestions per batch in Search; 0 means 6, the AHSC
	// paper's protocol (5 batches × 6 for a budget of 30).
	BatchSize int
	// Candidates is the evolutionary search's random initial population; 0 means 1000.
	Candidates int
	// Population is the number of offspring per generation; 0 means 100.
	Population int
	// Generations is the number of evolutionary rounds; 0 means 20.
	Generations int
	// GP configures the model fit. HEBO sets its Warp mask (every Float and Int dimension)
	// unless NoWarp is set, in which case GP.Warp is used as given.
	GP GPOptions
	// NoWarp and NoPowerTransform switch off the input warping and the output transform
	// (ablations).
	NoWarp, NoPowerTransform bool
}

// Name is the method's label.
func (HEBO) Name() string { return "HEBO" }

// Ask proposes one configuration.
func (h HEBO) Ask(rng *rand.Rand, space Space, trials []Trial) (Config, error) {
	cs, err := h.AskBatch(rng, space, trials, 1)
	if err != nil {
		return Config{}, err
	}
	return cs[0], nil
}

// Search runs batches of BatchSize suggestions until budget evaluations are spent; the last
// batch is cut to fit. Failed evaluations count against the budget, as in the papers' code, and
// the search goes on. Cancelling ctx stops it with ctx.Err(); trials of the batch not yet
// evaluated stay Running.
func (h HEBO) Search(ctx context.Context, rng *rand.Rand, space Space, obj Objective, budget int) ([]Trial, error) {
	if rng == nil {
		return nil, errNilRand
	}
	if obj == nil {
		return nil, errors.New("search: HEBO without an objective")
	}
	if err := space.Validate(); err != nil {
		return nil, err
	}
	batch := h.BatchSize
	if batch <= 0 {
		batch = 6
	}
	st := &Study{Space: space, Sampler: h, rng: rng}
	for len(st.trials) < budget {
		if err := ctx.Err(); err != nil {
			return st.Trials(), err
		}
		cfgs, err := h.AskBatch(rng, space, st.Trials(), min(batch, budget-len(st.trials)))
		if err != nil {
			return st.Trials(), err
		}
		first := len(st.trials)
		for _, c := range cfgs {
			st.Add(c, 1)
		}
		for id := first; id < len(st.trials); id++ {
			v, err := obj(ctx, st.trials[id].Config, 1)
			if ctxErr := ctx.Err(); ctxErr != nil {
				_ = st.Tell(id, math.NaN(), ctxErr) // interrupted, as in Sequential
				return st.Trials(), ctxErr
			}
			if err := st.Tell(id, v, err); err != nil {
				return st.Trials(), err
			}
		}
	}
	return st.Trials(), nil
}

// acqCandidate is a point the acquisition optimizer has scored.
type acqCandidate struct {
	u    []float64 // canonical unit point
	cfg  Config
	key  string
	objs []float64 // LCB, −log EI, −log PI
}

// AskBatch proposes n distinct configurations (distinct from each other and from every trial
// so far, as long as the space has that many) to be evaluated together.
func (h HEBO) AskBatch(rng *rand.Rand, space Space, trials []Trial, n int) ([]Config, error) {
	if rng == nil {
		return nil, errNilRand
	}
	if err := space.Validate(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, errors.New("search: HEBO batch of fewer than one")
	}
	d := len(space)
	obs := observations(space, trials)
	seen := make(map[string]bool, len(obs))
	var x, pending, failed [][]float64
	var y []float64
	for _, o := range obs {
		seen[o.key] = true
		switch o.state {
		case Complete:
			x = append(x, o.u)
			y = append(y, o.y)
		case Failed:
			failed = append(failed, o.u)
		default:
			pending = append(pending, o.u)
		}
	}
	nInit := h.InitPoints
	if nInit <= 0 {
		nInit = 1 + d
	}
	if len(x)+len(failed) < nInit || len(x) < 2 {
		return h.design(rng, space, obs, seen, nInit, n), nil
	}
	worst := y[0]
	for _, v := range y {
		worst = math.Max(worst, v)
	}
	for _, u := range failed {
		x = append(x, u)
		y = append(y, worst)
	}
	z := h.transform(y)

	opts := h.GP
	if !h.NoWarp {
		opts.Warp = make([]bool, d)
		for j, p := range space {
			opts.Warp[j] = p.Kind != Categorical
		}
	}
	gp, err := FitGP(rng, x, z, opts)
	if err != nil {
		// A model that cannot be fitted should not end a tuning run: fall back to random.
		return h.design(rng, space, obs, seen, nInit, n), nil
	}
	if len(pending) > 0 {
		m, _ := gp.Predict(pending)
		xa := append(append([][]float64(nil), x...), pending...)
		za := append(append([]float64(nil), z...), m...)
		if g2, err := NewGP(xa, za, gp.Params); err == nil {
			gp = g2
		}
	}

	// The incumbent: the model's mean at the best finished point (as HEBO), and the UCB
	// weight κ of HEBO's schedule (Srinivas et al.'s with υ = ½, δ = 0.01).
	bestI := 0
	for i := range z {
		if z[i] < z[bestI] {
			bestI = i
		}
	}
	tm, _ := gp.Predict(x[bestI : bestI+1])
	tau := tm[0] - 1e-4
	iter := max(1, len(obs)/n)
	kappa := math.Sqrt(0.5 * 2 * ((2+float64(d)/2)*math.Log(float64(iter)) + math.Log(3*math.Pi*math.Pi/(3*0.01))))

	score := func(cs []*acqCandidate) {
		us := make([][]float64, len(cs))
		for i, c := range cs {
			us[i] = c.u
		}
		mean, variance := gp.Predict(us)
		for i, c := range cs {
			sd := math.Max(math.Sqrt(variance[i]), 1e-9)
			c.objs = []float64{
				LowerConfidenceBound(mean[i], sd, kappa),
				-LogExpectedImprovement(mean[i], sd, tau),
				-LogProbabilityOfImprovement(mean[i], sd, tau),
			}
		}
	}

	archive, front := h.optimizeAcq(rng, space, x, z, seen, score)
	return h.selectBatch(rng, space, gp, archive, front, obs, seen, nInit, n), nil
}

// transform applies HEBO's output transform, or just standardizes.
func (h HEBO) transform(y []float64) []float64 {
	var pt PowerTransform
	var err error
	if h.NoPowerTransform {
		pt, err = FitPowerTransform(y, Standardize)
	} else {
		lo := y[0]
		for _, v := range y {
			lo = math.Min(lo, v)
		}
		method := YeoJohnson
		if lo > 0 {
			method = BoxCox
		}
		pt, err = FitPowerTransform(y, method)
		if err != nil && method == BoxCox {
			pt, err = FitPowerTransform(y, YeoJohnson)
		}
		if err != nil {
			pt, err = FitPowerTransform(y, Standardize)
		}
	}
	if err != nil { // constant losses: the GP standardizes them itself
		return append([]float64(nil), y...)
	}
	z := make([]float64, len(y))
	for i, v := range y {
		z[i] = pt.Transform(v)
	}
	return z
}

// optimizeAcq approximates the Pareto front of the acquisitions over the space. It returns
// every scored acqCandidate and the indices of the non-dominated ones.
func (h HEBO) optimizeAcq(rng *rand.Rand, space Space, x [][]float64, z []float64, seen map[string]bool,
	score func([]*acqCandidate)) ([]*acqCandidate, []int) {
	d := len(space)
	nCand, pop, gens := h.Candidates, h.Population, h.Generations
	if nCand <= 0 {
		nCand = 1000
	}
	if pop <= 0 {
		pop = 100
	}
	if gens <= 0 {
		gens = 20
	}
	var archive []*acqCandidate
	inArchive := map[string]bool{}
	add := func(u []float64, batch []*acqCandidate) []*acqCandidate {
		cu, cfg, key := canonical(space, u)
		if seen[key] || inArchive[key] {
			return batch
		}
		inArchive[key] = true
		return append(batch, &acqCandidate{u: cu, cfg: cfg, key: key})
	}
	mutate := func(u []float64) []float64 {
		v := append([]float64(nil), u...)
		// Step sizes log-uniform in [0.005, 0.3]: both local refinement and jumps.
		sd := math.Exp(math.Log(0.005) + rng.Float64()*math.Log(0.3/0.005))
		p := 1 / float64(d)
		hit := false
		for j := range v {
			if rng.Float64() < p {
				v[j] = reflect01(v[j] + sd*rng.NormFloat64())
				hit = true
			}
		}
		if !hit {
			j := rng.IntN(d)
			v[j] = reflect01(v[j] + sd*rng.NormFloat64())
		}
		return v
	}

	var batch []*acqCandidate
	for i := 0; i < nCand; i++ {
		u := make([]float64, d)
		for j := range u {
			u[j] = rng.Float64()
		}
		batch = add(u, batch)
	}
	// Local perturbations of the best trials seed the front near the incumbents (HEBO seeds
	// its population with the best point).
	order := argsort(z)
	for _, i := range order[:min(5, len(order))] {
		for k := 0; k < 20; k++ {
			batch = add(mutate(x[i]), batch)
		}
	}
	score(batch)
	archive = append(archive, batch...)
	front := paretoFront(objsOf(archive), indices(len(archive)))
	for g := 0; g < gens && len(front) > 0; g++ {
		batch = batch[:0:0]
		for k := 0; k < pop; k++ {
			a, b := archive[front[rng.IntN(len(front))]].u, archive[front[rng.IntN(len(front))]].u
			child := make([]float64, d)
			for j := range child {
				if rng.IntN(2) == 0 {
					child[j] = a[j]
				} else {
					child[j] = b[j]
				}
			}
			batch = add(mutate(child), batch)
		}
		if len(batch) == 0 {
			continue
		}
		score(batch)
		first := len(archive)
		archive = append(archive, batch...)
		idx := append(front, indices(len(archive))[first:]...)
		front = paretoFront(objsOf(archive), idx)
	}
	return archive, front
}

// selectBatch picks n configs from the front (then from further fronts, then at random).
func (h HEBO) selectBatch(rng *rand.Rand, space Space, gp *GP, archive []*acqCandidate, front []int,
	obs []observation, seen map[string]bool, nInit, n int) []Config {
	var chosen []int
	if len(front) <= n {
		chosen = append(chosen, front...)
	} else {
		perm := rng.Perm(len(front))[:n]
		for _, p := range perm {
			chosen = append(chosen, front[p])
		}
		if n > 2 {
			us := make([][]float64, len(front))
			for i, f := range front {
				us[i] = archive[f].u
			}
			mean, variance := gp.Predict(us)
			bestMean, mostVar := 0, 0
			for i := range front {
				if mean[i] < mean[bestMean] {
					bestMean = i
				}
				if variance[i] > variance[mostVar] {
					mostVar = i
				}
			}
			// Put the two in the first slots, keeping the rest of the random draw.
			for slot, want := range []int{front[mostVar], front[bestMean]} {
				if i := slices.Index(chosen, want); i >= 0 {
					chosen[i] = chosen[slot]
				}
				chosen[slot] = want
			}
		}
	}
	// Too small a front: take the next fronts of the archive.
	if len(chosen) < n {
		taken := map[int]bool{}
		for _, c := range chosen {
			taken[c] = true
		}
		for len(chosen) < n {
			var rest []int
			for i := range archive {
				if !taken[i] {
					rest = append(rest, i)
				}
			}
			if len(rest) == 0 {
				break
			}
			next := paretoFront(objsOf(archive), rest)
			rng.Shuffle(len(next), func(i, j int) { next[i], next[j] = next[j], next[i] })
			for _, i := range next[:min(len(next), n-len(chosen))] {
				chosen = append(chosen, i)
				taken[i] = true
			}
		}
	}
	out := make([]Config, 0, n)
	for _, c := range chosen {
		out = append(out, archive[c].cfg)
		seen[archive[c].key] = true
	}
	if len(out) < n { // a space with fewer untried configs than asked for
		out = append(out, h.design(rng, space, obs, seen, nInit, n-len(out))...)
	}
	return out
}

// design continues the random initial design by n points, avoiding configs already seen
// where a few redraws can.
func (h HEBO) design(rng *rand.Rand, space Space, obs []observation, seen map[string]bool, nInit, n int) []Config {
	prev := make([][]float64, 0, len(obs)+n)
	for _, o := range obs {
		prev = append(prev, o.u)
	}
	strata := max(nInit, len(prev)+n)
	out := make([]Config, 0, n)
	for len(out) < n {
		c := designPoint(rng, space, prev, strata, seen)
		seen[configKey(c)] = true
		prev = append(prev, space.ToUnit(c))
		out = append(out, c)
	}
	return out
}

// reflect01 folds a coordinate back into [0,1].
func reflect01(v float64) float64 {
	for v < 0 || v > 1 {
		if v < 0 {
			v = -v
		}
		if v > 1 {
			v = 2 - v
		}
	}
	return v
}

func objsOf(cs []*acqCandidate) [][]float64 {
	o := make([][]float64, len(cs))
	for i, c := range cs {
		o[i] = c.objs
	}
	return o
}

func indices(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// argsort returns the indices of v in increasing order of value (stable).
func argsort(v []float64) []int {
	idx := indices(len(v))
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	return idx
}
