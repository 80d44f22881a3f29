package freedman

import (
	"fmt"
	"math"
	"slices"

	"github.com/hyperflat/hyperflat/hypergrad"
	"github.com/hyperflat/hyperflat/internal/nprand"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// objective returns the number of selection steps and the objective of method m on this
// data; pac-bayes draws its chains' noise from the stream langevinSeed.
func (d *dataset) objective(m string, cfg *Config, langevinSeed uint64) (int, func(set []int) (float64, error)) {
	steps := cfg.steps(m)
	switch m {
	case methodValidation:
		return steps, d.validationMSE
	case methodPACBayes:
		lc := langevinConfig{Chains: cfg.Chains, Steps: cfg.LangevinSteps, Eta: cfg.Eta, Beta: cfg.Beta, Seed: langevinSeed}
		exact := cfg.Objective == "exact"
		var noise []float64
		if cfg.Data == dataAuthors && !exact {
			noise = authorsChainNoise(cfg.Chains, steps, cfg.LangevinSteps)
		}
		return steps, func(set []int) (float64, error) {
			lp := d.langevinProblem(set)
			var est pacBayesEstimate
			var err error
			switch {
			case exact:
				est, err = lp.exact(lc)
			case noise != nil:
				est, err = lp.authorsMonteCarlo(lc, noise)
			default:
				est, err = lp.monteCarlo(lc)
			}
			return est.Objective, err
		}
	case methodAIC:
		return steps, d.all.aic
	case methodBIC:
		return steps, d.all.bic
	}
	return steps, d.cvMSE
}

// langevinProblem is the quadratic training and validation risk of one feature set:
// R̂(θ) = ½θᵀΣθ − cᵀθ + ½‖y‖²/n with Σ = XᵀX/n and c = Xᵀy/n on each block.
type langevinProblem struct {
	k              int
	sigmaT, sigmaV []float64 // k×k
	cT, cV         []float64
	yyV            float64 // ‖y_V‖²/n_V
	nT             int
}

func (d *dataset) langevinProblem(set []int) langevinProblem {
	lp := langevinProblem{k: len(set), yyV: d.val.yy / float64(d.val.n), nT: d.train.n}
	lp.sigmaT, lp.cT = d.train.slice(set, float64(d.train.n))
	lp.sigmaV, lp.cV = d.val.slice(set, float64(d.val.n))
	return lp
}

// mseV is the full validation MSE at θ: θᵀΣ_Vθ − 2θᵀc_V + ‖y_V‖²/n_V.
func (lp *langevinProblem) mseV(theta []float64) float64 {
	k := lp.k
	s := lp.yyV
	for i := range k {
		q := 0.0
		row := lp.sigmaV[i*k : (i+1)*k]
		for j, x := range theta {
			q += row[j] * x
		}
		s += theta[i]*q - 2*theta[i]*lp.cV[i]
	}
	return s
}

// langevinConfig are the sampler's settings: run_chains' η, β, T and the chain count.
type langevinConfig struct {
	Chains, Steps int
	Eta, Beta     float64
	Seed          uint64
}

// pacBayesEstimate is the Eq. 7 objective of one feature set and its two parts.
type pacBayesEstimate struct {
	Objective float64 // √(β η/4 · Fisher) + MSE
	Fisher    float64 // Σ_{t<T} E‖g_T − g_V‖²(θ_t), the mean over chains (MC) or exact
	MSE       float64 // E MSE_V(θ_T)
	// Per chain (Monte Carlo only): Σ_t ‖g_T − g_V‖²(θ_t^c) and MSE_V(θ_T^c), whose spread
	// gives the estimate's standard errors (the error bands of Fig. 4.1(b)).
	ChainFisher, ChainMSE []float64
}

// regularizer is the √Σ term of Eq. 7 in the form the authors' run_chains computes:
// √(Σ_t β η/4 · d_t²) = ζ√(Σ_t d_t²) with ζ = √(β η/4): the square root of a sum, not Eq. 7's
// sum of roots, which it bounds.
func (c langevinConfig) regularizer() hypergrad.Regularizer {
	return hypergrad.Regularizer{Form: hypergrad.SqrtSum, Zeta: math.Sqrt(c.Beta * c.Eta / 4)}
}

// monteCarlo estimates the objective with cfg.Chains Langevin chains of cfg.Steps steps
// (the authors' run_chains): θ_0 ~ N(0, I_k), θ ← θ − η g_T + √(2η/(β n_T)) ξ, recording
// ‖g_T − g_V‖² at θ_0, …, θ_{T−1}; the objective is √(Σ_t β η/4 · mean_c ‖g_T − g_V‖²) plus
// mean_c MSE_V(θ_T).
//
// Common random numbers: the authors re-seed before every candidate, so that the candidates
// of one step are compared under the same noise. We go one step further and give every
// coordinate position a of the feature set (the a-th feature selected) its own random stream,
// samplers.ChainRand(seed, a), and its own samplers.Langevin, which moves that coordinate of
// all C chains (a tensor of C entries): stream a supplies θ_0 and then each step's noise of
// coordinate a, whatever k is. So a candidate set sees the very same noise as the prefix it
// extends on their shared coordinates, which makes the comparison between prefixes of
// different lengths — the one that decides the selected set — less noisy (measured on {x1}
// vs {x1, x0} on one data draw: the standard error of the difference drops from 0.0028 with
// independent noise to 0.0020, as if with twice the chains). Within a stream the C chains draw
// consecutive normals, so chains are independent, and the result depends only on the seed.
// (One Langevin per chain, as in samplers.RunChains, would tie the noise of a coordinate to k
// and cost one Step — ~2 µs of argument checks — per chain and iteration, ~10⁸ in the paper
// preset; one per coordinate costs k Steps per iteration.)
func (lp *langevinProblem) monteCarlo(cfg langevinConfig) (pacBayesEstimate, error) {
	C, k := cfg.Chains, lp.k
	est := pacBayesEstimate{ChainFisher: make([]float64, C), ChainMSE: make([]float64, C)}
	if C < 1 {
		return est, fmt.Errorf("%d Langevin chains", C)
	}
	reg := cfg.regularizer()
	if k == 0 { // the empty model: θ has no coordinates, both gradients vanish
		for c := range C {
			est.ChainMSE[c] = lp.yyV
		}
		est.MSE, est.Objective = lp.yyV, lp.yyV
		return est, nil
	}
	// theta[a*C+c] is coordinate a of chain c; grad likewise holds g_T.
	theta, grad, gv := make([]float64, k*C), make([]float64, k*C), make([]float64, C)
	langs := make([]*samplers.Langevin, k)
	params := make([][]*tensor.Dense, k)
	grads := make([][]G.Value, k)
	for a := range k {
		rng := samplers.ChainRand(cfg.Seed, a)
		row := theta[a*C : (a+1)*C]
		for c := range row {
			row[c] = rng.NormFloat64()
		}
		langs[a] = &samplers.Langevin{Eta: cfg.Eta, Beta: cfg.Beta, N: lp.nT, Rand: rng}
		params[a] = []*tensor.Dense{tensor.New(tensor.WithShape(C), tensor.WithBacking(row))}
		grads[a] = []G.Value{tensor.New(tensor.WithShape(C), tensor.WithBacking(grad[a*C:(a+1)*C]))}
	}
	sq := make([]float64, C) // ‖g_T − g_V‖² of each chain at the current step
	for range cfg.Steps {
		clear(sq)
		for a := range k {
			gt := grad[a*C : (a+1)*C]
			for c := range C {
				gt[c], gv[c] = -lp.cT[a], -lp.cV[a]
			}
			for b := range k {
				st, sv := lp.sigmaT[a*k+b], lp.sigmaV[a*k+b]
				for c, x := range theta[b*C : (b+1)*C] {
					gt[c] += st * x
					gv[c] += sv * x
				}
			}
			for c := range C {
				d := gt[c] - gv[c]
				sq[c] += d * d
			}
		}
		step := 0.0
		for c, v := range sq {
			est.ChainFisher[c] += v
			step += v
		}
		if err := reg.Add(step / float64(C)); err != nil {
			return est, err
		}
		// Every gradient is computed before any coordinate moves: this is one Langevin step of
		// the whole vector θ, split by coordinate.
		for a := range k {
			if err := langs[a].Step(params[a], grads[a]); err != nil {
				return est, err
			}
		}
	}
	chain := make([]float64, k)
	for c := range C {
		for a := range k {
			chain[a] = theta[a*C+c]
		}
		est.ChainMSE[c] = lp.mseV(chain)
		est.MSE += est.ChainMSE[c]
	}
	est.MSE /= float64(C)
	est.Fisher = reg.Distance() * reg.Distance()
	est.Objective = reg.Value() + est.MSE
	return est, nil
}

// authorsChainNoise is the stream of standard normals every candidate's chains draw in the
// authors' run_chains, long enough for feature sets of up to maxK features: run_chains seeds
// RandomState(0) afresh for each candidate, so the stream is the same for all of them, and
// only how much of it a candidate uses (chains·k·(steps+1) values) depends on its size k.
func authorsChainNoise(chains, maxK, steps int) []float64 {
	g := make([]float64, chains*maxK*(steps+1))
	nprand.New(0).NormalFill(g, 0, 1)
	return g
}

// authorsMonteCarlo is monteCarlo with the noise of the authors' run_chains (freedman.py),
// drawn in their order from noise (authorsChainNoise): first each chain's θ_0 ~ N(0, I_k)
// (normal(size=(k, 1)) per chain), then at every step, chain after chain, ‖g_T − g_V‖² at the
// current θ and the step θ ← θ − η g_T + normal(scale=√(2η/(β n_T)), size=(k, 1)). The
// objective is theirs: √(Σ_t mean_c β(η/4)‖g_T − g_V‖²) + mean_c MSE_V(θ_T). Unlike monteCarlo's
// streams per coordinate, a candidate's chains share no noise with its prefix beyond the
// common start of the stream: the k-th coordinate of chain c reads value c·k + a, which moves
// with k.
func (lp *langevinProblem) authorsMonteCarlo(cfg langevinConfig, noise []float64) (pacBayesEstimate, error) {
	C, k, T := cfg.Chains, lp.k, cfg.Steps
	est := pacBayesEstimate{ChainFisher: make([]float64, C), ChainMSE: make([]float64, C)}
	if C < 1 || k < 1 {
		return est, fmt.Errorf("authors' chains: %d chains of %d coordinates (run_chains never scores the empty model)", C, k)
	}
	if len(noise) < C*k*(T+1) {
		return est, fmt.Errorf("authors' chains: %d noise values for %d chains × %d coordinates × %d steps", len(noise), C, k, T)
	}
	theta := slices.Clone(noise[:C*k]) // theta[c*k+a]: coordinate a of chain c
	scale := math.Sqrt(2 * cfg.Eta / (cfg.Beta * float64(lp.nT)))
	weight := cfg.Beta * (cfg.Eta / 4)
	gt := make([]float64, k) // g_T of the chain at hand, kept until every coordinate has it
	var sum float64          // Σ_t mean_c β(η/4)‖g_T − g_V‖², run_chains' chain_objective before its √
	for t := range T {
		xi := noise[(t+1)*C*k : (t+2)*C*k]
		var weighted, plain float64
		for c := range C {
			th := theta[c*k : (c+1)*k]
			var sq float64
			for a := range k {
				gT, gV := -lp.cT[a], -lp.cV[a]
				for b, x := range th {
					gT += lp.sigmaT[a*k+b] * x
					gV += lp.sigmaV[a*k+b] * x
				}
				gt[a] = gT
				sq += (gT - gV) * (gT - gV)
			}
			// The float64 conversions keep Go from fusing these products into the sums:
			// NumPy rounds each one (chains[chain] - lr * grad + noise).
			for a := range k {
				th[a] = th[a] - float64(cfg.Eta*gt[a]) + float64(scale*xi[c*k+a])
			}
			est.ChainFisher[c] += sq
			weighted += weight * sq
			plain += sq
		}
		sum += weighted / float64(C)
		est.Fisher += plain / float64(C)
	}
	for c := range C {
		est.ChainMSE[c] = lp.mseV(theta[c*k : (c+1)*k])
		est.MSE += est.ChainMSE[c]
	}
	est.MSE /= float64(C)
	est.Objective = math.Sqrt(sum) + est.MSE
	return est, nil
}

// exact is the infinite-chain limit of monteCarlo, in closed form: with
// M = I − ηΣ_T and s² = 2η/(β n_T), θ_t ~ N(μ_t, C_t) where μ_0 = 0, C_0 = I,
// μ_{t+1} = Mμ_t + ηc_T and C_{t+1} = M C_t Mᵀ + s²I; E‖g_T − g_V‖² at θ_t is
// hypergrad.LinearGaussianFisher, and E MSE_V(θ_T) = μᵀΣ_Vμ − 2μᵀc_V + ‖y_V‖²/n_V + tr(Σ_V C_T).
func (lp *langevinProblem) exact(cfg langevinConfig) (pacBayesEstimate, error) {
	k := lp.k
	reg := cfg.regularizer()
	var est pacBayesEstimate
	if k == 0 {
		est.MSE, est.Objective = lp.yyV, lp.yyV
		return est, nil
	}
	m := make([]float64, k*k) // M = I − ηΣ_T, symmetric
	for i := range m {
		m[i] = -cfg.Eta * lp.sigmaT[i]
	}
	cov := make([]float64, k*k)
	for i := range k {
		m[i*k+i]++
		cov[i*k+i] = 1
	}
	mu, next := make([]float64, k), make([]float64, k)
	tmp, tmp2 := make([]float64, k*k), make([]float64, k*k)
	s2 := 2 * cfg.Eta / (cfg.Beta * float64(lp.nT))
	for range cfg.Steps {
		f, err := hypergrad.LinearGaussianFisher(lp.sigmaT, lp.sigmaV, lp.cT, lp.cV, mu, cov)
		if err != nil {
			return est, err
		}
		if err := reg.Add(f); err != nil {
			return est, err
		}
		for i := range k {
			v := cfg.Eta * lp.cT[i]
			for j := range k {
				v += m[i*k+j] * mu[j]
			}
			next[i] = v
		}
		mu, next = next, mu
		matMul(tmp, m, cov, k)
		matMul(tmp2, tmp, m, k) // M C M (M is symmetric)
		for i := range k {
			tmp2[i*k+i] += s2
		}
		cov, tmp2 = tmp2, cov
	}
	est.MSE = lp.mseV(mu)
	for i := range k {
		for j := range k {
			est.MSE += lp.sigmaV[i*k+j] * cov[j*k+i]
		}
	}
	est.Fisher = reg.Distance() * reg.Distance()
	est.Objective = reg.Value() + est.MSE
	return est, nil
}

// matMul sets dst = a·b for k×k row-major matrices (dst must not alias a or b).
func matMul(dst, a, b []float64, k int) {
	for i := range k {
		row := dst[i*k : (i+1)*k]
		clear(row)
		for l := range k {
			x := a[i*k+l]
			for j, y := range b[l*k : (l+1)*k] {
				row[j] += x * y
			}
		}
	}
}
