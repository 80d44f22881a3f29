// Package vec holds hyperflat's float32 elementwise kernels in AVX2 assembly: Go does not
// vectorize loops, and a scalar elementwise pass costs about as much as a float32 matrix
// product's worth of the same data. Each function processes the largest multiple of 8
// elements; callers finish the tail.
package vec

import "golang.org/x/sys/cpu"

// Available reports whether the CPU has AVX2 (and FMA, for AffineF32 and the products, and
// POPCNT, for the counts).
var Available = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasPOPCNT

//go:noescape
func AddF32(y, a, b *float32, n int)

//go:noescape
func SubF32(y, a, b *float32, n int)

//go:noescape
func MulF32(y, a, b *float32, n int)

//go:noescape
func DivF32(y, a, b *float32, n int)

// DivScalarF32 sets y[i] = x[i] / c (a broadcast divisor, where DivF32 would need it
// repeated in memory).
//
//go:noescape
func DivScalarF32(y, x *float32, c float32, n int)

// ScalarDivF32 sets y[i] = c / x[i].
//
//go:noescape
func ScalarDivF32(y *float32, c float32, x *float32, n int)

//go:noescape
func AffineF32(y, x *float32, n int, alpha, beta float32)

//go:noescape
func ReluF32(y, x *float32, n int)

//go:noescape
func GateF32(y, x, gr *float32, n int)

//go:noescape
func StepF32(y, x *float32, n int)

//go:noescape
func SumF32(x *float32, n int) float32

//go:noescape
func DotF32(a, b *float32, n int) float32

// SumPlanesF32 adds to y[i] the sum of plane i of x (hw elements, a multiple of 8), for i < c,
// each summed as SumF32 sums it.
//
//go:noescape
func SumPlanesF32(y, x *float32, c, hw int)

// FillF32 sets y[i] = v for i < n (a broadcast operand's run, a channel's value over its map).
//
//go:noescape
func FillF32(y *float32, v float32, n int)

//go:noescape
func ArgMax2x2F32(out, r0, r1 *float32, n int, base, width float32, iota *float32)

// ArgMaxRowF32 finds one row of max-pool windows' first largest elements, eight windows at a
// time by masked gathers: out[o] for o < n is the plane index, as a float32, of the first
// largest element in row-major order of the window over plane rows row … row+rows−1 (all
// inside the plane) and columns col0 + o·sw + k, k < kw, where columns outside 0 … width−1 are
// padding, never read. A later element replaces the maximum only if greater (so a NaN never
// does, and a first NaN stays). Plane indices must be below 2^24.
//
//go:noescape
func ArgMaxRowF32(out, plane *float32, n, row, rows, width, kw, sw, col0 int)

// Im2colTapF32 lays out one tap of a strided convolution's windows by masked gathers:
// dst[r·n + c] = src[r·lds + c·sw + col0] for lo ≤ c < hi, and +0 (padding, never read) for
// the other c < n, for every r < rows. Indices must fit in 32 bits.
//
//go:noescape
func Im2colTapF32(dst, src *float32, rows, n, lo, hi, sw, col0, lds int)

// Im2colTableF32 lays out c channels of an image through a gather table, by masked gathers:
// dst[(ch·l + t)·ldd + p] = img[ch·hw + e] for e = tab[t·np + p] ≥ 0, and +0 (padding, never
// read) for e < 0, for every channel ch < c, tap t < l and position p < np.
//
//go:noescape
func Im2colTableF32(dst *float32, ldd int, img *float32, hw int, tab *int32, c, l, np int)
