package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/optimize"
)

// GPParams are a Gaussian process's hyperparameters in the coordinates it works in: inputs
// in [0,1]^d (after Warp, if any) and outputs standardized to mean 0 and variance 1, so that
// one set of bounds and priors suits every problem.
type GPParams struct {
	// Lengthscales are the Matérn-5/2 kernel's per-dimension (ARD) lengthscales.
	Lengthscales []float64
	// SignalVar is the kernel's variance; NoiseVar the Gaussian observation noise's.
	SignalVar, NoiseVar float64
	// Warp holds one input warping per dimension; nil leaves the inputs as they are.
	Warp []Kumaraswamy
}

// GPOptions control how FitGP chooses hyperparameters. The zero value gives the defaults.
type GPOptions struct {
	// Restarts is the number of L-BFGS runs: one from a default point (lengthscales ½,
	// signal 1, noise 10⁻³, no warping), the others from uniform random points of the bounds.
	// The best run wins. Default 3.
	Restarts int
	// MaxIter caps each run's L-BFGS iterations. Default 200.
	MaxIter int
	// Bounds on the hyperparameters; a zero pair selects the default. Defaults: lengthscales
	// [0.01, 10], signal variance [0.05, 20], noise variance [10⁻⁶, 1], warping A and B
	// [0.2, 5].
	LengthBounds, SignalBounds, NoiseBounds, WarpBounds [2]float64
	// Warp marks the dimensions whose inputs get a learned Kumaraswamy warping, fitted jointly
	// with the kernel; nil warps none. (Categorical dimensions, whose order is arbitrary,
	// gain nothing from warping.)
	Warp []bool
	// NoPrior fits by pure maximum likelihood. By default weak log-normal priors are added
	// (log ℓ ~ N(log ½, 1.5²), log σ² ~ N(0, 2²), log σₙ² ~ N(log 10⁻³, 3²), log A and
	// log B ~ N(0, 0.75)); with the handful of points a tuning run has, the likelihood is
	// flat along some directions and the priors break the tie towards moderate lengthscales,
	// low noise and mild warping instead of leaving it to wherever L-BFGS stops.
	NoPrior bool
}

func (o GPOptions) withDefaults() GPOptions {
	if o.Restarts <= 0 {
		o.Restarts = 3
	}
	if o.MaxIter <= 0 {
		o.MaxIter = 200
	}
	def := func(b *[2]float64, lo, hi float64) {
		if *b == [2]float64{} {
			*b = [2]float64{lo, hi}
		}
	}
	def(&o.LengthBounds, 0.01, 10)
	def(&o.SignalBounds, 0.05, 20)
	def(&o.NoiseBounds, 1e-6, 1)
	def(&o.WarpBounds, 0.2, 5)
	return o
}

// GP is Gaussian-process regression on [0,1]^d with a Matérn-5/2 ARD kernel
//
//	k(x, x') = σ² (1 + √5 r + 5/3 r²) exp(−√5 r),  r² = Σⱼ (wⱼ(xⱼ) − wⱼ(x'ⱼ))² / ℓⱼ²,
//
// where w is the optional input warping, plus Gaussian noise σₙ² and a zero prior mean on
// standardized outputs (the mean of the observations, away from the data). Predictions are
// returned in the units of the y it was given.
type GP struct {
	// Params are the hyperparameters the GP was conditioned with (read-only: changing them
	// does not recondition it; use NewGP).
	Params GPParams

	x           [][]float64 // warped training inputs
	yMean, yStd float64
	u           blas64.Triangular // upper Cholesky factor of K: K = UᵀU
	alpha       []float64         // K⁻¹ y (standardized)
	lml         float64
}

