// Package sgemm holds hyperflat's float32 and float64 matrix-product kernels in AVX2/FMA assembly (in a
// package of its own: a package that uses cgo, as graph does under the openblas tag, cannot
// contain assembly).
package sgemm

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Float32 matrix products of the sizes models here are made of (a few hundred rows and
// columns, often one tiny dimension: 9 filter taps, 10 logits) spend most of a BLAS call on
// packing and dispatch. sgemm computes them with register-blocked AVX2/FMA kernels
// (sgemm_amd64.s) that read A and B in place: twelve 8-lane accumulators hold a 4×24 block of
// C, each step loading three vectors of a row of B and broadcasting four elements of A. B is
// walked in 256-row panels so that a 256×24 strip stays in the L1 cache while every row block
// of A passes over it. Two walks serve shapes where that strip is read for few rows: a product
// with at most 8 rows of A streams B row by row (KernRows4), and one whose panel of B fits
// 64 KiB writes C a block row at a time. Every element is summed in the same order whichever
// walk computes it.

//go:noescape
func Kern4x24(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)

//go:noescape
func Kern4x8(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)

//go:noescape
func Kern1x8(k int, a unsafe.Pointer, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, acc int)

// Kern8x48Z is Kern4x24 for an 8×48 block of C in AVX-512 (kern512_amd64.s): the same sum,
// term by term, for each element.
//
//go:noescape
func Kern8x48Z(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)

// Kern8x16ZN is Kern4x8 for up to 16 columns (a lane mask) of an 8-row block in AVX-512
// (kern512_amd64.s): the same sum, term by term, for each element.
//
//go:noescape
func Kern8x16ZN(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int, mask int)

// KernNarrowTZ is Kern8x16ZN's sums for 16 rows of a transposed A and 4 columns of B, into a
// 4×16 tile T (kern512_amd64.s).
//
//go:noescape
func KernNarrowTZ(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, t unsafe.Pointer)

// Transpose8x8 sets dst[j][i] = src[i][j] for an 8×8 block of float32 (rows lds and ldd
// bytes apart; transpose_amd64.s): gemm's copy of a transposed B, which in scalar code cost
// as much as a product 64 rows deep.
//
//go:noescape
func Transpose8x8(src unsafe.Pointer, lds int, dst unsafe.Pointer, ldd int)

//go:noescape
func KernRows4(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, t unsafe.Pointer, n int)

//go:noescape
func DKern4x12(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)

//go:noescape
func DKern4x4(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)

//go:noescape
func DKern1x4(k int, a unsafe.Pointer, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, acc int)

// Available reports whether the CPU has the kernels' instructions (AVX2 and FMA).
var Available = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// HasAVX512 reports whether the CPU (and the operating system, which must save the 512-bit
// registers) has AVX512F, which the 8×48 kernel needs. golang.org/x/sys/cpu reads both from
// CPUID and XGETBV.
var HasAVX512 = Available && cpu.X86.HasAVX512F

// use512 says whether float32 products take the AVX-512 kernel where the CPU has it
// (UseAVX512).
var use512 = HasAVX512

// UseAVX512 turns the AVX-512 kernel on or off (on only takes effect where HasAVX512) and
// reports whether it was in effect before. Off, every product runs the AVX2/FMA kernels alone,
// as on a CPU without AVX-512; the results are the same to the bit either way (each element
// sums its terms in the same order), only the time differs. Not safe to call while products
// run.
func UseAVX512(on bool) (was bool) {
	was = use512
	use512 = on && HasAVX512
	return was
}

// Extension names the widest vector extension float32 products use: "avx512", "avx2+fma", or
// "none" (graph falls back to its BLAS).
func Extension() string {
	switch {
	case use512:
		return "avx512"
	case Available:
		return "avx2+fma"
	}
	return "none"
}

// kc is the depth of the panels of B.
const kc = 256

// Gemm sets c = op(a)·op(b) + beta·c in float32 (row-major, leading dimensions lda, ldb,
// ldc) and reports true, or reports false when the CPU lacks AVX2 and FMA.
func Gemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	if use512 {
		return gemm(kernels32z, &bufs32, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
	}
	return gemm(kernels32, &bufs32, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

// DGemm is Gemm in float64 (dkern_amd64.s: 4×12, 4×4 and 1×4 blocks). Each element of C sums
// its k products in order, in panels of kc, so results do not depend on how a caller splits
// the product by columns.
func DGemm(ta, tb bool, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) bool {
	return gemm(kernels64, &bufs64, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

// kernelSet is one element type's kernels: a 4×wide and a 4×narrow block, and a 1×narrow row
// (wide = 3·narrow: three vectors).
type kernelSet struct {
	wide, narrow  int
	size          int // bytes per element
	block, block4 func(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)
	row           func(k int, a unsafe.Pointer, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, acc int)

	// rows, when not nil, computes the wide blocks of products with at most rowsMaxM rows of
	// A and an inner dimension of at least rowsMinK (see streamRows).
	rows               func(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, t unsafe.Pointer, n int)
	rowsMaxM, rowsMinK int
	// big, when not nil, computes bigRows×bigCols blocks (multiples of 4 rows and of wide
	// columns) of the wide columns, each element summed as block sums it: rows [0, m −
	// m mod bigRows of the rows in blocks of four) × columns [0, nWide − nWide mod bigCols).
	big              func(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)
	bigRows, bigCols int
	// bigNarrow, when not nil, computes the columns past the wide ones of the rows big covers,
	// bigRows at a time and up to 16 columns (a lane mask) a call, each element summed as
	// block4 sums it (the AVX2 walk's Kern4x8, and its zero-padded copy of B for the last
	// n mod narrow columns)
	bigNarrow func(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int, mask int)
	// tallAPanelBytes, tallBPanelBytes: C is also walked a block row at a time when a panel
	// of A is larger than the first (it would pass through the second-level cache once per
	// column strip, with a transposed A's rows a page apart) and one of B no larger than the
	// second (it stays there while every block row passes over it)
	tallAPanelBytes, tallBPanelBytes int
	// rowMajorBytes: a panel of B of at most this many bytes is walked one block row of C at
	// a time rather than one column strip at a time (see gemm).
	rowMajorBytes int
	// narrowT, when not nil, computes Aᵀ·B of at most 4 columns 16 rows of C at a time, each
	// element summed as bigNarrow sums it (see narrowTransposed).
	narrowT func(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, t unsafe.Pointer)
}

var (
	kernels32 = kernelSet{wide: 24, narrow: 8, size: 4, block: Kern4x24, block4: Kern4x8, row: Kern1x8,
		rows: KernRows4, rowsMaxM: 8, rowsMinK: 32, rowMajorBytes: 64 << 10, tallAPanelBytes: 512 << 10, tallBPanelBytes: 512 << 10}
	// kernels32z adds the AVX-512 kernel to kernels32 for the blocks it covers; the rest (the
	// edges, the rows ≤ 8 that stream B) take kernels32's, which sum in the same order.
	kernels32z = kernelSet{wide: 24, narrow: 8, size: 4, block: Kern4x24, block4: Kern4x8, row: Kern1x8,
		rows: KernRows4, rowsMaxM: 8, rowsMinK: 32, rowMajorBytes: 64 << 10,
		big: Kern8x48Z, bigRows: 8, bigCols: 48, bigNarrow: Kern8x16ZN, tallAPanelBytes: 512 << 10, tallBPanelBytes: 512 << 10,
		narrowT: KernNarrowTZ}
	kernels64 = kernelSet{wide: 12, narrow: 4, size: 8, block: DKern4x12, block4: DKern4x4, row: DKern1x4,
		rowMajorBytes: 64 << 10}
)

func gemm[T float32 | float64](ks kernelSet, pool *sync.Pool, ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) bool {
	if !Available {
		return false
	}
	if m == 0 || n == 0 {
		return true
	}
	if beta != 0 && beta != 1 {
		for i := 0; i < m; i++ {
			row := c[i*ldc:][:n]
			for j := range row {
				row[j] *= beta
			}
		}
		beta = 1
	}
	if k == 0 {
		if beta == 0 {
			for i := 0; i < m; i++ {
				clear(c[i*ldc:][:n])
			}
		}
		return true
	}
	if ta && n <= 4 && m >= 16 && ks.narrowT != nil && ks.size == 4 && ks.bigNarrow != nil {
		m16 := m - m%16
		narrowTransposed(ks, pool, tb, m16, n, k, a, lda, b, ldb, beta, c, ldc)
		if m16 == m {
			return true
		}
		// the last m mod 16 rows as the walk below computes them: Kern8x16ZN's rows of
		// eight, then the tile's, in the same order as for the whole product
		return gemm(ks, pool, ta, tb, m-m16, n, k, a[m16:], lda, b, ldb, beta, c[m16*ldc:], ldc)
	}
	var ws *[]T
	if tb { // B is stored n×k: lay out its transpose k×n
		ws = getBuf[T](pool, k*n)
		bt := *ws
		// in 8×8 tiles, so that writes stay within a few cache lines, two tiles of rows of B at
		// a time, so that each row of bt gets a whole 64-byte line at once: a line written in
		// two halves far apart (a filter gradient's bt is several MB) left the second-level
		// cache in between and was read back for the second
		const t = 8
		for j0 := 0; j0 < n; j0 += 2 * t {
			for p0 := 0; p0 < k; p0 += t {
				for jj := j0; jj < min(n, j0+2*t); jj += t {
					if ks.size == 4 && jj+t <= n && p0+t <= k {
						Transpose8x8(unsafe.Pointer(&b[jj*ldb+p0]), ldb*4, unsafe.Pointer(&bt[p0*n+jj]), n*4)
						continue
					}
					for j := jj; j < min(n, jj+t); j++ {
						row := b[j*ldb+p0 : j*ldb+min(k, p0+t)]
						for p, e := range row {
							bt[(p0+p)*n+j] = e
						}
					}
				}
			}
		}
		b, ldb = bt, n
	}
	// A element (i, p): a[i·ars + p·acs]
	ars, acs := lda, 1
	if ta {
		ars, acs = 1, lda
	}
	f, wide, narrow := ks.size, ks.wide, ks.narrow
	nWide, nNarrow := n-n%wide, n-n%narrow
	m4 := m - m%4
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		acc := 0
		if p0 > 0 || beta == 1 {
			acc = 1
		}
		ap := func(i int) unsafe.Pointer { return unsafe.Pointer(&a[i*ars+p0*acs]) }
		// block computes rows [i0, i0+4) (or row i0 alone when i0 ≥ m4) of C's columns [j0, j0+w)
		block := func(i0, j0, w int) {
			bp := unsafe.Pointer(&b[p0*ldb+j0])
			switch {
			case i0 >= m4:
				for jj := 0; jj < w; jj += narrow {
					ks.row(kb, ap(i0), acs*f, unsafe.Pointer(&b[p0*ldb+j0+jj]), ldb*f, unsafe.Pointer(&c[i0*ldc+j0+jj]), acc)
				}
			case w == wide:
				ks.block(kb, ap(i0), ars*f, acs*f, bp, ldb*f, unsafe.Pointer(&c[i0*ldc+j0]), ldc*f, acc)
			default:
				ks.block4(kb, ap(i0), ars*f, acs*f, bp, ldb*f, unsafe.Pointer(&c[i0*ldc+j0]), ldc*f, acc)
			}
		}
		width := func(j0 int) int {
			if j0 >= nWide {
				return narrow
			}
			return wide
		}
		next := func(i0 int) int {
			if i0 < m4 {
				return i0 + 4
			}
			return i0 + 1
		}
		j1 := 0 // the wide columns before j1 are done for rows [0, m4)
		if ks.rows != nil && m <= ks.rowsMaxM && kb >= ks.rowsMinK && m4 > 0 && nWide > 0 {
			for i0 := 0; i0 < m4; i0 += 4 {
				streamRows(ks, pool, kb, ap(i0), ars*f, acs*f, unsafe.Pointer(&b[p0*ldb]), ldb*f, c[i0*ldc:], ldc, nWide, acc)
			}
			j1 = nWide
		}
		rowMajor := kb*n*f <= ks.rowMajorBytes || (ks.tallAPanelBytes > 0 && m*kb*f > ks.tallAPanelBytes && kb*n*f <= ks.tallBPanelBytes)
		// the AVX-512 blocks: rows [0, m8) × columns [0, n48), unless streamed above
		m8, n48 := 0, 0
		if ks.big != nil && j1 == 0 {
			m8, n48 = m4-m4%ks.bigRows, nWide-nWide%ks.bigCols
		}
		if m8 > 0 && n48 > 0 {
			big := func(i0, j0 int) {
				ks.big(kb, ap(i0), ars*f, acs*f, unsafe.Pointer(&b[p0*ldb+j0]), ldb*f, unsafe.Pointer(&c[i0*ldc+j0]), ldc*f, acc)
			}
			if rowMajor {
				for i0 := 0; i0 < m8; i0 += ks.bigRows {
					for j0 := 0; j0 < n48; j0 += ks.bigCols {
						big(i0, j0)
					}
				}
			} else {
				for j0 := 0; j0 < n48; j0 += ks.bigCols {
					for i0 := 0; i0 < m8; i0 += ks.bigRows {
						big(i0, j0)
					}
				}
			}
		}
		// the columns past the wide ones of rows [0, nz): 8-row blocks, 16 columns at a time
		nz := 0
		if ks.bigNarrow != nil && m8 > 0 && nWide < n {
			nz = m8
			for i0 := 0; i0 < nz; i0 += ks.bigRows {
				for j0 := nWide; j0 < n; j0 += 16 {
					w := min(16, n-j0)
					ks.bigNarrow(kb, ap(i0), ars*f, acs*f, unsafe.Pointer(&b[p0*ldb+j0]), ldb*f, unsafe.Pointer(&c[i0*ldc+j0]), ldc*f, acc, 1<<w-1)
				}
			}
		}
		// todo says whether block(i0, j0, ·) is still to compute
		todo := func(i0, j0 int) bool {
			return (i0 >= m4 || j0 >= j1) && (i0 >= m8 || j0 >= n48) && (i0 >= nz || j0 < nWide)
		}
		if rowMajor {
			// B's panel stays in the cache, so C is written a block row at a time, each of its
			// cache lines once, rather than in strips of 24 columns across every row
			for i0 := 0; i0 < m; i0 = next(i0) {
				for j0 := 0; j0 < nNarrow; j0 += width(j0) {
					if todo(i0, j0) {
						block(i0, j0, width(j0))
					}
				}
			}
		} else {
			for j0 := 0; j0 < nNarrow; j0 += width(j0) {
				for i0 := 0; i0 < m; i0 = next(i0) {
					if todo(i0, j0) {
						block(i0, j0, width(j0))
					}
				}
			}
		}
		if nNarrow < n && nz < m { // the last n mod narrow columns: through a zero-padded copy of B and a C tile
			tw := n - nNarrow
			tb := getBuf[T](pool, kb*narrow+4*narrow)
			bt, tile := (*tb)[:kb*narrow], (*tb)[kb*narrow:]
			for p := 0; p < kb; p++ {
				row := bt[p*narrow : p*narrow+narrow]
				copy(row, b[(p0+p)*ldb+nNarrow:][:tw])
				clear(row[tw:])
			}
			flush := func(i0, rows int) {
				for r := 0; r < rows; r++ {
					dst := c[(i0+r)*ldc+nNarrow:][:tw]
					src := tile[r*narrow:][:tw]
					if acc != 0 {
						for j := range dst {
							dst[j] += src[j]
						}
					} else {
						copy(dst, src)
					}
				}
			}
			for i0 := nz; i0 < m4; i0 += 4 {
				ks.block4(kb, ap(i0), ars*f, acs*f, unsafe.Pointer(&bt[0]), narrow*f, unsafe.Pointer(&tile[0]), narrow*f, 0)
				flush(i0, 4)
			}
			for i := m4; i < m; i++ {
				ks.row(kb, ap(i), acs*f, unsafe.Pointer(&bt[0]), narrow*f, unsafe.Pointer(&tile[0]), 0)
				flush(i, 1)
			}
			pool.Put(tb)
		}
	}
	if ws != nil {
		pool.Put(ws)
	}
	return true
}

// narrowTransposed sets C's m rows (a multiple of 16) to Aᵀ·B (+ C when beta is 1), A stored
// k×m and B of n ≤ 4 columns, through ks.narrowT on B's columns zero-padded to 4: 16 rows of
// C a vector instead of the walk's blocks of 8 rows × 16 lanes, n of them used, but each
// element summed as the walk's Kern8x16ZN sums it, in panels of kc, to the same bits.
func narrowTransposed[T float32 | float64](ks kernelSet, pool *sync.Pool, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	const w = 4
	pb := getBuf[T](pool, k*w+w*16)
	bt, tile := (*pb)[:k*w], (*pb)[k*w:] // bt[p·4 + j] = B(p, j); tile[j·16 + r] = C(i0 + r, j)
	for p := 0; p < k; p++ {
		row := bt[p*w : p*w+w]
		clear(row)
		for j := 0; j < n; j++ {
			if tb {
				row[j] = b[j*ldb+p]
			} else {
				row[j] = b[p*ldb+j]
			}
		}
	}
	f := ks.size
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		acc := p0 > 0 || beta == 1
		for i0 := 0; i0 < m; i0 += 16 {
			ks.narrowT(kb, unsafe.Pointer(&a[p0*lda+i0]), lda*f, unsafe.Pointer(&bt[p0*w]), unsafe.Pointer(&tile[0]))
			for r := 0; r < 16; r++ {
				dst := c[(i0+r)*ldc:][:n]
				for j := range dst {
					if acc {
						dst[j] = tile[j*16+r] + dst[j]
					} else {
						dst[j] = tile[j*16+r]
					}
				}
			}
		}
	}
	pool.Put(pb)
}

// streamRows adds A[0:4, 0:kb]·B[0:kb, 0:nw] to C's first four rows (acc ≠ 0) or sets them to
// it, nw a multiple of 8, through ks.rows, which reads B once, row by row: for a few rows of A,
// the 24-column strips of the block kernel read B's rows a few cache lines at a time across as
// many pages, which costs more than the arithmetic. Each element sums its products in order,
// one FMA each from zero, then adds C, as the block kernel does, so the result is the same to
// the bit.
func streamRows[T float32 | float64](ks kernelSet, pool *sync.Pool, kb int, ap unsafe.Pointer, ars, acs int, bp unsafe.Pointer, ldb int, c []T, ldc, nw, acc int) {
	buf := getBuf[T](pool, 4*nw)
	t := *buf
	clear(t)
	ks.rows(kb, ap, ars, acs, bp, ldb, unsafe.Pointer(&t[0]), nw)
	for r := 0; r < 4; r++ {
		row := c[r*ldc:][:nw]
		for ch := 0; ch < nw/8; ch++ {
			src, dst := t[ch*32+r*8:][:8], row[ch*8:][:8]
			if acc != 0 {
				for q := range dst {
					dst[q] += src[q]
				}
			} else {
				copy(dst, src)
			}
		}
	}
	pool.Put(buf)
}

// bufs32 and bufs64 hold the workspaces of transposed and edge panels.
var bufs32, bufs64 sync.Pool

func getBuf[T float32 | float64](pool *sync.Pool, n int) *[]T {
	if b, ok := pool.Get().(*[]T); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]T, n)
	return &b
}
