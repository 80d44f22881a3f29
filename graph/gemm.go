package graph

import (
	kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// gemmSplitFlops is the size (m·n·k) above which gemm splits a product across cores: about
// 20 µs of one core, well above the cost of handing work to another goroutine.
const gemmSplitFlops = 1 << 20

// gemm sets c = op(a)·op(b) for row-major operands through the BLAS in use (gonum's pure-Go
// one, or OpenBLAS under the openblas build tag). Large products are split into row or column
// blocks of c computed on separate goroutines.
func gemm[T Float](ta, tb bool, m, n, k int, a, b, c []T) {
	gemmAcc(ta, tb, m, n, k, a, b, 0, c)
}

// gemmAcc sets c = op(a)·op(b) + beta·c.
func gemmAcc[T Float](ta, tb bool, m, n, k int, a, b []T, beta T, c []T) {
	gemmSupport(ta, tb, m, n, k, a, b, beta, c, nil, nil, nil)
}

// gemmSupport is gemmAcc that also reports, when it can, which rows of c may be nonzero: with
// beta 0 and support not nil, a product that takes the sparse path sets *support to those
// rows (see gemmSparse) and returns true; otherwise it returns false and c may be nonzero
// anywhere. dirty, when not nil, says that c is zero outside those rows (see gemmSparse).
func gemmSupport[T Float](ta, tb bool, m, n, k int, a, b []T, beta T, c []T, support, dirty *[]int32, left *operandMemo) bool {
	if m == 0 || n == 0 {
		return false
	}
	if k == 0 {
		if beta == 0 {
			clear0(c[:m*n])
		} else {
			for i := range c[:m*n] {
				c[i] *= beta
			}
		}
		return false
	}
	if gemmSparse(ta, tb, m, n, k, a, b, beta, c, support, dirty, left) {
		return support != nil && beta == 0
	}
	gemmDense(ta, tb, m, n, k, a, b, beta, c)
	return false
}

// gemmDense is gemmSupport's product where gemmSparse declines it (m, n and k positive).
func gemmDense[T Float](ta, tb bool, m, n, k int, a, b []T, beta T, c []T) {
	lda, ldb := leadingDims(ta, tb, m, n, k)
	if !gemmThreadsItself && m*n*k >= gemmSplitFlops && max(m, n) >= 16 && !(procs() == 1 && kernelsWhole[T](ta, tb, m, n, k)) {
		// Split in whole kernel blocks (8 rows, or 24 columns) into gemmPieces pieces fixed by
		// the shape alone, on one core as on several: a BLAS may round a product differently
		// by its width (OpenBLAS does), so a split that followed the number of cores would
		// make results depend on it.
		if m >= n {
			_, _, pieces := pieceBounds(m, 8, 0)
			parallelFor(pieces, 1, func(lo, hi int) {
				for q := lo; q < hi; q++ {
					r0, r1, _ := pieceBounds(m, 8, q)
					ao := r0 * k
					if ta {
						ao = r0
					}
					gemmLD(ta, tb, r1-r0, n, k, a[ao:], lda, b, ldb, beta, c[r0*n:], n)
				}
			})
		} else {
			cb := colPiece[T]()
			_, _, pieces := pieceBounds(n, cb, 0)
			parallelFor(pieces, 1, func(lo, hi int) {
				for q := lo; q < hi; q++ {
					c0, c1, _ := pieceBounds(n, cb, q)
					bo := c0
					if tb {
						bo = c0 * k
					}
					gemmLD(ta, tb, m, c1-c0, k, a, lda, b[bo:], ldb, beta, c[c0:], n)
				}
			})
		}
		return
	}
	gemmLD(ta, tb, m, n, k, a, lda, b, ldb, beta, c, n)
}

// pieceCols is the block of columns a float32 product split by columns is split in: the widest
// kernel's (AVX-512's 48 on a CPU that has it, else AVX2's 24), so that no piece leaves a strip
// to the narrower kernel (pieces of three 24-column blocks, as a 64×576 filter gradient's were,
// ran a third of their columns through Kern4x24 at half Kern8x48Z's speed). It follows the
// CPU, not HYPERFLAT_SIMD, so that the switch changes no bits. The 24- and 48-wide kernels
// sum an element alike, and a product's last n mod 24 columns, which the narrower ones sum
// (Kern4x8, Kern8x16ZN: not to the same bits), are the same columns either way; only a last
// piece narrower than 24 columns may change between the BLAS and the kernels. Float64
// products keep 24 (their kernels are 12 wide, and the BLAS, which may round by a piece's
// width, computes them under OpenBLAS).
var pieceCols = map[bool]int{false: 24, true: 48}[kern.HasAVX512]

// colPiece is the block of columns a product of T split by columns is split in.
func colPiece[T Float]() int {
	if _, ok := any(T(0)).(float32); ok {
		return pieceCols
	}
	return 24
}

// pieceBounds are the bounds of piece q of the gemmPieces pieces (or fewer) that gemmSupport
// splits n rows or columns into, in whole blocks of size b.
func pieceBounds(n, b, q int) (lo, hi int, pieces int) {
	blocks := (n + b - 1) / b
	pieces = min(blocks, gemmPieces)
	return q * blocks / pieces * b, min(n, (q+1)*blocks/pieces*b), pieces
}

// kernelsWhole says whether gemmSupport may compute op(a)·op(b) in one call rather than in
// its pieces, on one core: when this package's kernels would compute the whole product and
// every piece (not the BLAS, whose rounding may depend on a piece's width, nor sgemm's dot
// products). The kernels' pieces start on whole blocks, so each element then takes the same
// kernel and sums its products in the same order either way, and the results are the same to
// the bit; one call walks B once rather than once a piece.
func kernelsWhole[T Float](ta, tb bool, m, n, k int) bool {
	if _, ok := any(T(0)).(float64); ok {
		return useDgemmKernels()
	}
	kernels := func(m, n int) bool {
		return haveSgemmKernels && !dotProducts(ta, tb, m, n, k) && useSgemmKernels(tb, m, n, k)
	}
	if !kernels(m, n) {
		return false
	}
	for q, pieces := 0, 1; q < pieces; q++ {
		var lo, hi int
		if m >= n {
			lo, hi, pieces = pieceBounds(m, 8, q)
			if !kernels(hi-lo, n) {
				return false
			}
		} else {
			lo, hi, pieces = pieceBounds(n, colPiece[T](), q)
			if !kernels(m, hi-lo) {
				return false
			}
		}
	}
	return true
}

// leadingDims are the leading dimensions of contiguous row-major operands of op(a)·op(b).
func leadingDims(ta, tb bool, m, n, k int) (lda, ldb int) {
	lda, ldb = k, n
	if ta {
		lda = m
	}
	if tb {
		ldb = k
	}
	return lda, ldb
}

// gemmPieces is the number of pieces a large product is split into (fixed, so that results do
// not depend on the number of cores; enough to balance 2–8 cores).
const gemmPieces = 8

// gemmSerial is gemmAcc on the calling goroutine only, for kernels that parallelize at a
// coarser grain themselves.
func gemmSerial[T Float](ta, tb bool, m, n, k int, a, b []T, beta T, c []T) {
	if m == 0 || n == 0 || k == 0 {
		gemmAcc(ta, tb, m, n, k, a, b, beta, c)
		return
	}
	lda, ldb := leadingDims(ta, tb, m, n, k)
	gemmLD(ta, tb, m, n, k, a, lda, b, ldb, beta, c, n)
}

// gemmLD is one BLAS call with explicit leading dimensions. The slices may be longer than the
// operands; they are trimmed to what BLAS checks.
func gemmLD[T Float](ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ar, ac := m, k
	if ta {
		ar, ac = k, m
	}
	br, bc := k, n
	if tb {
		br, bc = n, k
	}
	a = a[:lda*(ar-1)+ac]
	b = b[:ldb*(br-1)+bc]
	c = c[:ldc*(m-1)+n]
	switch cc := any(c).(type) {
	case []float32:
		if useSgemmKernels(tb, m, n, k) && sgemm(ta, tb, m, n, k, any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), cc, ldc) {
			return
		}
		if m == 4 && tb && !ta && beta == 0 && gemmZenNT(n, k, any(a).([]float32), lda, any(b).([]float32), ldb, cc, ldc) {
			return
		}
	case []float64:
		if useDgemmKernels() && kern.DGemm(ta, tb, m, n, k, any(a).([]float64), lda, any(b).([]float64), ldb, float64(beta), cc, ldc) {
			return
		}
	}
	gemmBLAS(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

// gemmBLAS is one call of the BLAS in use.
func gemmBLAS[T Float](ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	tA, tB := blas.NoTrans, blas.NoTrans
	if ta {
		tA = blas.Trans
	}
	if tb {
		tB = blas.Trans
	}
	switch c := any(c).(type) {
	case []float64:
		blas64.Implementation().Dgemm(tA, tB, m, n, k, 1, any(a).([]float64), lda, any(b).([]float64), ldb, float64(beta), c, ldc)
	case []float32:
		blas32.Implementation().Sgemm(tA, tB, m, n, k, 1, any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
	}
}

// useSgemmKernels says whether a float32 product goes to this package's kernels rather than
// the BLAS: always in the pure-Go build (gonum's float32 kernels are scalar), and under
// OpenBLAS for the products its packing overhead dominates (HYPERFLAT_SGEMM=blas or =kernels
// forces one side, for comparisons).
func useSgemmKernels(tb bool, m, n, k int) bool {
	switch sgemmMode {
	case "blas":
		return false
	case "kernels":
		return true
	}
	return !blasIsFast || sgemmBeatsBLAS(tb, m, n, k)
}

// useDgemmKernels says whether float64 products go to this package's AVX2/FMA kernels
// (graph/internal/sgemm's DGemm) rather than the BLAS: in the pure-Go build, whose gonum
// Dgemm is SSE2 without FMA and about twice as slow on the experiments' float64 MLPs; OpenBLAS
// keeps them in its build. HYPERFLAT_SGEMM forces either way, as for float32.
func useDgemmKernels() bool {
	switch sgemmMode {
	case "blas":
		return false
	case "kernels":
		return true
	}
	return !blasIsFast
}

// sgemmBeatsBLAS is where this package's kernels beat single-threaded OpenBLAS 0.3.21 on this
// project's machines (TestSgemmSpeed): short inner dimensions, which OpenBLAS's packing makes
// slow, and untransposed B at least one kernel block (24 columns) wide. OpenBLAS keeps narrow
// outputs (10 logits) and, on AVX2, transposed B with a long inner dimension. On a CPU with
// AVX-512 the kernels, twice as fast as OpenBLAS's AVX2 ones, also take transposed B (a
// convolution's filter gradient) at least 24 columns wide for at least 16 rows, over which the
// transposed copy of B they make first is spent; that choice follows the CPU, not
// HYPERFLAT_SIMD, so that the switch changes no bits.
func sgemmBeatsBLAS(tb bool, m, n, k int) bool {
	return k <= 32 || (!tb && n >= 24) || (tb && kern.HasAVX512 && m >= 16 && n >= 24)
}