// NewGP conditions a GP with fixed hyperparameters on the observations (x[i], y[i]), x in
// [0,1]^d. y is standardized internally.
func NewGP(x [][]float64, y []float64, p GPParams) (*GP, error) {
	if err := checkData(x, y); err != nil {
		return nil, err
	}
	d := len(x[0])
	if len(p.Lengthscales) != d || (p.Warp != nil && len(p.Warp) != d) {
		return nil, fmt.Errorf("search: GP parameters do not have %d dimensions", d)
	}
	ys, mu, sd := standardize(y)
	g := &GP{Params: p, yMean: mu, yStd: sd}
	g.x = make([][]float64, len(x))
	for i, xi := range x {
		g.x[i] = g.warp(xi)
	}
	n := len(x)
	k := make([]float64, n*n)
	for i := 0; i < n; i++ {
		k[i*n+i] = p.SignalVar + p.NoiseVar
		for j := i + 1; j < n; j++ {
			k[i*n+j] = p.kernel(g.x[i], g.x[j])
			k[j*n+i] = k[i*n+j]
		}
	}
	u, ok := factorizeJitter(k, n, p.SignalVar+p.NoiseVar)
	if !ok {
		return nil, errors.New("search: GP covariance is not positive definite")
	}
	g.u = u
	g.alpha = append([]float64(nil), ys...)
	cholSolve(g.u, g.alpha)
	g.lml = -0.5*dotVec(ys, g.alpha) - 0.5*logDet(u) - 0.5*float64(n)*math.Log(2*math.Pi)
	return g, nil
}

// FitGP fits the hyperparameters by maximizing the log marginal likelihood (plus the log
// priors unless opts.NoPrior) with L-BFGS over log-parameters, each mapped into its bounds by
// a scaled logistic function as GPyTorch's Interval constraint does, and returns the GP
// conditioned on the data with the best run's hyperparameters. All randomness (the restarts'
// starting points) comes from rng.
func FitGP(rng *rand.Rand, x [][]float64, y []float64, opts GPOptions) (*GP, error) {
	if rng == nil {
		return nil, errNilRand
	}
	if err := checkData(x, y); err != nil {
		return nil, err
	}
	d := len(x[0])
	opts = opts.withDefaults()
	if opts.Warp != nil && len(opts.Warp) != d {
		return nil, fmt.Errorf("search: GP warp mask has %d dimensions, data %d", len(opts.Warp), d)
	}
	for _, b := range [][2]float64{opts.LengthBounds, opts.SignalBounds, opts.NoiseBounds, opts.WarpBounds} {
		if !(b[0] > 0 && b[0] <= b[1]) || math.IsInf(b[1], 0) {
			return nil, fmt.Errorf("search: GP hyperparameter bounds %v are not 0 < low ≤ high < ∞", b)
		}
	}
	ys, _, _ := standardize(y)
	f := newGPFit(x, ys, opts)
	np := f.nparams()

	// Hyperparameters θ (log scale) live in [lo, hi]; L-BFGS works on z with
	// θ = lo + (hi − lo)·sigmoid(z).
	toTheta := func(z, theta []float64) {
		for i := range z {
			theta[i] = f.lo[i] + (f.hi[i]-f.lo[i])*sigmoid(z[i])
		}
	}
	toZ := func(theta, z []float64) {
		for i := range theta {
			if f.hi[i] <= f.lo[i] { // a fixed hyperparameter
				z[i] = 0
				continue
			}
			p := (theta[i] - f.lo[i]) / (f.hi[i] - f.lo[i])
			p = math.Min(math.Max(p, 1e-4), 1-1e-4)
			z[i] = math.Log(p / (1 - p))
		}
	}
	// Minimize asks for the value and the gradient at the same point in separate calls;
	// cache the last evaluation so each point costs one Cholesky.
	var (
		lastZ    = make([]float64, np)
		lastF    float64
		lastG    = make([]float64, np)
		haveLast bool
		theta    = make([]float64, np)
		gTheta   = make([]float64, np)
	)
	eval := func(z []float64) {
		if haveLast && equalSlices(z, lastZ) {
			return
		}
		toTheta(z, theta)
		lastF = f.negLogPosterior(theta, gTheta)
		for i := range z {
			s := sigmoid(z[i])
			lastG[i] = gTheta[i] * (f.hi[i] - f.lo[i]) * s * (1 - s)
		}
		copy(lastZ, z)
		haveLast = true
	}
	prob := optimize.Problem{
		Func: func(z []float64) float64 { eval(z); return lastF },
		Grad: func(g, z []float64) { eval(z); copy(g, lastG) },
	}
	settings := &optimize.Settings{
		MajorIterations:   opts.MaxIter,
		GradientThreshold: 1e-5,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-7, Relative: 1e-7, Iterations: 10},
	}

	bestF := math.Inf(1)
	bestTheta := make([]float64, np)
	start := make([]float64, np)
	z0 := make([]float64, np)
	for r := 0; r < opts.Restarts; r++ {
		if r == 0 {
			f.defaultTheta(start)
		} else {
			for i := range start {
				start[i] = f.lo[i] + (f.hi[i]-f.lo[i])*rng.Float64()
			}
		}
		toZ(start, z0)
		// The starting point itself is a candidate, in case L-BFGS fails outright.
		if v := prob.Func(z0); v < bestF {
			bestF = v
			toTheta(z0, bestTheta)
		}
		res, _ := optimize.Minimize(prob, z0, settings, &optimize.LBFGS{})
		if res != nil && res.F < bestF && !math.IsNaN(res.F) {
			bestF = res.F
			toTheta(res.X, bestTheta)
		}
	}
	return NewGP(x, y, f.params(bestTheta))
}

