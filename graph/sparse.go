package graph

import (
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/hyperflat/hyperflat/graph/internal/vec"
)

// Products whose left operand is mostly zeros. The authors' protocol of the AHSC experiment
// one-hot encodes every column of an OpenML table (hpobench's preprocessing), so a first layer
// sees rows of a few nonzeros among thousands (vehicle: 18 of 1,430; segment: 19 of 14,929):
// the dense product and its weight gradient, x·W and xᵀ·G, spend all but about 1% of their
// work multiplying zeros. gemmAcc hands such a product to gemmSparse, which compresses op(A)
// row by row and adds, for every nonzero a_ik in increasing k, a_ik times row k of B to row i
// of C. Zeros are skipped as structural zeros, as a sparse-matrix product does: a non-finite
// entry of B that only meets zeros of A does not turn C into NaN (it stays in B, where the
// step's non-finite checks see it). The choice depends only on the operands' values, so
// results do not depend on the number of cores.

const (
	// sparseMinFlops is the smallest dense product (m·n·k) worth testing for zeros.
	sparseMinFlops = 1 << 16
	// sparseMaxFill: op(A) takes the sparse path when at most 1 in sparseMaxFill of its
	// entries is nonzero. Each nonzero costs one row of B read unaligned and a vector
	// multiply-add per 8 (4) columns, several times the dense kernels' cost per term, and an
	// activation after a ReLU (about half zeros) must stay dense.
	sparseMaxFill = 16
	// sparseHeadBlock is how much of op(A) is counted first to tell a dense operand.
	sparseHeadBlock = 1024
)

// sparseRows is op(A) compressed by rows: row i's nonzeros are val[ptr[i]:ptr[i+1]] in the
// columns idx[ptr[i]:ptr[i+1]], in increasing column order. A compact one (transposeInto's)
// lists only the rows with nonzeros: row rows[q]'s are val[ptr[q]:ptr[q+1]], so that a
// transposed one-hot batch (a row per feature, a few of them with terms) costs what its
// nonzeros cost, not its thousands of empty rows.
type sparseRows[T Float] struct {
	ptr     []int
	idx     []int32
	val     []T
	compact bool
	rows    []int32 // a compact one's rows with nonzeros, increasing
	next    []int   // compress's scratch
	slot    []int32 // transposeInto's scratch, one per row of the result, zero between uses
}

var (
	sparsePool32 = sync.Pool{New: func() any { return new(sparseRows[float32]) }}
	sparsePool64 = sync.Pool{New: func() any { return new(sparseRows[float64]) }}
)

// gemmSparse sets c = op(a)·b + beta·c through op(a)'s nonzeros when op(a) is sparse enough,
// and reports whether it did; it leaves c alone otherwise. When it did, beta is 0 and support
// is not nil, it sets *support to the rows of c that op(a) gives terms to, in increasing
// order: c is zero outside them. With beta 0 and dirty not nil (c is zero outside the rows
// *dirty, increasing, as the last product into c left it), it clears only those rows.
func gemmSparse[T Float](ta, tb bool, m, n, k int, a, b []T, beta T, c []T, support, dirty *[]int32, left *operandMemo) bool {
	if tb || sparseOff || n < 8 || k < 2 || m*n*k < sparseMinFlops || k > 1<<31-1 {
		return false
	}
	limit := m * k / sparseMaxFill
	if s, known := left.rowsOf(ta, m, k, limit); known {
		if s == nil {
			return false
		}
		rs := s.(*sparseRows[T])
		if ta {
			t := sparsePool[T]().Get().(*sparseRows[T])
			defer sparsePool[T]().Put(t)
			rs.transposeInto(t, m)
			rs = t
		}
		sparseProduct(rs, m, n, b, beta, c, support, dirty)
		return true
	}
	// A first block fuller than 2/sparseMaxFill marks a dense operand (an activation): the
	// count declines it within a few blocks. Otherwise compressing counts as it goes and
	// gives up past the limit, which saves the separate counting pass over a one-hot batch.
	// Either way the operand is taken exactly when it has at most limit nonzeros.
	if head := a[:min(m*k, sparseHeadBlock)]; countNonzero(head)*sparseMaxFill > 2*len(head) && !fewNonzeros(a[:m*k], limit) {
		left.remember(ta, m, k, nil)
		return false
	}
	pool := sparsePool[T]()
	s := pool.Get().(*sparseRows[T])
	defer pool.Put(s)
	if !s.compress(ta, m, k, a, limit) {
		left.remember(ta, m, k, nil)
		return false
	}
	left.remember(ta, m, k, s)
	sparseProduct(s, m, n, b, beta, c, support, dirty)
	return true
}

