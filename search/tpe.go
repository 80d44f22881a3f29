package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mathext"
)

// TPE is the Tree-structured Parzen Estimator of Bergstra et al. (2011) as Hyperopt's
// tpe.suggest runs it, the "Hyperopt" baseline of the AHSC paper (Yedida & Saha 2024,
// Section 4; the authors' hpobench/hyperopt_hpo.py).
//
// After NStartup finished trials it splits them by loss into a good set (the Gamma(n) best)
// and a bad set, fits one adaptive Parzen estimator per dimension to each set — l(x) to the
// good, g(x) to the bad — draws NCandidates values of each dimension from l and keeps the
// one maximizing l(x)/g(x). Dimensions are modelled and chosen independently, as Hyperopt
// (and Optuna's default, multivariate=false) does, so the proposal is the product of
// per-dimension argmaxes.
//
// The estimators live in the unit coordinates of Space.ToUnit, which makes log dimensions
// Gaussian mixtures in log space exactly as Hyperopt's loguniform and the prior a single wide
// component centred on the range (Hyperopt: μ = mid-range, σ = range). A Float dimension is a
// Gaussian mixture truncated to [0, 1] with Hyperopt's bandwidth rule: each observation's σ is
// the larger gap to its sorted neighbours (the prior included), clipped to
// [1/min(100, n+1), 1]. An Int dimension uses the same mixture but scores a candidate by the
// probability mass of the integer's cell (Hyperopt's quniform). A Categorical dimension is a
// smoothed histogram: counts plus PriorWeight per choice. Observations older than the newest
// Forgetting ones get linearly ramped-down weights (Hyperopt's linear forgetting).
//
// Failed trials count as the worst losses, as Hyperopt gives them infinite loss: they land in
// g(x), which steers proposals away from configurations that crash (only their
// configurations enter the Parzen estimators, never their NaN values). Running trials are
// ignored. Run through Sequential, failed evaluations count against the budget, as in the
// papers' code.
// When trials of several fidelities are passed, only those at the highest fidelity among the
// finished ones are modelled (a Study's are all at fidelity 1).
//
// The zero value is Hyperopt's defaults. TPE keeps no state between calls: a proposal is a
// function of the trials and of rng alone.
type TPE struct {
	// NStartup is the number of finished trials proposed at random before the model is used.
	// 0 means 20, Hyperopt's n_startup_jobs (Optuna uses 10); a negative value means none.
	NStartup int
	// NCandidates is how many draws from l(x) are scored per dimension; 0 means 24.
	NCandidates int
	// Gamma gives the size of the good set for n finished trials; nil means HyperoptGamma.
	Gamma func(n int) int
	// PriorWeight is the weight of the prior component and the per-choice pseudo-count of
	// categorical histograms, relative to an observation's weight of 1; 0 means 1.
	PriorWeight float64
	// Forgetting is the number of most recent observations kept at full weight; 0 means 25,
	// negative disables forgetting.
	Forgetting int
}

// HyperoptGamma is Hyperopt's split: the ⌈0.25·√n⌉ best trials, at most 25, are good.
func HyperoptGamma(n int) int {
	return min(int(math.Ceil(0.25*math.Sqrt(float64(n)))), 25)
}

// OptunaGamma is Optuna's default split: the ⌈0.1·n⌉ best trials, at most 25, are good.
func OptunaGamma(n int) int {
	return min(int(math.Ceil(0.1*float64(n))), 25)
}

func (t TPE) startup() int {
	switch {
	case t.NStartup == 0:
		return 20
	case t.NStartup < 0:
		return 0
	}
	return t.NStartup
}

func (t TPE) candidates() int {
	if t.NCandidates <= 0 {
		return 24
	}
	return t.NCandidates
}

func (t TPE) priorWeight() float64 {
	if t.PriorWeight <= 0 {
		return 1
	}
	return t.PriorWeight
}

func (t TPE) forgetting() int {
	switch {
	case t.Forgetting == 0:
		return 25
	case t.Forgetting < 0:
		return 0
	}
	return t.Forgetting
}

