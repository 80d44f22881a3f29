package premise

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/experiments"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// hvpFunc is a Hessian-vector product v ↦ Hv (convexity.Curvature.HVP).
type hvpFunc func(ctx context.Context, v []float64) ([]float64, error)

// hessian is what is measured of a Hessian H: its trace, Frobenius norm and largest
// (algebraic) eigenvalue, exact or estimated.
type hessian struct {
	Trace, Frobenius, TopEig float64
	// TraceSE and FrobeniusSE are the Hutchinson estimates' standard errors (0 when exact).
	TraceSE, FrobeniusSE float64
	Exact                bool
	Products             int // Hessian-vector products spent
}

// hessianOptions size the estimates.
type hessianOptions struct {
	exactParams int // form H exactly up to this dimension
	probes      int // Hutchinson's Rademacher vectors
	lanczos     int // Lanczos iterations
}

// measureHessian measures the n×n Hessian behind hvp: exactly when n ≤ opt.exactParams (n
// products, then its spectrum), otherwise by Hutchinson's estimator for tr H and ‖H‖_F²
// (Hutchinson 1990: E vᵀHv = tr H and E ‖Hv‖² = ‖H‖_F² over Rademacher v; both from the
// same products) and by Lanczos iteration for λ_max. rng draws the probes and the Lanczos
// start.
func measureHessian(ctx context.Context, hvp hvpFunc, n int, rng *rand.Rand, opt hessianOptions) (hessian, error) {
	if n <= 0 {
		return hessian{}, fmt.Errorf("premise: a Hessian of dimension %d", n)
	}
	if n <= opt.exactParams {
		h, err := exactHessian(ctx, hvp, n)
		if err != nil {
			return hessian{}, err
		}
		m, err := exactMeasuresCancellable(ctx, h)
		m.Products = n
		return m, err
	}
	m, err := hutchinson(ctx, hvp, n, rng, opt.probes)
	if err != nil {
		return m, err
	}
	top, products, err := lanczosTop(ctx, hvp, n, rng, opt.lanczos)
	m.TopEig = top
	m.Products += products
	return m, err
}

// exactBytes is what an exact n×n Hessian holds at its peak: its columns as computed, the
// symmetric matrix, and the eigensolver's copy, each n² float64s.
func exactBytes(n int) int64 { return 3 * 8 * int64(n) * int64(n) }

// exactFitsInMemory refuses, before anything is trained, an --exact-params whose Hessians
// cannot fit in the memory available (avail bytes; 0: unknown, then nothing is refused) when
// workers of the cells measure at once: 20,000 (the flag's bound) is 9.6 GB a cell.
func exactFitsInMemory(n, cells, workers int, avail int64) error {
	need := exactBytes(n)
	at := int64(max(1, min(workers, cells)))
	if avail <= 0 || need <= avail/at {
		return nil
	}
	what := fmt.Sprintf("an exact Hessian holds up to %.1f GB (three %d×%d matrices of float64s)", float64(need)/1e9, n, n)
	lower := "lower --exact-params (memory grows with its square)"
	if at > 1 {
		what += fmt.Sprintf(", %d cells at once (--workers) %.1f GB", at, float64(need*at)/1e9)
		lower += " or --workers"
	}
	return experiments.FlagErrorf("exact-params", "%d: %s, more than the %.1f GB of memory available (the machine's, or its cgroup's limit): %s",
		n, what, float64(avail)/1e9, lower)
}

// exactHessian forms H column by column (H e_i), symmetrized: (H + Hᵀ)/2 removes the
// rounding of the products, which an exactly symmetric matrix has none of.
func exactHessian(ctx context.Context, hvp hvpFunc, n int) (*mat.SymDense, error) {
	cols := make([][]float64, n)
	e := make([]float64, n)
	for i := range n {
		e[i] = 1
		col, err := hvp(ctx, e)
		if err != nil {
			return nil, err
		}
		e[i] = 0
		cols[i] = col
	}
	h := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			h.SetSym(i, j, (cols[j][i]+cols[i][j])/2)
		}
	}
	return h, nil
}

// exactMeasuresCancellable is exactMeasures, or ctx's error as soon as ctx is done: the
// eigendecomposition cannot be interrupted, and at the flag's bound (20,000 parameters) it
// takes many minutes, which a cancelled run (SIGINT, SIGTERM) must not wait for. An abandoned
// decomposition runs to its end in the background, its result dropped.
func exactMeasuresCancellable(ctx context.Context, h *mat.SymDense) (hessian, error) {
	type result struct {
		m   hessian
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := exactMeasures(h)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		return r.m, r.err
	case <-ctx.Done():
		return hessian{}, ctx.Err()
	}
}

