package premise

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"
)

// matrixHVP is the product with an explicit matrix.
func matrixHVP(a *mat.SymDense) hvpFunc {
	return func(_ context.Context, v []float64) ([]float64, error) {
		out := mat.NewVecDense(len(v), nil)
		out.MulVec(a, mat.NewVecDense(len(v), v))
		return out.RawVector().Data, nil
	}
}

// spectral is Q diag(λ) Qᵀ with Q the Householder reflection of u: a dense symmetric matrix
// whose trace (Σλ), Frobenius norm (√Σλ²) and largest eigenvalue are known by construction.
func spectral(lambda, u []float64) *mat.SymDense {
	n := len(lambda)
	uu := 0.0
	for _, x := range u {
		uu += x * x
	}
	q := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			q.Set(i, j, -2*u[i]*u[j]/uu)
		}
		q.Set(i, i, q.At(i, i)+1)
	}
	a := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s := 0.0
			for k := range n {
				s += q.At(i, k) * lambda[k] * q.At(j, k)
			}
			a.SetSym(i, j, s)
		}
	}
	return a
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (±%g)", what, got, want, tol)
	}
}

// TestHessianMeasuresOfKnownSpectrum checks the exact path, Lanczos and Hutchinson against a
// matrix of known spectrum whose eigenvalue of largest magnitude is negative: λ_max is 3, not
// the −5 power iteration would find.
func TestHessianMeasuresOfKnownSpectrum(t *testing.T) {
	ctx := context.Background()
	lambda := []float64{3, 1, 0.5, -0.2, -5, 2, 0.1}
	a := spectral(lambda, []float64{1, -2, 0.5, 3, 1, -1, 2})
	tr, fro := 1.3+0.1, 0.0
	for _, l := range lambda {
		fro += l * l
	}
	fro = math.Sqrt(fro)
	n := len(lambda)

	ex, err := measureHessian(ctx, matrixHVP(a), n, rand.New(rand.NewPCG(1, 2)), hessianOptions{exactParams: n})
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Exact || ex.Products != n || ex.TraceSE != 0 {
		t.Errorf("exact path: %+v", ex)
	}
	near(t, "exact trace", ex.Trace, tr, 1e-12)
	near(t, "exact ‖H‖_F", ex.Frobenius, fro, 1e-12)
	near(t, "exact λ_max", ex.TopEig, 3, 1e-12)

	top, products, err := lanczosTop(ctx, matrixHVP(a), n, rand.New(rand.NewPCG(3, 4)), 50)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "Lanczos λ_max (n steps)", top, 3, 1e-9)
	if products > n {
		t.Errorf("Lanczos took %d products on a %d-dimensional matrix", products, n)
	}
	few, _, err := lanczosTop(ctx, matrixHVP(a), n, rand.New(rand.NewPCG(3, 4)), 2)
	if err != nil {
		t.Fatal(err)
	}
	if few > 3+1e-12 {
		t.Errorf("a Ritz value %v above λ_max 3", few)
	}

	// Var(vᵀAv) = 2(‖A‖_F² − Σ A_ii²) for Rademacher v.
	const probes = 4000
	h, err := hutchinson(ctx, matrixHVP(a), n, rand.New(rand.NewPCG(5, 6)), probes)
	if err != nil {
		t.Fatal(err)
	}
	diag := 0.0
	for i := range n {
		diag += a.At(i, i) * a.At(i, i)
	}
	se := math.Sqrt(2 * (fro*fro - diag) / probes)
	near(t, "Hutchinson trace", h.Trace, tr, 4*se)
	near(t, "Hutchinson trace SE", h.TraceSE, se, 0.1*se)
	near(t, "Hutchinson ‖H‖_F", h.Frobenius, fro, 4*h.FrobeniusSE)
	if h.FrobeniusSE <= 0 || h.FrobeniusSE > 0.05*fro {
		t.Errorf("Hutchinson ‖H‖_F SE %v", h.FrobeniusSE)
	}

	est, err := measureHessian(ctx, matrixHVP(a), n, rand.New(rand.NewPCG(7, 8)), hessianOptions{exactParams: n - 1, probes: 10, lanczos: 4})
	if err != nil {
		t.Fatal(err)
	}
	if est.Exact || est.Products != 14 {
		t.Errorf("estimated path: exact %v, %d products, want 10 + 4", est.Exact, est.Products)
	}
}

// TestHutchinsonDiagonalIsExact: for a diagonal H every Rademacher probe gives vᵀHv = tr H and
// ‖Hv‖² = ‖H‖_F² exactly, so the estimates are exact with zero standard error.
func TestHutchinsonDiagonalIsExact(t *testing.T) {
	d := []float64{2, -1, 0.25, 4}
	a := mat.NewSymDense(len(d), nil)
	for i, x := range d {
		a.SetSym(i, i, x)
	}
	h, err := hutchinson(context.Background(), matrixHVP(a), len(d), rand.New(rand.NewPCG(9, 9)), 3)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "trace", h.Trace, 5.25, 1e-14)
	near(t, "‖H‖_F", h.Frobenius, math.Sqrt(4+1+0.0625+16), 1e-14)
	if h.TraceSE != 0 || h.FrobeniusSE != 0 {
		t.Errorf("standard errors %v, %v; want 0", h.TraceSE, h.FrobeniusSE)
	}
}

