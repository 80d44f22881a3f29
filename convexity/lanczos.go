package convexity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// Eigen is an estimate of H's eigenvalue of largest magnitude.
type Eigen struct {
	Value float64
	// Steps is the number of Hessian-vector products it took (the shared first one
	// included); Residual the bound ‖Hy − θy‖ of its Ritz pair (θ, y) when it stopped.
	Steps    int
	Residual float64
}

// traceAndTop is the white-box record's curvature: the Hutchinson estimate of tr H from
// probes Rademacher vectors z_1…z_probes (rademacherBits, drawn from rng in that order), and
// H's eigenvalue of largest magnitude by Lanczos started from z_1, whose first product is
// the trace's H·z_1: at most iters products for the eigenvalue, the first shared. After
// the first product, every one recomputes only its direction-dependent part. The other
// probes reuse Lanczos's vectors: three of the parameters' size in all.
func (c *Curvature) traceAndTop(ctx context.Context, rng *rand.Rand, probes, iters int, tol float64) (Estimate, Eigen, error) {
	if c == nil || c.hvProg == nil {
		return Estimate{}, Eigen{}, errNilCurvature
	}
	if rng == nil {
		return Estimate{}, Eigen{}, errors.New("convexity: the curvature record needs a random source (got a nil one)")
	}
	if probes < 2 || iters < 1 || !(tol >= 0) || math.IsInf(tol, 0) {
		return Estimate{}, Eigen{}, fmt.Errorf("convexity: curvature record from %d probes, %d Lanczos steps at tolerance %v; want ≥ 2, ≥ 1 and a finite tolerance ≥ 0", probes, iters, tol)
	}
	z, hz, prev := c.pool.Float64s(c.n), c.pool.Float64s(c.n), c.pool.Float64s(c.n)
	// lanczos swaps its vectors, so the three are given back whichever holds what
	defer c.pool.Put(z, hz, prev)
	rademacherBits(rng, z)
	if _, err := c.hvpInto(ctx, hz, z, false); err != nil {
		return Estimate{}, Eigen{}, err
	}
	x := dot(z, hz)
	sum, sumSq := x, x*x
	top, err := c.lanczos(ctx, z, hz, prev, iters, tol)
	if err != nil {
		return Estimate{}, Eigen{}, err
	}
	for s := 1; s < probes; s++ {
		rademacherBits(rng, z)
		if _, err := c.hvpInto(ctx, hz, z, true); err != nil {
			return Estimate{}, Eigen{}, err
		}
		x := dot(z, hz)
		sum += x
		sumSq += x * x
	}
	return estimateFrom(sum, sumSq, probes), top, nil
}

// rademacherBits fills v with independent ±1 entries, one bit of a 64-bit draw of rng each:
// rademacher's one draw of rng.IntN per entry costs some 15 ms a probe on a model of three
// million parameters, this 2.
func rademacherBits(rng *rand.Rand, v []float64) {
	for i := 0; i < len(v); i += 64 {
		b := rng.Uint64()
		for j := i; j < min(i+64, len(v)); j++ {
			v[j] = float64(int64(b&1)*2 - 1)
			b >>= 1
		}
	}
}

// lanczos runs the Lanczos iteration on H from q (overwritten) given w = H·q (overwritten),
// with prev as scratch, for at most iters products (the given one included) and at most
// Dim steps, and returns the Ritz value θ of largest magnitude of the tridiagonal matrix
// T_k. It stops early when the residual of θ's Ritz vector y, ‖Hy − θy‖ = β_k·|s_k| (s
// the eigenvector of T_k), is at most tol·|θ|: a symmetric H has an eigenvalue within the
// residual of θ (Parlett, The Symmetric Eigenvalue Problem); or when β_k vanishes (the
// Krylov space is invariant, the Ritz values are eigenvalues). The basis is not kept: three
// vectors of memory, as power iteration's two. Without reorthogonalization, rounding makes
// the basis lose orthogonality only as Ritz values converge, and adds copies of converged
// values rather than moving the extreme one (Paige 1980).
func (c *Curvature) lanczos(ctx context.Context, q, w, prev []float64, iters int, tol float64) (Eigen, error) {
	nrm := math.Sqrt(dot(q, q))
	if !(nrm > 0) || math.IsInf(nrm, 0) {
		return Eigen{}, fmt.Errorf("convexity: Lanczos from a start of norm %v", nrm)
	}
	floats.Scale(1/nrm, q)
	floats.Scale(1/nrm, w)
	var alpha, beta []float64
	var tnorm float64 // max |T_ij| so far, the scale of a vanishing β
	for k := 1; ; k++ {
		if k > 1 {
			floats.AddScaled(w, -beta[k-2], prev)
		}
		a := dot(q, w)
		floats.AddScaled(w, -a, q)
		b := math.Sqrt(dot(w, w))
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b) || math.IsInf(b, 0) {
			return Eigen{}, fmt.Errorf("convexity: Lanczos step %d: α = %v, β = %v (a non-finite Hessian-vector product)", k, a, b)
		}
		alpha = append(alpha, a)
		tnorm = math.Max(tnorm, math.Max(math.Abs(a), b))
		theta, s, err := topRitz(alpha, beta)
		if err != nil {
			return Eigen{}, err
		}
		res := b * math.Abs(s)
		if k >= iters || k >= c.n || res <= tol*math.Abs(theta) || b <= 64*epsilon*tnorm {
			return Eigen{Value: theta, Steps: k, Residual: res}, nil
		}
		beta = append(beta, b)
		prev, q = q, prev
		for i := range q {
			q[i] = w[i] / b
		}
		if _, err := c.hvpInto(ctx, w, q, true); err != nil {
			return Eigen{}, err
		}
	}
}

// epsilon is float64's machine epsilon.
const epsilon = 0x1p-52

// topRitz returns the eigenvalue of largest magnitude of the symmetric tridiagonal matrix
// with diagonal alpha and off-diagonal beta, and the last component of its unit eigenvector.
func topRitz(alpha, beta []float64) (float64, float64, error) {
	k := len(alpha)
	d := append([]float64(nil), alpha...)
	e := append([]float64(nil), beta...)
	z := make([]float64, k*k)
	work := make([]float64, max(1, 2*k-2))
	if !(lapackgonum.Implementation{}).Dsteqr(lapack.EVTridiag, k, d, e, z, k, work) {
		return 0, 0, fmt.Errorf("convexity: the %d×%d Lanczos matrix's eigenvalues did not converge", k, k)
	}
	// Ascending: the largest magnitude is at one end (the upper one on a tie).
	j := k - 1
	if math.Abs(d[0]) > math.Abs(d[k-1]) {
		j = 0
	}
	return d[j], z[(k-1)*k+j], nil
}
