package graph

import (
	"fmt"

	"gorgonia.org/tensor"
)

// broadcastShape is NumPy's broadcasting rule: shapes are aligned on their trailing dims, and
// each pair of dims must be equal or one of them 1.
func broadcastShape(a, b tensor.Shape) (tensor.Shape, error) {
	n := max(len(a), len(b))
	out := make(tensor.Shape, n)
	for i := 0; i < n; i++ {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", shapeString(a), shapeString(b))
		}
	}
	return out, nil
}

// aligned left-pads s with ones to rank n.
func aligned(s tensor.Shape, n int) tensor.Shape {
	out := make(tensor.Shape, n)
	for i := range out {
		out[i] = 1
	}
	copy(out[n-len(s):], s)
	return out
}

// rowMajorStrides are the element strides of a contiguous array of shape s.
func rowMajorStrides(s tensor.Shape) []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// broadcastStrides are the strides with which an operand of aligned shape keep is read when
// it is broadcast to shape out: zero along the dims it is broadcast over.
func broadcastStrides(keep, out tensor.Shape) []int {
	st := rowMajorStrides(keep)
	for i := range keep {
		if keep[i] == 1 && out[i] != 1 {
			st[i] = 0
		}
	}
	return st
}

// walk visits an array of the given shape in row-major order, one innermost row at a time.
// For every operand k, strides[k] gives its element stride along each dim of shape and
// bases[k] its starting offset; fn receives each operand's offset at the start of the row and
// the row's length (the operand's stride along the row is strides[k][len(shape)-1]).
func walk(shape tensor.Shape, strides [][]int, bases []int, fn func(offs []int, n int)) {
	nd := len(shape)
	if nd == 0 {
		fn(append([]int(nil), bases...), 1)
		return
	}
	for _, d := range shape {
		if d == 0 {
			return
		}
	}
	if nd > 8 || len(strides) > 4 {
		walkSlow(shape, strides, bases, fn)
		return
	}
	// coalesce: merge adjacent dims that every stride set walks contiguously (stride[d] =
	// stride[d+1]·shape[d+1]), so that fn sees fewer, longer rows (a per-channel bias over
	// N×C×H×W walks rows of H·W, not of W); the innermost strides are unchanged. Built
	// innermost first in fixed arrays, so that walking allocates only offs.
	ns := len(strides)
	var sh [8]int
	var st [4][8]int
	m := 1
	sh[0] = shape[nd-1]
	for k := 0; k < ns; k++ {
		st[k][0] = strides[k][nd-1]
	}
	for d := nd - 2; d >= 0; d-- {
		merge := true
		for k := 0; k < ns; k++ {
			if strides[k][d] != st[k][m-1]*sh[m-1] {
				merge = false
				break
			}
		}
		if merge {
			sh[m-1] *= shape[d]
			continue
		}
		sh[m] = shape[d]
		for k := 0; k < ns; k++ {
			st[k][m] = strides[k][d]
		}
		m++
	}
	offs := append([]int(nil), bases...)
	var idx [8]int
	n := sh[0]
	for {
		fn(offs, n)
		d := 1
		for ; d < m; d++ {
			idx[d]++
			for k := 0; k < ns; k++ {
				offs[k] += st[k][d]
			}
			if idx[d] < sh[d] {
				break
			}
			for k := 0; k < ns; k++ {
				offs[k] -= st[k][d] * sh[d]
			}
			idx[d] = 0
		}
		if d >= m {
			return
		}
	}
}

// walkSlow is walk without coalescing, for more than 8 dims or 4 stride sets.
func walkSlow(shape tensor.Shape, strides [][]int, bases []int, fn func(offs []int, n int)) {
	offs := append([]int(nil), bases...)
	nd := len(shape)
	n := shape[nd-1]
	idx := make([]int, nd)
	for {
		fn(offs, n)
		d := nd - 2
		for ; d >= 0; d-- {
			idx[d]++
			for k := range offs {
				offs[k] += strides[k][d]
			}
			if idx[d] < shape[d] {
				break
			}
			for k := range offs {
				offs[k] -= strides[k][d] * shape[d]
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}