// TestTrainingHessianOfLogisticRegression checks every estimator, through the graph's
// Hessian-vector products of a model's training loss, against the closed form of logistic
// regression's Hessian: with z = (x, 1) and p = σ(w·x + b), H = (1/N) Σ p(1 − p) z zᵀ.
func TestTrainingHessianOfLogisticRegression(t *testing.T) {
	ctx := context.Background()
	const rows, d = 30, 3
	rng := rand.New(rand.NewPCG(11, 12))
	ds := &datasets.Dataset{Name: "toy", N: rows, D: d, Shape: []int{d}, Classes: []string{"0", "1"}}
	for range rows {
		for range d {
			ds.X = append(ds.X, rng.NormFloat64())
		}
		ds.Y = append(ds.Y, rng.IntN(2))
	}
	net, err := layers.NewNet(tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := layers.NewMLP(net, "lr", layers.MLPConfig{In: d, Out: 1})
	if err != nil {
		t.Fatal(err)
	}
	w, b := []float64{0.7, -1.2, 0.4}, 0.3
	copy(m.Head().W.Value.Data().([]float64), w)
	m.Head().B.Value.Data().([]float64)[0] = b
	cv, err := convexity.NewTrainingCurvature(m, &convexity.Task{Train: ds, Loss: losses.Binary}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cv.Dim() != d+1 {
		t.Fatalf("%d parameters, want %d", cv.Dim(), d+1)
	}
	h := mat.NewSymDense(d+1, nil)
	for i := range rows {
		z := append(append([]float64{}, ds.X[i*d:(i+1)*d]...), 1)
		s := b
		for j := range d {
			s += w[j] * z[j]
		}
		p := 1 / (1 + math.Exp(-s))
		for j := range z {
			for k := j; k < len(z); k++ {
				h.SetSym(j, k, h.At(j, k)+p*(1-p)*z[j]*z[k]/rows)
			}
		}
	}
	want, err := exactMeasures(h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := measureHessian(ctx, cv.HVP, cv.Dim(), rng, hessianOptions{exactParams: 100})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "exact trace", got.Trace, want.Trace, 1e-12)
	near(t, "exact ‖H‖_F", got.Frobenius, want.Frobenius, 1e-12)
	near(t, "exact λ_max", got.TopEig, want.TopEig, 1e-12)
	est, err := measureHessian(ctx, cv.HVP, cv.Dim(), rng, hessianOptions{probes: 3000, lanczos: d + 1})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "Lanczos λ_max", est.TopEig, want.TopEig, 1e-9)
	near(t, "Hutchinson trace", est.Trace, want.Trace, 4*est.TraceSE)
	near(t, "Hutchinson ‖H‖_F", est.Frobenius, want.Frobenius, 4*est.FrobeniusSE)
	if est.TraceSE > 0.05*want.Trace {
		t.Errorf("Hutchinson trace SE %v for trace %v", est.TraceSE, want.Trace)
	}
}

// Issue 52 (class 3): --exact-params at its bound (20,000) holds 9.6 GB a cell, more than a
// 24 GiB machine has for three workers; such sizes are refused up front with the estimate.
func TestExactHessiansBeyondMemoryAreRefusedUpFront(t *testing.T) {
	const gib = 1 << 30
	err := exactFitsInMemory(20000, 30, 3, 24*gib)
	if err == nil || !strings.Contains(err.Error(), "--exact-params 20000: an exact Hessian holds up to 9.6 GB") ||
		!strings.Contains(err.Error(), "or --workers") {
		t.Errorf("20000 parameters, 3 workers on 24 GiB: %v", err)
	}
	if err := exactFitsInMemory(20000, 30, 1, 24*gib); err != nil {
		t.Errorf("20000 parameters, 1 worker on 24 GiB: %v", err)
	}
	if err := exactFitsInMemory(1000, 30, 16, 2*gib); err != nil {
		t.Errorf("the paper's 1000 on 2 GiB: %v", err)
	}
}

// Issue 52 (class 2): the exact Hessian's eigendecomposition (many minutes at the
// --exact-params bound) ignored a cancellation (SIGTERM) until it ended; the measure returns
// the cancellation at once.
func TestACancelledEigendecompositionReturnsAtOnce(t *testing.T) {
	const n = 900 // a decomposition of about a second (2.7 s at 1200 on this project's CI machine)
	h := mat.NewSymDense(n, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		for j := i; j < n; j++ {
			h.SetSym(i, j, rng.NormFloat64())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := exactMeasuresCancellable(ctx, h)
	if d := time.Since(start); err == nil || d > 300*time.Millisecond {
		t.Errorf("after %v: %v; want the cancellation within 0.3 s", d, err)
	}
}