// sparsePool is the pool of T's sparseRows.
func sparsePool[T Float]() *sync.Pool {
	if unsafe.Sizeof(T(0)) == 4 {
		return &sparsePool32
	}
	return &sparsePool64
}

// sparseProduct sets c = s·b + beta·c for s, op(A) compressed (m rows), as gemmSparse does.
func sparseProduct[T Float](s *sparseRows[T], m, n int, b []T, beta T, c []T, support, dirty *[]int32) {
	rows := func(lo, hi int) {
		// a weight gradient's rows are mostly empty: scale the block at once, then visit
		// only the rows with terms
		switch cb := c[lo*n : hi*n]; {
		case beta == 0 && dirty != nil:
			d := *dirty
			for t, _ := slices.BinarySearch(d, int32(lo)); t < len(d) && int(d[t]) < hi; t++ {
				clear(c[int(d[t])*n : (int(d[t])+1)*n])
			}
		case beta == 0:
			clearStream(cb)
		case beta != 1:
			for j := range cb {
				cb[j] *= beta
			}
		}
		if s.compact {
			q, _ := slices.BinarySearch(s.rows, int32(lo))
			for ; q < len(s.rows) && int(s.rows[q]) < hi; q++ {
				i, p0, p1 := int(s.rows[q]), s.ptr[q], s.ptr[q+1]
				sparseRow(c[i*n:(i+1)*n], b, n, s.idx[p0:p1], s.val[p0:p1])
			}
			return
		}
		for i := lo; i < hi; i++ {
			if p0, p1 := s.ptr[i], s.ptr[i+1]; p1 > p0 {
				sparseRow(c[i*n:(i+1)*n], b, n, s.idx[p0:p1], s.val[p0:p1])
			}
		}
	}
	if len(s.idx)*n >= gemmSplitFlops && m >= 2*gemmPieces {
		// whole rows of c in pieces fixed by m: each row's sum is the same on any split
		parallelFor(gemmPieces, 1, func(lo, hi int) {
			for q := lo; q < hi; q++ {
				rows(q*m/gemmPieces, (q+1)*m/gemmPieces)
			}
		})
	} else {
		rows(0, m)
	}
	if support != nil && beta == 0 {
		*support = (*support)[:0]
		if s.compact {
			*support = append(*support, s.rows...)
			return
		}
		for i := 0; i < m; i++ {
			if s.ptr[i+1] > s.ptr[i] {
				*support = append(*support, int32(i))
			}
		}
	}
}

// operandMemo is what a Program run learned of a product's left operand, for the next product
// in the same run that reads the same node (a one-hot batch: the forward product X·W, then the
// weight gradient Xᵀ·dY): X compressed by its stored rows, or that X is too full, so that
// each batch is scanned for its nonzeros once a step rather than three times. A node's value
// does not change within a run, and the memo is valid only in the run that set it.
type operandMemo struct {
	run        int // the run it holds (the Program's runs when set)
	now        int // the run in progress, set by the Program before each product
	rows, cols int // X's stored shape
	dense      bool
	s          any // *sparseRows[T] of X as stored, unless dense
}

// rowsOf returns, when the memo holds this run's operand of this product (op(X) m×k, X
// stored k×m when ta), X compressed by its stored rows, or nil when X is too full for limit;
// known is false when the memo holds nothing for it.
func (o *operandMemo) rowsOf(ta bool, m, k, limit int) (s any, known bool) {
	if o == nil || o.run != o.now || o.now == 0 {
		return nil, false
	}
	if r, c := storedShape(ta, m, k); r != o.rows || c != o.cols {
		return nil, false
	}
	if o.dense {
		return nil, true
	}
	nnz := -1
	switch s := o.s.(type) {
	case *sparseRows[float32]:
		nnz = len(s.idx)
	case *sparseRows[float64]:
		nnz = len(s.idx)
	}
	switch {
	case nnz < 0:
		return nil, false
	case nnz > limit: // (the same limit as the product that set it: m·k is X's size)
		return nil, true
	}
	return o.s, true
}

