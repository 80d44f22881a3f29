package graph

import (
	"fmt"
	"slices"
	"sync"

	"github.com/hyperflat/hyperflat/graph/internal/vec"
	G "gorgonia.org/gorgonia"
)

// Deferred weight gradients. At a small batch a hidden layer's step is memory-bound: the
// weight gradient Xᵀ·dY (k rows each, k the batch) is written to memory as large as the
// weights, and the optimizer reads it back next to the weights and their moments. A Program
// may leave such a product uncomputed (DeferProduct) and hand its operands on
// (DeferredProduct), and AdamUpdateProduct computes it a row at a time in registers (or, for
// narrow rows, a block of rows in a buffer that stays in the cache) within the update, to the
// bits of the product the Program would have computed followed by AdamUpdate.

// productMaxK is the deepest product a Program leaves to its optimizer: beyond a few rows of
// batch the product's arithmetic, which the blocked kernels do with fewer loads, outweighs
// the memory it saves (BenchmarkAdamUpdateProduct: 1,024 × 1,024 weights at k = 16 are slower
// fused, at k = 4 and 8 about a third faster).
const productMaxK = 8

// productMinSize is the smallest product a Program leaves to its optimizer: a layer whose
// weights and moments stay in the second-level cache gains nothing (256 × 256 weights time
// the same either way, 64 × 64 ones slower fused).
const productMinSize = 1 << 17

// productBlockElems is the size of AdamUpdateProduct's gradient buffer (16 KiB of float32, half
// the first-level cache of the project's machines).
const productBlockElems = 4096

// productDeferrable says whether a product op(A)·op(B) of T, m×n, k deep, is one a Program
// may leave uncomputed: a weight gradient Aᵀ·B in float32 that, when the sparse path declines
// it, this package's kernels compute (gemmDense → gemmLD → sgemm), whose sum for each element
// does not depend on which rows or columns a call computes, so that AdamUpdateProduct's
// blocks give the same bits.
func productDeferrable[T Float](ta, tb bool, m, n, k int) bool {
	if _, ok := any(T(0)).(float32); !ok || productsOff {
		return false
	}
	return ta && !tb && m > 0 && n > 0 && k > 0 && k <= productMaxK && m*n >= productMinSize &&
		haveSgemmKernels && useSgemmKernels(false, m, n, k)
}

// DeferProduct with on lets Run leave n uncomputed where computing it later, a few rows at a
// time, gives the same bits and saves time: n is a weight gradient op(A)ᵀ·B (MatMulT(a, b,
// true, false)) that no node of the program reads, at least productMinSize entries, and at a
// run its operands are a float32 batch of at most 8 rows that the product's dense kernels
// would take. DeferredProduct then says so and hands
// its operands to a consumer that computes it itself (AdamUpdateProduct); Value, or any read
// of n through the Program, computes it first, so a reader never sees a stale value. With on
// false every run computes n again. DeferProduct reports whether n is such a product (for
// other nodes it changes nothing).
func (p *Program) DeferProduct(n *G.Node, on bool) bool {
	if p == nil {
		return false
	}
	i, ok := p.index[n]
	if !ok {
		return false
	}
	op, ok := n.Op().(*matMulOp)
	if !ok || !op.ta || op.tb || len(p.kids[i]) != 2 || (p.fused != nil && p.fused[i] != nil) || (p.inlined != nil && p.inlined[i]) {
		return false
	}
	for _, kids := range p.kids {
		if slices.Contains(kids, i) {
			return false
		}
	}
	if p.lazy == nil {
		if !on {
			return true
		}
		p.lazy, p.owed = make([]bool, len(p.nodes)), make([]int, len(p.nodes))
	}
	p.lazy[i] = on
	return true
}

// DeferredProduct reports whether the last Run left n uncomputed (DeferProduct), and nothing
// has computed it since; a and b are then its operands' values (A k×m and B k×n for n = Aᵀ·B,
// row-major) and c the buffer its value would occupy, whose contents are stale. They are the
// Program's, valid until the next Run.
func (p *Program) DeferredProduct(n *G.Node) (a, b, c G.Value, ok bool) {
	if p == nil {
		return nil, nil, nil, false
	}
	i, found := p.index[n]
	if !found || !p.owes(i) {
		return nil, nil, nil, false
	}
	return p.vals[p.kids[i][0]], p.vals[p.kids[i][1]], p.vals[i], true
}

// owes says whether the last run left node i uncomputed.
func (p *Program) owes(i int) bool { return p.owed != nil && p.runs > 0 && p.owed[i] == p.runs }

// execProduct runs product i, leaving it uncomputed where DeferProduct allows (then it
// records that the run owes it).
func (p *Program) execProduct(i int, op *matMulOp, dst G.Value, args []G.Value) (v G.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("op %v panicked: %v", op, r)
		}
	}()
	v, left, err := op.doIntoLazy(dst, &p.support[i], true, args...)
	if left && err == nil {
		p.owed[i] = p.runs
	}
	return v, err
}

