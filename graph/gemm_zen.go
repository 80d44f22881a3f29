package graph

import (
	"sync"

	kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"
)

// A batch of four rows' backward product dY·Wᵀ (dY 4×k, W n×k) goes to OpenBLAS, which packs
// all of W into its panel layout at every call before a kernel reads it once: at that size
// the copy costs twice the arithmetic, and the two together a sixth of a wide layer's step.
// On the CPUs whose kernels OpenBLAS 0.3.21 calls Zen (this project's machines), gemmZenNT
// computes such a product from W in place, each element summed as OpenBLAS's kernel sums it,
// so the result is the one OpenBLAS gives, to the bit (TestGemmZenNT compares them on every
// shape the experiments' layers have): the inner dimension in the level-3 driver's panels
// (zenPanels), each panel's terms in two chains of fused multiply-adds from zero, the even
// and the odd ones, added, then added to the sum of the panels before.

// zenQ is the panel depth (GEMM_Q) of OpenBLAS 0.3.21's single-precision Zen kernels.
const zenQ = 320

// zenPanels splits an inner dimension k as OpenBLAS's level-3 driver does (driver/level3.c:
// GEMM_Q at a time while at least twice that is left, then the rest in two halves), and
// reports whether every panel is a multiple of 8, the kernel's unrolling; elsewhere its tail
// sums in another order, and gemmZenNT declines.
func zenPanels(k int, panels []int) ([]int, bool) {
	for ls := 0; ls < k; {
		l := k - ls
		if l >= 2*zenQ {
			l = zenQ
		} else if l > zenQ {
			l /= 2 // (GEMM_UNROLL_M is 1 for the Zen kernels' driver here)
		}
		if l%8 != 0 {
			return panels, false
		}
		panels = append(panels, l)
		ls += l
	}
	return panels, true
}

// zenMinRows is the fewest rows of W gemmZenNT takes, which must also be a multiple of 8:
// OpenBLAS computes other counts' last rows (and fewer rows: 1 to 5 seen) through edge
// kernels that sum in other orders.
const zenMinRows = 16

// zenOrder says whether gemmZenNT may stand in for OpenBLAS: under the openblas build, on the
// kernels it emulates, unless HYPERFLAT_SGEMM=blas asks for the BLAS itself.
func zenOrder() bool {
	return blasIsFast && blasCore == "Zen" && haveSgemmKernels && sgemmMode != "blas"
}

var zenPool = sync.Pool{New: func() any { return new([]float32) }}

// gemmZenNT sets c (4×n, ldc) = a·bᵀ, a 4×k (lda) and b n×k (ldb), to the bits of OpenBLAS's
// Zen kernels, and reports true; it reports false, computing nothing, where it cannot say it
// would (zenOrder, zenPanels, zenMinRows).
func gemmZenNT(n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) bool {
	if n < zenMinRows || n%8 != 0 || k == 0 || !zenOrder() {
		return false
	}
	var stack [8]int
	panels, ok := zenPanels(k, stack[:0])
	if !ok {
		return false
	}
	buf := zenPool.Get().(*[]float32)
	defer zenPool.Put(buf)
	if len(*buf) < 4*(k+n) {
		*buf = make([]float32, 4*(k+n))
	}
	dyt, t := (*buf)[:4*k], (*buf)[4*k:4*(k+n)]
	for r := range 4 {
		for p, x := range a[r*lda : r*lda+k] {
			dyt[p*4+r] = x
		}
	}
	clear(t)
	p0 := 0
	for _, kb := range panels {
		kern.ZenDotRows4(&b[p0], ldb*4, n, &dyt[p0*4], kb, &t[0])
		p0 += kb
	}
	for r := range 4 {
		row := c[r*ldc : r*ldc+n]
		for i := range row {
			row[i] = t[i*4+r]
		}
	}
	return true
}
