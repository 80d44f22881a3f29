package graph

import (
	"math"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/graph/internal/vec"
)

// The RMSprop and Langevin (SGLD) updates, as optimkern.go does Adam: vector kernels that
// reproduce the scalar loops below bit for bit, with the check for a non-finite result fused
// into the pass that writes it. The scalar loops round every product explicitly (T(…)), so
// that no build fuses them into multiply-adds the kernels do not use.

// RMSpropCoeffs are the constants of an RMSprop update (see RMSpropUpdate).
type RMSpropCoeffs[T Float] struct {
	Alpha, Alphac T // α and 1 − α
	Eps, LR       T
	Momentum      T // used when > 0
	WD            T // coupled L2 weight decay, 0 for none
	Centered      bool
}

// RMSpropUpdate applies one RMSprop step in place, element by element (PyTorch's
// torch.optim.RMSprop; samplers.RMSprop documents it),
//
//	g′ = g + WD·p (g when WD is 0),  s ← α·s + (Alphac·g′)·g′,
//	a ← a + Alphac·(g′ − a),  r = √max(s − a·a, 0) + Eps   (Centered; else r = √s + Eps)
//	b ← Momentum·b + g′/r,  p ← p − LR·b                    (Momentum > 0)
//	p ← p − LR·(g′/r)                                        (otherwise)
//
// and reports whether any updated p is NaN or infinite. p, g and s have one length; a is read
// only when Centered and b only when Momentum > 0 (either may be nil otherwise).
func RMSpropUpdate[T Float](p, g, s, a, b []T, c RMSpropCoeffs[T]) (nonFinite bool) {
	n := len(p)
	g, s = g[:n], s[:n]
	if c.Centered {
		a = a[:n]
	} else {
		a = s // unread: any slice of length n keeps the kernel's pointer arithmetic in bounds
	}
	if c.Momentum > 0 {
		b = b[:n]
	} else {
		b = s
	}
	if n < 2*optimGrain {
		return rmspropRange(p, g, s, a, b, c)
	}
	chunks := (n + optimGrain - 1) / optimGrain
	var small [64]bool // a 2M-element tensor needs no allocation for its flags
	flags := small[:0]
	if chunks > len(small) {
		flags = make([]bool, chunks)
	}
	flags = flags[:chunks]
	parallelFor(chunks, 1, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			x, y := k*optimGrain, min(n, (k+1)*optimGrain)
			flags[k] = rmspropRange(p[x:y], g[x:y], s[x:y], a[x:y], b[x:y], c)
		}
	})
	for _, f := range flags {
		nonFinite = nonFinite || f
	}
	return nonFinite
}

func rmspropRange[T Float](p, g, s, a, b []T, c RMSpropCoeffs[T]) bool {
	done, bad := 0, false
	flags := 0
	if c.WD != 0 {
		flags |= vec.RMSWeightDecay
	}
	if c.Centered {
		flags |= vec.RMSCentered
	}
	if c.Momentum > 0 {
		flags |= vec.RMSMomentum
	}
	switch p := any(p).(type) {
	case []float32:
		if haveVec && len(p) >= 8 {
			done = len(p) &^ 7
			k := [6]float32{float32(c.Alpha), float32(c.Alphac), float32(c.Eps), float32(c.LR), float32(c.Momentum), float32(c.WD)}
			g, s, a, b := any(g).([]float32), any(s).([]float32), any(a).([]float32), any(b).([]float32)
			bad = vec.RMSpropF32(p32(p), p32(g), p32(s), p32(a), p32(b), done, &k, flags)
		}
	case []float64:
		if haveVec && len(p) >= 4 {
			done = len(p) &^ 3
			k := [6]float64{float64(c.Alpha), float64(c.Alphac), float64(c.Eps), float64(c.LR), float64(c.Momentum), float64(c.WD)}
			g, s, a, b := any(g).([]float64), any(s).([]float64), any(a).([]float64), any(b).([]float64)
			bad = vec.RMSpropF64(p64(p), p64(g), p64(s), p64(a), p64(b), done, &k, flags)
		}
	}
	return rmspropScalar(p[done:], g[done:], s[done:], a[done:], b[done:], c) || bad
}

