package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// BOHB is Bayesian optimization with Hyperband (Falkner, Klein & Hutter, 2018) as hpbandster
// runs it with one sequential worker: Hyperband brackets of successive halving over the
// fidelity, whose new configurations come from a multivariate kernel density model (TPE's
// l(x)/g(x) with a joint KDE) fitted on the highest fidelity that has enough observations.
//
// The fidelity rungs are Eta^−s, …, Eta^−1, 1 with s = ⌊log_Eta(1/MinFidelity)⌋. With the AHSC
// authors' min_budget 1 and max_budget 30 epochs (hpobench/bohb_hpo.py; MinFidelity 1/30) and
// Eta 3 they are 1/27, 1/9, 1/3 and 1 — 30/27 ≈ 1.1, 3.3, 10 and 30 epochs, the budgets
// hpbandster uses — and one Hyperband round is the brackets (27, 9, 3, 1 configs), (9, 3, 1),
// (6, 2) and (4) at rising starting fidelities, 15 full-fidelity equivalents in all. An objective that trains round(30·fidelity)
// epochs thus trains 1, 3, 10 or 30.
//
// Search's budget counts full-fidelity-equivalent evaluations: each evaluation costs its
// fidelity, so BOHB with budget 30 trains about as much as 30 full evaluations do (two
// Hyperband rounds with the defaults). A bracket too expensive for what is left of the budget
// starts fewer configurations, or, if even one configuration per rung does not fit, gives way
// to the next cheaper bracket; every bracket ends in a full-fidelity evaluation, so any
// budget ≥ 1 gets at least one. Failed evaluations (error or non-finite value) cost their
// fidelity too, count as the worst losses in the model (as hpbandster does; the KDEs only
// see their configurations), and are never promoted; budget they leave unspent passes to
// later brackets. In short, failed evaluations count against the budget, as in the papers'
// code.
//
// The zero value is hpbandster's defaults with that fidelity range.
type BOHB struct {
	// Eta is successive halving's reduction factor; 0 means 3.
	Eta float64
	// MinFidelity is the least fidelity, in (0, 1]; 0 means 1/30 (1 of 30 epochs).
	MinFidelity float64
	// RandomFraction is the probability of sampling a new configuration uniformly instead of
	// from the model; 0 means 1/3, negative means never.
	RandomFraction float64
	// TopNPercent is the percentage of the observations the good density l(x) is fitted to;
	// 0 means 15.
	TopNPercent float64
	// NumSamples is how many draws from l(x) are scored per model-based proposal; 0 means 64.
	NumSamples int
	// BandwidthFactor widens l(x)'s bandwidths when drawing from it, to explore; 0 means 3.
	BandwidthFactor float64
	// MinBandwidth is the least KDE bandwidth, which keeps the densities from collapsing on
	// repeated values; 0 means 1e-3.
	MinBandwidth float64
	// MinPointsInModel is how many observations a fidelity needs before it gets a model; it
	// is at least, and by default, the number of dimensions plus one.
	MinPointsInModel int
}

// Name is "BOHB".
func (BOHB) Name() string { return "BOHB" }

// bohbParams is a BOHB with defaults filled in.
type bohbParams struct {
	eta, randomFraction, topN, bwFactor, minBW float64
	numSamples, minPoints                      int
	rungs                                      []float64
}

func (b BOHB) params(dims int) (bohbParams, error) {
	p := bohbParams{
		eta: b.Eta, randomFraction: b.RandomFraction, topN: b.TopNPercent,
		bwFactor: b.BandwidthFactor, minBW: b.MinBandwidth,
		numSamples: b.NumSamples, minPoints: max(b.MinPointsInModel, dims+1),
	}
	if p.eta == 0 {
		p.eta = 3
	}
	switch {
	case p.randomFraction == 0:
		p.randomFraction = 1.0 / 3
	case p.randomFraction < 0:
		p.randomFraction = 0
	}
	if p.topN == 0 {
		p.topN = 15
	}
	if p.bwFactor == 0 {
		p.bwFactor = 3
	}
	if p.minBW == 0 {
		p.minBW = 1e-3
	}
	if p.numSamples == 0 {
		p.numSamples = 64
	}
	switch {
	case !(p.eta > 1):
		return p, fmt.Errorf("search: BOHB needs Eta > 1, not %v", b.Eta)
	case !(p.topN > 0 && p.topN < 100):
		return p, fmt.Errorf("search: BOHB needs TopNPercent in (0, 100), not %v", b.TopNPercent)
	case !(p.bwFactor > 0) || !(p.minBW > 0) || p.numSamples < 0:
		return p, errors.New("search: BOHB needs positive BandwidthFactor, MinBandwidth and NumSamples")
	}
	var err error
	p.rungs, err = b.Fidelities()
	return p, err
}