// tpeObs is one finished trial as the model sees it.
type tpeObs struct {
	values []float64
	loss   float64 // +Inf for a failed trial
}

// Ask proposes the next configuration: uniform at random during start-up, otherwise the
// per-dimension argmax of l(x)/g(x) over candidates drawn from l.
func (t TPE) Ask(rng *rand.Rand, space Space, trials []Trial) (Config, error) {
	if rng == nil {
		return Config{}, errNilRand
	}
	obs, err := tpeObservations(space, trials)
	if err != nil {
		return Config{}, err
	}
	if len(obs) < t.startup() {
		return Random{}.Ask(rng, space, trials)
	}
	good, bad := t.split(obs)
	u := make([]float64, len(space))
	for d, p := range space {
		u[d] = t.proposeDim(rng, p, obsColumn(good, d), obsColumn(bad, d))
	}
	return space.FromUnit(u), nil
}

// tpeObservations collects the finished trials at the highest fidelity present, in trial
// order (which linear forgetting relies on), failed ones with infinite loss.
func tpeObservations(space Space, trials []Trial) ([]tpeObs, error) {
	top := math.Inf(-1)
	for _, tr := range trials {
		if tr.State == Complete || tr.State == Failed {
			top = math.Max(top, tr.Fidelity)
		}
	}
	var obs []tpeObs
	for _, tr := range trials {
		if (tr.State != Complete && tr.State != Failed) || tr.Fidelity != top {
			continue
		}
		if len(tr.Config.Values) != len(space) {
			return nil, fmt.Errorf("search: trial %d has %d values for a %d-dimensional space",
				tr.ID, len(tr.Config.Values), len(space))
		}
		loss := tr.Value
		if tr.State == Failed || math.IsNaN(loss) {
			loss = math.Inf(1)
		}
		obs = append(obs, tpeObs{values: tr.Config.Values, loss: loss})
	}
	return obs, nil
}

// split divides the observations into the Gamma(n) of least loss and the rest, each kept in
// trial order. Ties are broken by trial order.
func (t TPE) split(obs []tpeObs) (good, bad []tpeObs) {
	gamma := t.Gamma
	if gamma == nil {
		gamma = HyperoptGamma
	}
	nGood := min(max(gamma(len(obs)), 0), len(obs))
	order := make([]int, len(obs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return obs[order[a]].loss < obs[order[b]].loss })
	isGood := make([]bool, len(obs))
	for _, i := range order[:nGood] {
		isGood[i] = true
	}
	for i, o := range obs {
		if isGood[i] {
			good = append(good, o)
		} else {
			bad = append(bad, o)
		}
	}
	return good, bad
}

// obsColumn extracts dimension d's raw values.
func obsColumn(obs []tpeObs, d int) []float64 {
	col := make([]float64, len(obs))
	for i, o := range obs {
		col[i] = o.values[d]
	}
	return col
}

// proposeDim returns dimension p's unit coordinate of the best of the candidates drawn from
// the good model.
func (t TPE) proposeDim(rng *rand.Rand, p Param, good, bad []float64) float64 {
	n := t.candidates()
	var best, bestScore float64
	first := true
	consider := func(u, score float64) {
		if math.IsNaN(score) {
			score = math.Inf(-1)
		}
		if first || score > bestScore {
			best, bestScore, first = u, score, false
		}
	}
	if p.Kind == Categorical {
		k := len(p.Choices)
		l := t.histogram(good, k)
		g := t.histogram(bad, k)
		for range n {
			c := drawWeighted(rng, l)
			consider((float64(c)+0.5)/float64(k), math.Log(l[c])-math.Log(g[c]))
		}
		return best
	}
	l := newParzen(unitColumn(p, good), t.priorWeight(), t.forgetting())
	g := newParzen(unitColumn(p, bad), t.priorWeight(), t.forgetting())
	for range n {
		u := l.sample(rng)
		if p.Kind == Int {
			a, b, centre := intCell(p, u)
			consider(centre, l.logMass(a, b)-g.logMass(a, b))
		} else {
			consider(u, l.logPDF(u)-g.logPDF(u))
		}
	}
	return best
}