// exactMeasures are H's trace, Frobenius norm and largest eigenvalue.
func exactMeasures(h *mat.SymDense) (hessian, error) {
	n := h.SymmetricDim()
	m := hessian{Exact: true}
	var fro float64
	for i := range n {
		m.Trace += h.At(i, i)
		for j := range n {
			fro += h.At(i, j) * h.At(i, j)
		}
	}
	m.Frobenius = math.Sqrt(fro)
	var eig mat.EigenSym
	if !eig.Factorize(h, false) {
		return m, fmt.Errorf("premise: the eigendecomposition of a %d×%d Hessian did not converge", n, n)
	}
	m.TopEig = floats.Max(eig.Values(nil))
	return m, nil
}

// hutchinson estimates tr H and ‖H‖_F from the same Rademacher probes; ‖H‖_F's standard
// error is the delta method's, SE(‖H‖_F²)/(2‖H‖_F).
func hutchinson(ctx context.Context, hvp hvpFunc, n int, rng *rand.Rand, probes int) (hessian, error) {
	if probes < 2 {
		return hessian{}, fmt.Errorf("premise: Hutchinson estimates from %d probes", probes)
	}
	tr := make([]float64, probes)
	fsq := make([]float64, probes)
	v := make([]float64, n)
	for s := range probes {
		for i := range v {
			v[i] = float64(2*rng.IntN(2) - 1)
		}
		hv, err := hvp(ctx, v)
		if err != nil {
			return hessian{}, err
		}
		tr[s], fsq[s] = floats.Dot(v, hv), floats.Dot(hv, hv)
	}
	trMean, trSE := meanSE(tr)
	fMean, fSE := meanSE(fsq)
	m := hessian{Trace: trMean, TraceSE: trSE, Frobenius: math.Sqrt(fMean), Products: probes}
	if m.Frobenius > 0 {
		m.FrobeniusSE = fSE / (2 * m.Frobenius)
	}
	return m, nil
}

// meanSE is a sample's mean and the standard error of that mean.
func meanSE(xs []float64) (mean, se float64) {
	n := float64(len(xs))
	mean = floats.Sum(xs) / n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

// lanczosTop is the largest Ritz value of iters Lanczos steps (Lanczos 1950; Golub & Van
// Loan, Matrix Computations, §10.1) from a random unit start: a lower bound of λ_max that
// converges to it first among the eigenvalues. Unlike power iteration it finds the largest
// eigenvalue, not the largest in magnitude, which a loss's Hessian away from a minimum may
// have negative. Each step is reorthogonalized against the two vectors it keeps only (the
// basis of a million-parameter model does not fit in memory): the orthogonality this loses
// produces copies of converged Ritz values, never a larger one. It stops early at an
// invariant subspace, where the Ritz values are eigenvalues.
func lanczosTop(ctx context.Context, hvp hvpFunc, n int, rng *rand.Rand, iters int) (float64, int, error) {
	if iters < 1 {
		return 0, 0, fmt.Errorf("premise: %d Lanczos iterations", iters)
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	floats.Scale(1/floats.Norm(v, 2), v)
	prev := make([]float64, n)
	var alpha, beta []float64
	b, products := 0.0, 0
	for range min(iters, n) {
		w, err := hvp(ctx, v)
		if err != nil {
			return 0, products, err
		}
		products++
		a := floats.Dot(w, v)
		floats.AddScaled(w, -a, v)
		floats.AddScaled(w, -b, prev)
		for _, u := range [][]float64{v, prev} { // the second Gram–Schmidt pass
			floats.AddScaled(w, -floats.Dot(w, u), u)
		}
		alpha = append(alpha, a)
		b = floats.Norm(w, 2)
		if b <= 1e-12*math.Max(math.Abs(a), floats.Max(absAll(alpha))) {
			break
		}
		beta = append(beta, b)
		copy(prev, v)
		for i := range v {
			v[i] = w[i] / b
		}
	}
	return tridiagonalTop(alpha, beta), products, nil
}

func absAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Abs(x)
	}
	return out
}

// tridiagonalTop is the largest eigenvalue of the symmetric tridiagonal matrix with diagonal
// alpha and off-diagonal beta (only its first len(alpha)−1 entries are used).
func tridiagonalTop(alpha, beta []float64) float64 {
	k := len(alpha)
	t := mat.NewSymDense(k, nil)
	for i := range k {
		t.SetSym(i, i, alpha[i])
		if i+1 < k {
			t.SetSym(i, i+1, beta[i])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(t, false) {
		return math.NaN()
	}
	return floats.Max(eig.Values(nil))
}
