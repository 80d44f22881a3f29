package graph

import (
	"math"
	"unsafe"

	"github.com/hyperflat/hyperflat/graph/internal/vec"
)

// Kernels for the optimizers in package samplers and the divergence checks in package train:
// Go does not vectorize their per-element loops, and on a small model (the OpenML MLP's
// 280k weights) the scalar Adam update and the non-finite scans around it cost more than the
// step's matrix products. The vector paths reproduce the scalar loops here bit for bit, and
// large tensors are split across cores (the updates are elementwise, so the split changes no
// result).

// optimGrain is the number of elements worth a goroutine of their own in a memory-bound pass.
const optimGrain = 1 << 15

// AdamCoeffs are the per-step constants of an Adam update (see AdamUpdate).
type AdamCoeffs[T Float] struct {
	B1c  T // 1 − β1
	B2   T // β2
	B2c  T // 1 − β2
	Step T // lr / (1 − β1ᵗ); with Hat, lr·√(1 − β2ᵗ) / (1 − β1ᵗ)
	Bc2  T // √(1 − β2ᵗ) (unused with Hat)
	Eps  T
	WD   T // coupled L2 weight decay, 0 for none
	// Hat adds Eps to the uncorrected √v, both bias corrections being folded into Step
	// (Kingma & Ba's ε̂ form, Keras's and scikit-learn's), instead of to √v / Bc2
	// (PyTorch's).
	Hat bool
}

// AdamUpdate applies one Adam step in place, element by element,
//
//	g′ = g + WD·p (g when WD is 0),  m ← m + B1c·(g′ − m),  v ← B2·v + (B2c·g′)·g′,
//	p ← p − Step·(m / (√v / Bc2 + Eps))    or, with Hat,    p ← p − (Step·m) / (√v + Eps),
//
// and reports whether any updated p is NaN or infinite, so that the caller's divergence check
// needs no pass of its own. p, g, m and v have one length.
func AdamUpdate[T Float](p, g, m, v []T, c AdamCoeffs[T]) (nonFinite bool) {
	n := len(p)
	g, m, v = g[:n], m[:n], v[:n]
	if n < 2*optimGrain {
		return adamRange(p, g, m, v, c)
	}
	chunks := (n + optimGrain - 1) / optimGrain
	flags := make([]bool, chunks)
	parallelFor(chunks, 1, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			a, b := k*optimGrain, min(n, (k+1)*optimGrain)
			flags[k] = adamRange(p[a:b], g[a:b], m[a:b], v[a:b], c)
		}
	})
	for _, f := range flags {
		nonFinite = nonFinite || f
	}
	return nonFinite
}

func adamRange[T Float](p, g, m, v []T, c AdamCoeffs[T]) bool {
	done, bad := 0, false
	wd := 0
	if c.WD != 0 {
		wd = 1
	}
	hat := 0
	if c.Hat {
		hat = 1
	}
	switch p := any(p).(type) {
	case []float32:
		if haveVec && len(p) >= 8 {
			done = len(p) &^ 7
			k := [7]float32{float32(c.B1c), float32(c.B2), float32(c.B2c), float32(c.Step), float32(c.Bc2), float32(c.Eps), float32(c.WD)}
			g, m, v := any(g).([]float32), any(m).([]float32), any(v).([]float32)
			bad = vec.AdamF32(p32(p), p32(g), p32(m), p32(v), done, &k, wd, hat)
		}
	case []float64:
		if haveVec && len(p) >= 4 {
			done = len(p) &^ 3
			k := [7]float64{float64(c.B1c), float64(c.B2), float64(c.B2c), float64(c.Step), float64(c.Bc2), float64(c.Eps), float64(c.WD)}
			g, m, v := any(g).([]float64), any(m).([]float64), any(v).([]float64)
			bad = vec.AdamF64(p64(p), p64(g), p64(m), p64(v), done, &k, wd, hat)
		}
	}
	return adamScalar(p[done:], g[done:], m[done:], v[done:], c) || bad
}

// adamScalar is AdamUpdate's definition, and the tail of the vector path.
func adamScalar[T Float](p, g, m, v []T, c AdamCoeffs[T]) bool {
	bad := false
	for j := range p {
		gj := g[j]
		if c.WD != 0 {
			gj += c.WD * p[j]
		}
		m[j] += c.B1c * (gj - m[j])
		v[j] = c.B2*v[j] + c.B2c*gj*gj
		if c.Hat {
			p[j] -= (c.Step * m[j]) / (T(math.Sqrt(float64(v[j]))) + c.Eps)
		} else {
			p[j] -= c.Step * (m[j] / (T(math.Sqrt(float64(v[j])))/c.Bc2 + c.Eps))
		}
		bad = bad || !isFinite(p[j])
	}
	return bad
}

func isFinite[T Float](x T) bool {
	f := float64(x)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// FirstNonFinite is the index of x's first NaN or infinite element, or −1: a vector scan,
// then a scalar one only within the block that failed.
func FirstNonFinite[T Float](x []T) int {
	if !anyNonFinite(x) {
		return -1
	}
	for j, e := range x {
		if !isFinite(e) {
			return j
		}
	}
	return -1
}

func anyNonFinite[T Float](x []T) bool {
	n := len(x)
	if n < 2*optimGrain {
		return nonFiniteRange(x)
	}
	chunks := (n + optimGrain - 1) / optimGrain
	flags := make([]bool, chunks)
	parallelFor(chunks, 1, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			flags[k] = nonFiniteRange(x[k*optimGrain : min(n, (k+1)*optimGrain)])
		}
	})
	for _, f := range flags {
		if f {
			return true
		}
	}
	return false
}

func nonFiniteRange[T Float](x []T) bool {
	done := 0
	switch x := any(x).(type) {
	case []float32:
		if haveVec && len(x) >= 8 {
			done = len(x) &^ 7
			if vec.NonFiniteF32(p32(x), done) {
				return true
			}
		}
	case []float64:
		if haveVec && len(x) >= 4 {
			done = len(x) &^ 3
			if vec.NonFiniteF64(p64(x), done) {
				return true
			}
		}
	}
	for _, e := range x[done:] {
		if !isFinite(e) {
			return true
		}
	}
	return false
}

func p64(s []float64) *float64 { return (*float64)(unsafe.Pointer(unsafe.SliceData(s))) }