// remember records what compressing op(X) found: s (X's stored rows, so only when !ta), or
// nil for an operand past the limit.
func (o *operandMemo) remember(ta bool, m, k int, s any) {
	if o == nil || o.now == 0 || (ta && s != nil) {
		return
	}
	o.run, o.dense = o.now, s == nil
	o.rows, o.cols = storedShape(ta, m, k)
	if s == nil {
		return
	}
	switch s := s.(type) {
	case *sparseRows[float32]:
		o.s = copyRows(o.s, s)
	case *sparseRows[float64]:
		o.s = copyRows(o.s, s)
	}
}

// storedShape is the shape of X as stored for op(X) m×k.
func storedShape(ta bool, m, k int) (rows, cols int) {
	if ta {
		return k, m
	}
	return m, k
}

// copyRows copies s into old's buffers when old is a *sparseRows[T], else into new ones.
func copyRows[T Float](old any, s *sparseRows[T]) *sparseRows[T] {
	d, _ := old.(*sparseRows[T])
	if d == nil {
		d = new(sparseRows[T])
	}
	d.ptr, d.idx, d.val = append(d.ptr[:0], s.ptr...), append(d.idx[:0], s.idx...), append(d.val[:0], s.val...)
	d.compact, d.rows = s.compact, append(d.rows[:0], s.rows...)
	return d
}

// transposeInto sets t to sᵀ, compact, for s with cols columns: row i of t lists the rows of
// s with an entry in column i, in increasing order — what compress gives for the transposed
// operand, without its empty rows. It costs O(nnz·log nnz), not O(cols).
func (s *sparseRows[T]) transposeInto(t *sparseRows[T], cols int) {
	if len(t.slot) < cols {
		t.slot = make([]int32, cols)
	}
	slot := t.slot[:cols]
	// count each column's entries, listing the columns as they first appear
	t.rows = t.rows[:0]
	for _, i := range s.idx {
		if slot[i] == 0 {
			t.rows = append(t.rows, i)
		}
		slot[i]++
	}
	slices.Sort(t.rows)
	t.compact = true
	t.ptr = append(t.ptr[:0], make([]int, len(t.rows)+1)...)
	for q, i := range t.rows {
		n := int(slot[i])
		slot[i] = int32(t.ptr[q]) // from here on, where column i's next entry goes
		t.ptr[q+1] = t.ptr[q] + n
	}
	t.idx = append(t.idx[:0], make([]int32, len(s.idx))...)
	t.val = append(t.val[:0], make([]T, len(s.idx))...)
	for r := 0; r+1 < len(s.ptr); r++ {
		for p := s.ptr[r]; p < s.ptr[r+1]; p++ {
			i := s.idx[p]
			q := slot[i]
			t.idx[q], t.val[q] = int32(r), s.val[p]
			slot[i]++
		}
	}
	for _, i := range t.rows {
		slot[i] = 0
	}
}

// clearStream zeroes s, with non-temporal stores (vec.ClearNT) when it is larger than a core's
// cache: a weight gradient's block is then read back only in its rows with terms, and
// ordinary stores would first read all of it. (The runtime's clear streams only from 32 MiB.)
func clearStream[T Float](s []T) {
	const streamMin = 1 << 20
	size := len(s) * int(unsafe.Sizeof(T(0)))
	if !haveVec || size < streamMin {
		clear(s)
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), size)
	head := int(-uintptr(unsafe.Pointer(&b[0])) & 31)
	body := (size - head) &^ 127
	clear(b[:head])
	vec.ClearNT(&b[head], body)
	clear(b[head+body:])
}

// fewNonzeros reports whether x has at most limit nonzero entries, reading a block at a time
// and stopping once it has seen more: a dense operand costs a few blocks.
func fewNonzeros[T Float](x []T, limit int) bool {
	const block = 1024
	nnz := 0
	for lo := 0; lo < len(x); lo += block {
		nnz += countNonzero(x[lo:min(len(x), lo+block)])
		if nnz > limit {
			return false
		}
	}
	return true
}