// unitColumn maps a Float or Int dimension's values to unit coordinates.
func unitColumn(p Param, vals []float64) []float64 {
	sp := Space{p}
	u := make([]float64, len(vals))
	for i, v := range vals {
		u[i] = sp.ToUnit(Config{Space: sp, Values: []float64{v}})[0]
	}
	return u
}

// intCell returns the unit-coordinate interval [a, b] of the integer that FromUnit rounds u to,
// and that integer's own unit coordinate. The cells partition [0, 1] because ToUnit widens
// integer ranges by ½ on each side.
func intCell(p Param, u float64) (a, b, centre float64) {
	sp := Space{p}
	v := sp.FromUnit([]float64{u}).Values[0]
	lo, hi := p.bounds()
	unit := func(x float64) float64 {
		if p.Log {
			x = math.Log(x)
		}
		if hi <= lo {
			return 0.5
		}
		return math.Min(math.Max((x-lo)/(hi-lo), 0), 1)
	}
	return unit(v - 0.5), unit(v + 0.5), unit(v)
}

// histogram is Hyperopt's categorical posterior: forgetting-weighted counts of each choice
// plus PriorWeight pseudo-counts, normalized.
func (t TPE) histogram(vals []float64, k int) []float64 {
	w := forgettingWeights(len(vals), t.forgetting())
	p := make([]float64, k)
	for i := range p {
		p[i] = t.priorWeight()
	}
	for i, v := range vals {
		c := int(v)
		if c >= 0 && c < k {
			p[c] += w[i]
		}
	}
	floats.Scale(1/floats.Sum(p), p)
	return p
}

// drawWeighted draws an index with probabilities proportional to w.
func drawWeighted(rng *rand.Rand, w []float64) int {
	r := rng.Float64() * floats.Sum(w)
	for i, wi := range w {
		if r < wi {
			return i
		}
		r -= wi
	}
	for i := len(w) - 1; i > 0; i-- {
		if w[i] > 0 {
			return i
		}
	}
	return 0
}

// forgettingWeights are Hyperopt's linear_forgetting_weights for n observations in time order:
// the newest lf weigh 1 and the older ones ramp linearly from 1/n up to 1.
func forgettingWeights(n, lf int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	if lf <= 0 || n <= lf {
		return w
	}
	ramp := n - lf
	for i := range ramp {
		if ramp == 1 {
			w[i] = 1 / float64(n)
		} else {
			w[i] = 1/float64(n) + float64(i)*(1-1/float64(n))/float64(ramp-1)
		}
	}
	return w
}

// parzen is a one-dimensional Gaussian mixture truncated to [0, 1]: Hyperopt's adaptive
// Parzen estimator (adaptive_parzen_normal with GMM1 and low=0, high=1).
type parzen struct {
	w, mu, sigma []float64
	logCoef      []float64 // log(w/(σ√(2π))), each component's log density at its mean
	mass         []float64 // each component's probability of [0, 1]
	logAccept    float64   // log Σ w·mass, the truncation's normalizer
}