// Predict returns the posterior mean and variance of the latent function (without the
// observation noise) at each point of xs, in the units of y.
func (g *GP) Predict(xs [][]float64) (mean, variance []float64) {
	m := len(xs)
	mean, variance = make([]float64, m), make([]float64, m)
	if m == 0 {
		return mean, variance
	}
	mu, v := g.crossSolve(xs)
	n := len(g.x)
	for j := 0; j < m; j++ {
		var s float64
		for i := 0; i < n; i++ {
			e := v.Data[i*v.Stride+j]
			s += e * e
		}
		mean[j] = mu[j]*g.yStd + g.yMean
		variance[j] = math.Max(g.Params.SignalVar-s, 0) * g.yStd * g.yStd
	}
	return mean, variance
}

// Sample draws n joint posterior samples of the function at the points xs (Thompson
// sampling): sample s holds one value per point, in the units of y. With noise set, the
// samples are of noisy observations rather than of the latent function (TuRBO samples from
// the likelihood). The joint covariance costs O(m³) for m points. If it cannot be factorized
// even with jitter, the points are sampled independently from their marginals.
func (g *GP) Sample(rng *rand.Rand, xs [][]float64, n int, noise bool) [][]float64 {
	m := len(xs)
	out := make([][]float64, n)
	for s := range out {
		out[s] = make([]float64, m)
	}
	if m == 0 || n == 0 {
		return out
	}
	mu, v := g.crossSolve(xs)
	// Posterior covariance Kₛₛ − VᵀV, V = U⁻ᵀ Kₓₛ.
	c := blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: make([]float64, m*m)}
	blas64.Syrk(blas.Trans, -1, v, 0, c)
	w := make([][]float64, m)
	for j, xj := range xs {
		w[j] = g.warp(xj)
	}
	p := g.Params
	for i := 0; i < m; i++ {
		c.Data[i*m+i] += p.SignalVar
		if noise {
			c.Data[i*m+i] += p.NoiseVar
		}
		for j := i + 1; j < m; j++ {
			c.Data[i*m+j] += p.kernel(w[i], w[j])
		}
	}
	z := blas64.General{Rows: m, Cols: n, Stride: n, Data: make([]float64, m*n)}
	for i := range z.Data {
		z.Data[i] = rng.NormFloat64()
	}
	if uc, ok := factorizeJitter(c.Data, m, p.SignalVar); ok {
		// f = μ + Uᵀz has covariance UᵀU.
		blas64.Trmm(blas.Left, blas.Trans, 1, uc, z)
	} else {
		for i := 0; i < m; i++ {
			sd := math.Sqrt(math.Max(c.Data[i*m+i], 0))
			for s := 0; s < n; s++ {
				z.Data[i*n+s] *= sd
			}
		}
	}
	for s := 0; s < n; s++ {
		for j := 0; j < m; j++ {
			out[s][j] = (mu[j]+z.Data[j*n+s])*g.yStd + g.yMean
		}
	}
	return out
}