// countNonzero is how many of x's entries are ≠ 0 (NaN counts, −0 does not).
func countNonzero[T Float](x []T) int {
	nnz, done := 0, 0
	if haveVec {
		switch xx := any(x).(type) {
		case []float32:
			if done = len(xx) &^ 7; done > 0 {
				nnz = vec.CountNonzeroF32(p32(xx), done)
			}
		case []float64:
			if done = len(xx) &^ 3; done > 0 {
				nnz = vec.CountNonzeroF64(p64(xx), done)
			}
		}
	}
	for _, v := range x[done:] {
		if v != 0 {
			nnz++
		}
	}
	return nnz
}

// compress fills s with op(a) (m×k; a is k×m when ta) and reports whether op(a) has at most
// limit nonzeros; it stops, with s incomplete, as soon as it has seen more.
func (s *sparseRows[T]) compress(ta bool, m, k int, a []T, limit int) bool {
	s.compact = false
	s.ptr = append(s.ptr[:0], make([]int, m+1)...)
	if !ta {
		s.idx, s.val = s.idx[:0], s.val[:0]
		for i := 0; i < m; i++ {
			row := a[i*k : (i+1)*k]
			for j := firstNonzero(row); j < k; j += 1 + firstNonzero(row[j+1:]) {
				s.idx = append(s.idx, int32(j))
				s.val = append(s.val, row[j])
			}
			s.ptr[i+1] = len(s.idx)
			if len(s.idx) > limit {
				return false
			}
		}
		return true
	}
	// op(a) = aᵀ: row i of op(a) is column i of a (k rows of length m); count each column's
	// nonzeros, then place them walking a's rows in order, so each row's columns increase
	nnz := 0
	for r := 0; r < k; r++ {
		row := a[r*m : (r+1)*m]
		for i := firstNonzero(row); i < m; i += 1 + firstNonzero(row[i+1:]) {
			nnz++
			s.ptr[i+1]++
		}
		if nnz > limit {
			return false
		}
	}
	for i := 0; i < m; i++ {
		s.ptr[i+1] += s.ptr[i]
	}
	s.idx = append(s.idx[:0], make([]int32, nnz)...)
	s.val = append(s.val[:0], make([]T, nnz)...)
	s.next = append(s.next[:0], s.ptr[:m]...)
	for r := 0; r < k; r++ {
		row := a[r*m : (r+1)*m]
		for i := firstNonzero(row); i < m; i += 1 + firstNonzero(row[i+1:]) {
			p := s.next[i]
			s.idx[p], s.val[p] = int32(r), row[i]
			s.next[i]++
		}
	}
	return true
}

// firstNonzero is the index of x's first nonzero entry (NaN counts, −0 does not), or len(x).
func firstNonzero[T Float](x []T) int {
	if len(x) == 0 {
		return 0
	}
	if haveVec {
		switch xx := any(x).(type) {
		case []float32:
			return vec.FirstNonzeroF32(p32(xx), len(xx))
		case []float64:
			return vec.FirstNonzeroF64(p64(xx), len(xx))
		}
	}
	for i, v := range x {
		if v != 0 {
			return i
		}
	}
	return len(x)
}

// sparseRow adds val[t]·b[idx[t], :] to c (length n, rows of b ldb = n apart) for t in order:
// the AVX2 kernels for the leading multiple of 8 (4) columns, then multiply-adds rounded once
// in float64 on the tail (and everywhere without AVX2).
func sparseRow[T Float](c, b []T, n int, idx []int32, val []T) {
	if len(idx) == 0 {
		return
	}
	done := 0
	if haveVec {
		switch cc := any(c).(type) {
		case []float32:
			done = n &^ 7
			if done > 0 {
				vec.SpRowF32(p32(cc), p32(any(b).([]float32)), n, &idx[0], p32(any(val).([]float32)), len(idx), done)
			}
		case []float64:
			done = n &^ 3
			if done > 0 {
				vec.SpRowF64(p64(cc), p64(any(b).([]float64)), n, &idx[0], p64(any(val).([]float64)), len(idx), done)
			}
		}
	}
	if done == n {
		return
	}
	tail := c[done:n]
	for t, kk := range idx {
		v, row := float64(val[t]), b[int(kk)*n+done:][:len(tail)]
		for j, x := range row {
			tail[j] = T(math.FMA(v, float64(x), float64(tail[j])))
		}
	}
}