// newParzen fits the estimator to observations in [0, 1] listed in time order, with the prior
// component N(½, 1) of weight priorWeight and linear forgetting after lf observations.
func newParzen(obs []float64, priorWeight float64, lf int) parzen {
	const priorMu, priorSigma = 0.5, 1.0
	n := len(obs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return obs[order[a]] < obs[order[b]] })
	// The prior goes before the first observation not below its mean (numpy's searchsorted).
	pos := sort.Search(n, func(i int) bool { return obs[order[i]] >= priorMu })
	ow := forgettingWeights(n, lf)
	m := n + 1
	pz := parzen{w: make([]float64, m), mu: make([]float64, m), sigma: make([]float64, m)}
	for i := range m {
		switch {
		case i < pos:
			pz.mu[i], pz.w[i] = obs[order[i]], ow[order[i]]
		case i == pos:
			pz.mu[i], pz.w[i] = priorMu, priorWeight
		default:
			pz.mu[i], pz.w[i] = obs[order[i-1]], ow[order[i-1]]
		}
	}
	switch {
	case n == 1:
		// Hyperopt gives a lone observation half the prior's width.
		pz.sigma[1-pos] = 0.5 * priorSigma
	case n >= 2:
		for i := 1; i < m-1; i++ {
			pz.sigma[i] = math.Max(pz.mu[i]-pz.mu[i-1], pz.mu[i+1]-pz.mu[i])
		}
		pz.sigma[0] = pz.mu[1] - pz.mu[0]
		pz.sigma[m-1] = pz.mu[m-1] - pz.mu[m-2]
	}
	// Hyperopt's "magic formula": no component wider than the prior, none narrower than the
	// prior over min(100, number of components + 1).
	minSigma := priorSigma / math.Min(100, float64(m+1))
	for i := range pz.sigma {
		pz.sigma[i] = math.Min(math.Max(pz.sigma[i], minSigma), priorSigma)
	}
	pz.sigma[pos] = priorSigma
	floats.Scale(1/floats.Sum(pz.w), pz.w)

	pz.mass = make([]float64, m)
	pz.logCoef = make([]float64, m)
	accept := 0.0
	for i := range m {
		pz.logCoef[i] = math.Log(pz.w[i]) - math.Log(pz.sigma[i]) - 0.5*math.Log(2*math.Pi)
		pz.mass[i] = parzenNormalMass((0-pz.mu[i])/pz.sigma[i], (1-pz.mu[i])/pz.sigma[i])
		accept += pz.w[i] * pz.mass[i]
	}
	pz.logAccept = math.Log(accept)
	return pz
}

// sample draws from the truncated mixture: a component with probability proportional to its
// weight times its mass in [0, 1], then that component truncated to [0, 1] by inverting its
// CDF. This is the distribution Hyperopt's rejection sampler draws from, at two random numbers
// a draw.
func (pz parzen) sample(rng *rand.Rand) float64 {
	wm := make([]float64, len(pz.w))
	for i := range wm {
		wm[i] = pz.w[i] * pz.mass[i]
	}
	i := drawWeighted(rng, wm)
	return truncUnitNormal(rng.Float64(), pz.mu[i], pz.sigma[i])
}

// logPDF is the log density of the truncated mixture at x in [0, 1].
func (pz parzen) logPDF(x float64) float64 {
	terms := make([]float64, len(pz.w))
	for i := range terms {
		z := (x - pz.mu[i]) / pz.sigma[i]
		terms[i] = pz.logCoef[i] - 0.5*z*z
	}
	return floats.LogSumExp(terms) - pz.logAccept
}

// logMass is the log probability the truncated mixture gives [a, b] ⊆ [0, 1].
func (pz parzen) logMass(a, b float64) float64 {
	s := 0.0
	for i := range pz.w {
		s += pz.w[i] * parzenNormalMass((a-pz.mu[i])/pz.sigma[i], (b-pz.mu[i])/pz.sigma[i])
	}
	return math.Log(s) - pz.logAccept
}

// parzenNormalMass is Φ(zb) − Φ(za), computed on the side of the smaller tail to keep precision.
func parzenNormalMass(za, zb float64) float64 {
	if za > 0 {
		return parzenCDF(-za) - parzenCDF(-zb)
	}
	return parzenCDF(zb) - parzenCDF(za)
}

// parzenCDF is the standard normal CDF, accurate in the lower tail.
func parzenCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// truncUnitNormal maps r ∈ [0, 1) to N(mu, sigma²) truncated to [0, 1] by inverting the CDF.
// The interval always holds mu here, so the CDF values never both sit in one far tail.
func truncUnitNormal(r, mu, sigma float64) float64 {
	pa := parzenCDF((0 - mu) / sigma)
	pb := parzenCDF((1 - mu) / sigma)
	x := mu + sigma*mathext.NormalQuantile(pa+r*(pb-pa))
	if math.IsNaN(x) {
		x = mu
	}
	return math.Min(math.Max(x, 0), 1)
}