// LogMarginalLikelihood is log p(y | X, θ) of the standardized training outputs.
func (g *GP) LogMarginalLikelihood() float64 { return g.lml }

// crossSolve returns the standardized posterior mean at xs and V = U⁻ᵀ Kₓₛ (n × m), whose
// column norms are the variance reductions.
func (g *GP) crossSolve(xs [][]float64) ([]float64, blas64.General) {
	n, m := len(g.x), len(xs)
	v := blas64.General{Rows: n, Cols: m, Stride: m, Data: make([]float64, n*m)}
	mu := make([]float64, m)
	for j, xj := range xs {
		w := g.warp(xj)
		for i := 0; i < n; i++ {
			k := g.Params.kernel(g.x[i], w)
			v.Data[i*m+j] = k
			mu[j] += k * g.alpha[i]
		}
	}
	blas64.Trsm(blas.Left, blas.Trans, 1, g.u, v)
	return mu, v
}

// warp applies the input warping to one point (a copy).
func (g *GP) warp(x []float64) []float64 {
	w := append([]float64(nil), x...)
	if g.Params.Warp != nil {
		for j := range w {
			w[j] = g.Params.Warp[j].CDF(w[j])
		}
	}
	return w
}

// kernel is the Matérn-5/2 covariance of two (warped) points.
func (p *GPParams) kernel(a, b []float64) float64 {
	var r2 float64
	for j := range a {
		t := (a[j] - b[j]) / p.Lengthscales[j]
		r2 += t * t
	}
	r := math.Sqrt(r2)
	return p.SignalVar * (1 + sqrt5*r + 5.0/3*r2) * math.Exp(-sqrt5*r)
}

const sqrt5 = 2.23606797749979

// gpFit is the hyperparameter objective: the negative log posterior of the log-parameters
// θ = [log ℓ₁..ℓ_d, log σ², log σₙ², (log A_j, log B_j) for each warped j].
type gpFit struct {
	x        [][]float64 // raw inputs in [0,1]^d
	y        []float64   // standardized outputs
	d        int
	warpDims []int
	prior    bool
	lo, hi   []float64 // bounds on θ
	pmu, psd []float64 // Gaussian priors on θ
}

func newGPFit(x [][]float64, ys []float64, opts GPOptions) *gpFit {
	d := len(x[0])
	f := &gpFit{x: x, y: ys, d: d, prior: !opts.NoPrior}
	for j, w := range opts.Warp {
		if w {
			f.warpDims = append(f.warpDims, j)
		}
	}
	add := func(b [2]float64, mu, sd float64) {
		f.lo = append(f.lo, math.Log(b[0]))
		f.hi = append(f.hi, math.Log(b[1]))
		f.pmu = append(f.pmu, mu)
		f.psd = append(f.psd, sd)
	}
	for j := 0; j < d; j++ {
		add(opts.LengthBounds, math.Log(0.5), 1.5)
	}
	add(opts.SignalBounds, 0, 2)
	add(opts.NoiseBounds, math.Log(1e-3), 3)
	for range f.warpDims {
		add(opts.WarpBounds, 0, math.Sqrt(0.75))
		add(opts.WarpBounds, 0, math.Sqrt(0.75))
	}
	return f
}

func (f *gpFit) nparams() int { return f.d + 2 + 2*len(f.warpDims) }

