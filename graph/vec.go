package graph

import (
	"unsafe"

	"github.com/hyperflat/hyperflat/graph/internal/vec"
)

// Float32 elementwise passes go through the AVX2 kernels of graph/internal/vec where the CPU
// has them; each helper reports whether it handled the call (the caller then runs its scalar
// loop) and finishes the last len mod 8 elements itself.

var haveVec = vec.Available

// adam512 says whether float32 Adam updates take the AVX-512 kernel (the CPU has it and
// HYPERFLAT_SIMD does not say avx2); the bits are AVX2's either way.
var adam512 = vec.HasAVX512

func f32s[T Float](s []T) ([]float32, bool) {
	f, ok := any(s).([]float32)
	return f, ok && haveVec
}

func p32(s []float32) *float32 { return (*float32)(unsafe.Pointer(unsafe.SliceData(s))) }

// vecBinary: y = a ∘ b with strides sa, sb ∈ {0, 1} (0: a single element), where op d has a
// kernel for them.
func vecBinary[T Float](d *binaryDef[T], y, a, b []T, sa, sb int) bool {
	y32, ok := f32s(y)
	if !ok || len(y) < 8 {
		return false
	}
	a32, b32 := any(a).([]float32), any(b).([]float32)
	n := len(y32)
	n8 := n &^ 7
	switch {
	case sa == 1 && sb == 1 && d.vec32 != nil:
		a32, b32 = a32[:n], b32[:n]
		d.vec32(p32(y32), p32(a32), p32(b32), n8)
	case sa == 1 && sb == 0 && d.affine != nil:
		a32 = a32[:n]
		alpha, beta := d.affine(b32[0], false)
		vec.AffineF32(p32(y32), p32(a32), n8, alpha, beta)
	case sa == 0 && sb == 1 && d.affine != nil:
		b32 = b32[:n]
		alpha, beta := d.affine(a32[0], true)
		vec.AffineF32(p32(y32), p32(b32), n8, alpha, beta)
	case sa == 1 && sb == 0 && d.scalar32 != nil: // no affine form (a / c): a kernel of its own
		d.scalar32(p32(y32), p32(a32[:n]), b32[0], n8)
	case sa == 0 && sb == 1 && d.rscalar32 != nil:
		d.rscalar32(p32(y32), a32[0], p32(b32[:n]), n8)
	default:
		return false
	}
	if n8 < n {
		d.row(y[n8:], a[n8*sa:], b[n8*sb:], sa, sb)
	}
	return true
}

// vecUnary runs op d's AVX2 kernel, where it has one, over the largest multiple of 8 elements
// of y and returns how many it computed.
func vecUnary[T Float](d *unaryDef[T], op *unaryOp, y, x []T) int {
	if d.vec32 == nil {
		return 0
	}
	y32, ok := f32s(y)
	if !ok || len(y) < 8 {
		return 0
	}
	x32 := any(x).([]float32)[:len(y32)]
	n8 := len(y32) &^ 7
	d.vec32(op, y32, x32, n8)
	return n8
}

// vecGate: y = g where x > 0, else 0.
func vecGate[T Float](y, x, g []T) bool {
	y32, ok := f32s(y)
	if !ok || len(y) < 8 {
		return false
	}
	n8 := len(y32) &^ 7
	vec.GateF32(p32(y32), p32(any(x).([]float32)[:len(y32)]), p32(any(g).([]float32)[:len(y32)]), n8)
	if n8 < len(y) {
		gateScalar(y[n8:], x[n8:], g[n8:])
	}
	return true
}

// vecSum: Σ x in 32 lanes.
func vecSum[T Float](x []T) (T, bool) {
	x32, ok := f32s(x)
	if !ok || len(x) < 8 {
		return 0, false
	}
	n8 := len(x32) &^ 7
	s := vec.SumF32(p32(x32), n8)
	for _, e := range x32[n8:] {
		s += e
	}
	return T(s), true
}

func vecAvailable() bool { return vec.Available }

// fill sets every element of s to v: through the vector kernel for float32 runs of at least 16
// (a channel's value over its 4×4 map or more), which a scalar loop stores one at a time.
func fill[T Float](s []T, v T) {
	if s32, ok := f32s(s); ok && len(s) >= 16 {
		n8 := len(s) &^ 7
		vec.FillF32(p32(s32), float32(v), n8)
		s = s[n8:]
	}
	for i := range s {
		s[i] = v
	}
}