// Fidelities returns the successive-halving rungs, lowest first; the last is 1.
func (b BOHB) Fidelities() ([]float64, error) {
	eta, minF := b.Eta, b.MinFidelity
	if eta == 0 {
		eta = 3
	}
	if minF == 0 {
		minF = 1.0 / 30
	}
	if !(eta > 1) || !(minF > 0 && minF <= 1) {
		return nil, fmt.Errorf("search: BOHB needs Eta > 1 and MinFidelity in (0, 1], not %v and %v", b.Eta, b.MinFidelity)
	}
	// hpbandster: max_SH_iter = −int(log(min/max)/log(η)) + 1; the epsilon keeps an exact
	// power of η (MinFidelity 1/27) from losing its rung to rounding.
	smax := int(math.Floor(math.Log(1/minF)/math.Log(eta) + 1e-9))
	rungs := make([]float64, smax+1)
	for i := range rungs {
		rungs[i] = math.Pow(eta, -float64(smax-i))
	}
	return rungs, nil
}

// bohbObs is one finished evaluation as the model sees it.
type bohbObs struct {
	vec  []float64 // continuous dimensions in unit coordinates, categorical as choice index
	loss float64   // +Inf for a failure
}

// bohbModel is the pair of densities fitted on one rung.
type bohbModel struct{ good, bad *productKDE }

// bohbRun is the state of one Search.
type bohbRun struct {
	p      bohbParams
	space  Space
	levels []int
	rng    *rand.Rand
	obj    Objective
	st     *Study
	obs    [][]bohbObs  // per rung
	models []*bohbModel // per rung, nil until the rung has enough observations
}

// Search runs Hyperband brackets until less than one full-fidelity evaluation of budget is
// left, and returns every evaluation, each with its Fidelity.
func (b BOHB) Search(ctx context.Context, rng *rand.Rand, space Space, obj Objective, budget int) ([]Trial, error) {
	if err := space.Validate(); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("search: BOHB without an objective")
	}
	if rng == nil {
		return nil, errNilRand
	}
	p, err := b.params(len(space))
	if err != nil {
		return nil, err
	}
	r := &bohbRun{
		p: p, space: space, rng: rng, obj: obj,
		st:     &Study{Space: space}, // for Tell's failure rules; BOHB never asks it
		levels: make([]int, len(space)),
		obs:    make([][]bohbObs, len(p.rungs)),
		models: make([]*bohbModel, len(p.rungs)),
	}
	for j, q := range space {
		if q.Kind == Categorical {
			r.levels[j] = len(q.Choices)
		}
	}
	remaining := float64(budget)
	for iter := 0; ; iter++ {
		ns, first := r.plan(iter, remaining)
		if ns == nil {
			break
		}
		spent, err := r.bracket(ctx, ns, first)
		remaining -= spent
		if err != nil {
			return r.st.Trials(), err
		}
	}
	return r.st.Trials(), nil
}

// costSlack absorbs rounding in sums of fidelities such as 27·(1/27).
const costSlack = 1e-9

// plan returns the configuration counts per rung of Hyperband's bracket number iter and the
// rung it starts on, shrunk to fit remaining; nil when nothing fits.
func (r *bohbRun) plan(iter int, remaining float64) (ns []int, first int) {
	smax := len(r.p.rungs) - 1
	for s := smax - iter%(smax+1); s >= 0; s-- {
		// hpbandster: n0 = ⌊(smax+1)/(s+1)⌋·η^s, then n_i = max(⌊n0·η^−i⌋, 1).
		n0 := int(math.Floor(float64((smax+1)/(s+1))*math.Pow(r.p.eta, float64(s)) + costSlack))
		for n := n0; n >= 1; n-- {
			ns = make([]int, s+1)
			cost := 0.0
			for i := range ns {
				ns[i] = max(int(math.Floor(float64(n)*math.Pow(r.p.eta, -float64(i))+costSlack)), 1)
				cost += float64(ns[i]) * r.p.rungs[smax-s+i]
			}
			if cost <= remaining+costSlack {
				return ns, smax - s
			}
		}
	}
	return nil, 0
}

// bracket runs successive halving: ns[0] new configurations on rung first, the best ns[i] of
// the survivors of each rung on the next. It returns the fidelity spent.
func (r *bohbRun) bracket(ctx context.Context, ns []int, first int) (float64, error) {
	spent := 0.0
	var prev []Trial
	for i, n := range ns {
		rung := first + i
		var cands []Config
		if i > 0 {
			cands = promoteBest(prev, n)
			if len(cands) == 0 {
				return spent, nil
			}
			n = len(cands)
		}
		prev = prev[:0:0]
		for j := range n {
			if err := ctx.Err(); err != nil {
				return spent, err
			}
			var cfg Config
			if i == 0 {
				cfg = r.propose()
			} else {
				cfg = cands[j]
			}
			t, err := r.evaluate(ctx, cfg, rung)
			spent += r.p.rungs[rung]
			if err != nil {
				return spent, err
			}
			prev = append(prev, t)
		}
	}
	return spent, nil
}