// rmspropScalar is RMSpropUpdate's definition, and the tail of the vector path.
func rmspropScalar[T Float](p, g, s, a, b []T, c RMSpropCoeffs[T]) bool {
	bad := false
	for j := range p {
		gj := g[j]
		if c.WD != 0 {
			gj += T(c.WD * p[j])
		}
		s[j] = T(c.Alpha*s[j]) + T(T(c.Alphac*gj)*gj)
		var r T
		if c.Centered {
			a[j] += T(c.Alphac * (gj - a[j]))
			r = T(math.Sqrt(float64(max(s[j]-T(a[j]*a[j]), 0)))) + c.Eps
		} else {
			r = T(math.Sqrt(float64(s[j]))) + c.Eps
		}
		if c.Momentum > 0 {
			b[j] = T(c.Momentum*b[j]) + gj/r
			p[j] -= T(c.LR * b[j])
		} else {
			p[j] -= T(c.LR * (gj / r))
		}
		bad = bad || !isFinite(p[j])
	}
	return bad
}

// langevinBlock is how many noise draws LangevinMove buffers (on its stack) per kernel call.
const langevinBlock = 256

// LangevinMove applies the Langevin (SGLD) move θ ← θ − eta·g + std·ξ to every entry of p in
// place, computed in float64 and rounded to T,
//
//	p ← T((float64(p) − eta·float64(g)) + std·ξ),  ξ = rng.NormFloat64(), one per entry in order,
//
// or p ← T(float64(p) − eta·float64(g)) without drawing when std is 0, and reports whether
// any new p is NaN or infinite. p and g have one length. The draws are what a scalar loop
// makes, in its order, so rng ends in the same state.
func LangevinMove[T, U Float](p []T, g []U, eta, std float64, rng *rand.Rand) (nonFinite bool) {
	g = g[:len(p)]
	var xi [langevinBlock]float64
	noise := 0
	if std != 0 {
		noise = 1
	}
	for lo := 0; lo < len(p); lo += langevinBlock {
		hi := min(len(p), lo+langevinBlock)
		pb, gb, x := p[lo:hi], g[lo:hi], xi[:hi-lo]
		if noise != 0 {
			for j := range x {
				x[j] = rng.NormFloat64()
			}
		}
		done := 0
		switch pv := any(pb).(type) {
		case []float32:
			if gv, ok := any(gb).([]float32); ok && haveVec && len(pv) >= 4 {
				done = len(pv) &^ 3
				nonFinite = vec.LangevinF32(p32(pv), p32(gv), &x[0], done, eta, std, noise) || nonFinite
			}
		case []float64:
			if gv, ok := any(gb).([]float64); ok && haveVec && len(pv) >= 4 {
				done = len(pv) &^ 3
				nonFinite = vec.LangevinF64(p64(pv), p64(gv), &x[0], done, eta, std, noise) || nonFinite
			}
		}
		nonFinite = langevinScalar(pb[done:], gb[done:], x[done:], eta, std) || nonFinite
	}
	return nonFinite
}

// langevinScalar is LangevinMove's definition on drawn noise xi (unread when std is 0), and
// the tail of the vector path.
func langevinScalar[T, U Float](p []T, g []U, xi []float64, eta, std float64) bool {
	bad := false
	for j := range p {
		if std == 0 {
			p[j] = T(float64(p[j]) - float64(eta*float64(g[j])))
		} else {
			p[j] = T(float64(float64(p[j])-float64(eta*float64(g[j]))) + float64(std*xi[j]))
		}
		bad = bad || !isFinite(p[j])
	}
	return bad
}