// demandProduct computes node i if the last run left it uncomputed, as the run would have.
func (p *Program) demandProduct(i int) (err error) {
	if !p.owes(i) {
		return nil
	}
	op := p.nodes[i].Op().(*matMulOp)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph: computing %s: op %v panicked: %v", p.nodes[i].Name(), op, r)
		}
	}()
	a, err := Elements[float32](p.vals[p.kids[i][0]])
	if err != nil {
		return err
	}
	b, err := Elements[float32](p.vals[p.kids[i][1]])
	if err != nil {
		return err
	}
	c, err := Elements[float32](p.vals[i])
	if err != nil {
		return err
	}
	// the run's gemmSparse declined it, so gemmSupport would have gone on to gemmDense
	gemmDense(op.ta, op.tb, op.m, op.n, op.k, a, b, 0, c)
	p.owed[i] = 0
	return nil
}

// AdamUpdateProduct is AdamUpdate with the gradient given as the product Aᵀ·B that a Program
// left uncomputed (DeferredProduct): a is k×r and b k×c, row-major, for r·c = len(p) weights.
// It computes the gradient a row at a time in registers (rows of at least productRowMin, a
// multiple of 8), or a block of rows at a time into a buffer that stays in the cache, and
// updates those rows from it. Where the Program deferred the product (float32, k ≤ 8, this
// package's kernels) each gradient entry is the Program's sum, in its order — the kernels sum
// an element's k products in order whichever rows a call computes — so the update is
// AdamUpdate's after the Program's product, to the bit. Elsewhere it is a correct Adam step
// whose gradient's rounding is the BLAS's on blocks. It reports whether any updated p is NaN
// or infinite.
func AdamUpdateProduct[T Float](p, m, v, a, b []T, k int, c AdamCoeffs[T]) (nonFinite bool) {
	if len(p) == 0 {
		return false
	}
	if k <= 0 || len(a)%k != 0 || len(b)%k != 0 || (len(a)/k)*(len(b)/k) != len(p) {
		panic(fmt.Sprintf("graph: AdamUpdateProduct of %d weights from operands of %d and %d elements, %d deep", len(p), len(a), len(b), k))
	}
	rows, cols := len(a)/k, len(b)/k
	m, v = m[:len(p)], v[:len(p)]
	if p32, ok := any(p).([]float32); ok && haveVec && haveSgemmKernels && k <= productMaxK && cols%8 == 0 && cols >= productRowMin {
		// each row in one pass of the vector kernel, its gradient never leaving registers
		m32, v32, a32, b32 := any(m).([]float32), any(v).([]float32), any(a).([]float32), any(b).([]float32)
		c32 := any(c).(AdamCoeffs[float32])
		return productRows(rows, len(p), func(r0, r1 int) bool { return adamProductRows(p32, m32, v32, a32, b32, rows, cols, k, r0, r1, c32) })
	}
	block := max(4, productBlockElems/cols&^3) // whole 4-row blocks of the kernels where it can
	span := func(r0, r1 int) bool {
		pool := productPool[T]()
		buf := pool.Get().(*[]T)
		defer pool.Put(buf)
		if len(*buf) < block*cols {
			*buf = make([]T, block*cols)
		}
		bad := false
		for i0 := r0; i0 < r1; i0 += block {
			i1 := min(r1, i0+block)
			e0, e1 := i0*cols, i1*cols
			g := (*buf)[:e1-e0]
			gemmLD(true, false, i1-i0, cols, k, a[i0:], rows, b, cols, 0, g, cols)
			bad = adamRange(p[e0:e1], g, m[e0:e1], v[e0:e1], c) || bad
		}
		return bad
	}
	return productRows(rows, len(p), span)
}

// productRowMin is the narrowest row AdamUpdateProduct hands to the vector kernel a row a call;
// narrower rows go through the buffer, several a call.
const productRowMin = 64

// productRows runs span over rows [0, rows) of a weight matrix of size elements, on several
// cores in chunks of about optimGrain elements when it is large, and reports whether any span
// did.
func productRows(rows, size int, span func(r0, r1 int) bool) bool {
	if size < 2*optimGrain {
		return span(0, rows)
	}
	return inChunksOf(rows, max(4, optimGrain/(size/rows)&^3), span)
}

// adamProductRows is AdamUpdateProduct's vector path on rows [r0, r1): vec.AdamProductF32
// a row, given the row's column of A (k ≤ productMaxK entries).
func adamProductRows(p, m, v, a, b []float32, rows, cols, k, r0, r1 int, c AdamCoeffs[float32]) bool {
	var col [productMaxK]float32
	kc := [7]float32{c.B1c, c.B2, c.B2c, c.Step, c.Bc2, c.Eps, c.WD}
	flags := 0
	if c.WD != 0 {
		flags |= 1
	}
	if c.Hat {
		flags |= 2
	}
	// the kernels' walk (graph/internal/sgemm's gemm): rows in blocks of four take Kern4x24 on
	// whole 24-column blocks and Kern4x8 on the rest; the last rows%4 rows take Kern1x8
	m4, nWide := rows-rows%4, cols-cols%24
	bad := false
	for i := r0; i < r1; i++ {
		for q := range k {
			col[q] = a[q*rows+i]
		}
		seq := nWide
		if i >= m4 {
			seq = cols
		}
		e := i * cols
		bad = vec.AdamProductF32(&p[e], &m[e], &v[e], cols, seq, &col[0], k, &b[0], cols*4, &kc, flags) || bad
	}
	return bad
}

var productPool32 = sync.Pool{New: func() any { return new([]float32) }}
var productPool64 = sync.Pool{New: func() any { return new([]float64) }}

func productPool[T Float]() *sync.Pool {
	if _, ok := any(T(0)).(float32); ok {
		return &productPool32
	}
	return &productPool64
}