// promoteBest returns the configurations of the n least losses among the completed trials,
// ties in trial order. Failed trials are never promoted.
func promoteBest(trials []Trial, n int) []Config {
	var ok []Trial
	for _, t := range trials {
		if t.State == Complete {
			ok = append(ok, t)
		}
	}
	sort.SliceStable(ok, func(a, b int) bool { return ok[a].Value < ok[b].Value })
	cfgs := make([]Config, 0, n)
	for _, t := range ok[:min(n, len(ok))] {
		cfgs = append(cfgs, t.Config)
	}
	return cfgs
}

// evaluate runs the objective on cfg at the rung's fidelity, records the trial and refits that
// rung's model. An evaluation cut short by ctx is recorded as failed with ctx's error.
func (r *bohbRun) evaluate(ctx context.Context, cfg Config, rung int) (Trial, error) {
	fid := r.p.rungs[rung]
	id := r.st.Add(cfg, fid).ID
	v, err := r.obj(ctx, cfg, fid)
	if ctxErr := ctx.Err(); ctxErr != nil {
		_ = r.st.Tell(id, math.NaN(), ctxErr)
		return r.st.trials[id], ctxErr
	}
	if err := r.st.Tell(id, v, err); err != nil {
		return Trial{}, err
	}
	t := r.st.trials[id]
	loss := t.Value
	if t.State != Complete {
		loss = math.Inf(1)
	}
	r.obs[rung] = append(r.obs[rung], bohbObs{vec: r.vector(cfg), loss: loss})
	r.refit(rung)
	return t, nil
}

// vector is cfg as the KDE sees it.
func (r *bohbRun) vector(cfg Config) []float64 {
	v := r.space.ToUnit(cfg)
	for j, k := range r.levels {
		if k > 0 {
			v[j] = cfg.Values[j]
		}
	}
	return v
}

// config inverts vector.
func (r *bohbRun) config(vec []float64) Config {
	u := make([]float64, len(vec))
	for j, k := range r.levels {
		if k > 0 {
			c := min(max(int(math.Round(vec[j])), 0), k-1)
			u[j] = (float64(c) + 0.5) / float64(k)
		} else {
			u[j] = vec[j]
		}
	}
	return r.space.FromUnit(u)
}

// refit rebuilds the rung's densities from its observations, as hpbandster's new_result: the
// best max(MinPoints, TopN%·n) observations make l(x), the next max(MinPoints,
// (100−TopN)%·n) make g(x), and either needs more points than dimensions. A rung below one
// that already has a model is not refitted, since proposals only use the highest.
func (r *bohbRun) refit(rung int) {
	for above := rung + 1; above < len(r.models); above++ {
		if r.models[above] != nil {
			return
		}
	}
	obs := r.obs[rung]
	n, d := len(obs), len(r.space)
	if n < r.p.minPoints {
		return
	}
	nGood := max(r.p.minPoints, int(r.p.topN*float64(n)/100))
	nBad := max(r.p.minPoints, int((100-r.p.topN)*float64(n)/100))
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return obs[order[a]].loss < obs[order[b]].loss })
	pick := func(idx []int) [][]float64 {
		rows := make([][]float64, len(idx))
		for i, k := range idx {
			rows[i] = obs[k].vec
		}
		return rows
	}
	good := pick(order[:min(nGood, n)])
	bad := pick(order[min(nGood, n):min(nGood+nBad, n)])
	if len(good) <= d || len(bad) <= d {
		return
	}
	r.models[rung] = &bohbModel{
		good: newProductKDE(good, r.levels, r.p.minBW),
		bad:  newProductKDE(bad, r.levels, r.p.minBW),
	}
}

// propose draws a new configuration: uniformly while no rung has a model and with probability
// RandomFraction after, otherwise the best of NumSamples draws from the widened l(x) of the
// highest rung with a model, by g(x)/l(x) (hpbandster's get_config).
func (r *bohbRun) propose() Config {
	var m *bohbModel
	for rung := len(r.models) - 1; rung >= 0 && m == nil; rung-- {
		m = r.models[rung]
	}
	if m == nil || r.rng.Float64() < r.p.randomFraction {
		cfg, _ := Random{}.Ask(r.rng, r.space, nil)
		return cfg
	}
	floor := math.Log(1e-32) // hpbandster floors both densities at 1e-32
	var best []float64
	bestVal := math.Inf(1)
	for range r.p.numSamples {
		datum := m.good.data[r.rng.IntN(len(m.good.data))]
		vec := make([]float64, len(datum))
		for j, k := range r.levels {
			bw := math.Max(m.good.bw[j], r.p.minBW)
			if k == 0 {
				vec[j] = truncUnitNormal(r.rng.Float64(), datum[j], bw*r.p.bwFactor)
			} else if r.rng.Float64() < 1-bw {
				vec[j] = datum[j]
			} else {
				vec[j] = float64(r.rng.IntN(k))
			}
		}
		val := math.Max(m.bad.logPDF(vec), floor) - math.Max(m.good.logPDF(vec), floor)
		if best == nil || val < bestVal {
			best, bestVal = vec, val
		}
	}
	if best == nil {
		cfg, _ := Random{}.Ask(r.rng, r.space, nil)
		return cfg
	}
	return r.config(best)
}