// defaultTheta is the first restart's start, clamped into the bounds.
func (f *gpFit) defaultTheta(theta []float64) {
	for i := range theta {
		var v float64
		switch {
		case i < f.d:
			v = math.Log(0.5)
		case i == f.d:
			v = 0
		case i == f.d+1:
			v = math.Log(1e-3)
		default:
			v = 0
		}
		theta[i] = math.Min(math.Max(v, f.lo[i]), f.hi[i])
	}
}

// params unpacks θ.
func (f *gpFit) params(theta []float64) GPParams {
	p := GPParams{Lengthscales: make([]float64, f.d), SignalVar: math.Exp(theta[f.d]), NoiseVar: math.Exp(theta[f.d+1])}
	for j := range p.Lengthscales {
		p.Lengthscales[j] = math.Exp(theta[j])
	}
	if len(f.warpDims) > 0 {
		p.Warp = make([]Kumaraswamy, f.d)
		for j := range p.Warp {
			p.Warp[j] = Kumaraswamy{A: 1, B: 1} // identity
		}
		for t, j := range f.warpDims {
			p.Warp[j] = Kumaraswamy{A: math.Exp(theta[f.d+2+2*t]), B: math.Exp(theta[f.d+3+2*t])}
		}
	}
	return p
}

// negLogPosterior is −(log marginal likelihood + log prior) at θ; grad receives its gradient.
func (f *gpFit) negLogPosterior(theta, grad []float64) float64 {
	l := f.logML(theta, grad)
	if math.IsInf(l, -1) {
		for i := range grad {
			grad[i] = 0
		}
		return 1e10 // finite, so that the line search backs off instead of failing
	}
	v := -l
	for i := range grad {
		grad[i] = -grad[i]
	}
	if f.prior {
		for i, t := range theta {
			z := (t - f.pmu[i]) / f.psd[i]
			v += 0.5 * z * z
			grad[i] += z / f.psd[i]
		}
	}
	return v
}

// logML is the log marginal likelihood log N(y; 0, K(θ) + σₙ²I) and, into grad (when not
// nil), its gradient ½ tr((ααᵀ − K⁻¹) ∂K/∂θ) with α = K⁻¹y.
func (f *gpFit) logML(theta, grad []float64) float64 {
	n, d := len(f.x), f.d
	ell2 := make([]float64, d)
	for j := range ell2 {
		ell2[j] = math.Exp(2 * theta[j])
	}
	s2, sn := math.Exp(theta[d]), math.Exp(theta[d+1])
	nw := len(f.warpDims)
	w := make([][]float64, n)
	dwa := make([][]float64, n) // ∂w/∂log A per point and warped dimension
	dwb := make([][]float64, n)
	for i, xi := range f.x {
		w[i] = append([]float64(nil), xi...)
		if nw > 0 {
			dwa[i], dwb[i] = make([]float64, nw), make([]float64, nw)
			for t, j := range f.warpDims {
				k := Kumaraswamy{A: math.Exp(theta[d+2+2*t]), B: math.Exp(theta[d+3+2*t])}
				w[i][j], dwa[i][t], dwb[i][t] = k.cdfGrad(xi[j])
			}
		}
	}
	k := make([]float64, n*n)
	r := make([]float64, n*n)
	for i := 0; i < n; i++ {
		k[i*n+i] = s2 + sn
		for j := i + 1; j < n; j++ {
			var r2 float64
			for c := 0; c < d; c++ {
				t := w[i][c] - w[j][c]
				r2 += t * t / ell2[c]
			}
			rr := math.Sqrt(r2)
			r[i*n+j] = rr
			k[i*n+j] = s2 * (1 + sqrt5*rr + 5.0/3*r2) * math.Exp(-sqrt5*rr)
			k[j*n+i] = k[i*n+j]
		}
	}
	u, ok := factorizeJitter(k, n, s2+sn)
	if !ok {
		return math.Inf(-1)
	}
	alpha := append([]float64(nil), f.y...)
	cholSolve(u, alpha)
	lml := -0.5*dotVec(f.y, alpha) - 0.5*logDet(u) - 0.5*float64(n)*math.Log(2*math.Pi)
	if grad == nil {
		return lml
	}
	for i := range grad {
		grad[i] = 0
	}
	// K⁻¹ from U (potri overwrites its argument: work on a copy).
	ki, _ := lapack64.Potri(blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: append([]float64(nil), u.Data...)})
	wm := func(i, j int) float64 { return alpha[i]*alpha[j] - ki.Data[i*ki.Stride+j] }
	for i := 0; i < n; i++ {
		wii := wm(i, i)
		grad[d] += 0.5 * wii * s2
		grad[d+1] += 0.5 * wii * sn
		for j := i + 1; j < n; j++ {
			wij := wm(i, j)
			rr := r[i*n+j]
			g := s2 * 5.0 / 3 * (1 + sqrt5*rr) * math.Exp(-sqrt5*rr) // −2 ∂k/∂(r²)
			grad[d] += wij * k[i*n+j]
			for c := 0; c < d; c++ {
				t := w[i][c] - w[j][c]
				grad[c] += wij * g * t * t / ell2[c]
			}
			for t, c := range f.warpDims {
				h := -wij * g * (w[i][c] - w[j][c]) / ell2[c] // ∂k/∂w_ic, weighted
				grad[d+2+2*t] += h * (dwa[i][t] - dwa[j][t])
				grad[d+3+2*t] += h * (dwb[i][t] - dwb[j][t])
			}
		}
	}
	return lml
}

// factorizeJitter Cholesky-factorizes the n×n symmetric matrix in a (row-major, upper
// triangle read, a left intact) into an upper triangular U with UᵀU = a + jitter·I, adding
// jitter ×10 from 10⁻¹⁰·scale up to 10⁻²·scale as long as the factorization fails: kernel
// matrices of nearby points are numerically singular. It calls LAPACK's potrf directly rather
// than going through mat.Cholesky, which also estimates the condition number (a third of the
// cost) on every factorization.
func factorizeJitter(a []float64, n int, scale float64) (blas64.Triangular, bool) {
	b := make([]float64, len(a))
	for jit := 0.0; jit <= 1e-2*scale; {
		copy(b, a)
		for i := 0; i < n; i++ {
			b[i*n+i] += jit
		}
		if u, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: b}); ok {
			u.Diag = blas.NonUnit
			return u, true
		}
		if jit == 0 {
			jit = 1e-10 * scale
		} else {
			jit *= 10
		}
	}
	return blas64.Triangular{}, false
}

// logDet is log det(UᵀU).
func logDet(u blas64.Triangular) float64 {
	var s float64
	for i := 0; i < u.N; i++ {
		s += math.Log(u.Data[i*u.Stride+i])
	}
	return 2 * s
}

// cholSolve overwrites b with (UᵀU)⁻¹ b.
func cholSolve(u blas64.Triangular, b []float64) {
	v := blas64.Vector{N: len(b), Inc: 1, Data: b}
	blas64.Trsv(blas.Trans, u, v)
	blas64.Trsv(blas.NoTrans, u, v)
}

// checkData validates regression data.
func checkData(x [][]float64, y []float64) error {
	if len(x) == 0 || len(x) != len(y) {
		return fmt.Errorf("search: GP needs matching non-empty data (%d inputs, %d outputs)", len(x), len(y))
	}
	d := len(x[0])
	if d == 0 {
		return errors.New("search: GP inputs have no dimensions")
	}
	for i := range x {
		if len(x[i]) != d {
			return errors.New("search: GP inputs of different dimensions")
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return errors.New("search: GP output is not finite")
		}
	}
	return nil
}

// standardize returns (y − mean)/std, with std taken as 1 for constant data.
func standardize(y []float64) (ys []float64, mean, std float64) {
	mean, std = meanStd(y)
	if !(std > 1e-12*math.Max(1, math.Abs(mean))) {
		std = 1
	}
	ys = make([]float64, len(y))
	for i, v := range y {
		ys[i] = (v - mean) / std
	}
	return ys, mean, std
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func dotVec(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func equalSlices(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
