package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// nonzeroPromise is a NonzerosAt promise for the next Run: the input node's value is zero
// outside the offsets at.
type nonzeroPromise struct {
	node int
	at   []int
}

// NonzerosAt promises that in the next Run the input n's value (a matrix) is zero outside the
// entries at, offsets into its data in increasing order: a product that takes n as its left
// operand (a one-hot batch: the forward product X·W and the weight gradient Xᵀ·dY) then reads
// those entries instead of scanning every entry of the value for them. It computes what the
// scan would: an entry of at that holds zero is left out as the scan leaves it out. A caller
// that writes a nonzero outside at breaks the promise and gets wrong values, as with
// SetReadOnly (train's sparse batch fill writes only the entries it lists). The promise holds
// for the next Run only; a second one for n before it replaces the first.
func (p *Program) NonzerosAt(n *G.Node, at []int) error {
	i, err := p.lookup(n)
	switch {
	case err != nil:
		return fmt.Errorf("graph: NonzerosAt: %w", err)
	case n.Op() != nil:
		return fmt.Errorf("graph: NonzerosAt: %s is not an input", n.Name())
	case len(n.Shape()) != 2:
		return fmt.Errorf("graph: NonzerosAt: %s has shape %v; want a matrix", n.Name(), shapeString(n.Shape()))
	case n.Dtype() != G.Float32 && n.Dtype() != G.Float64:
		return fmt.Errorf("graph: NonzerosAt: %s holds %v; want float32 or float64", n.Name(), n.Dtype())
	}
	size := n.Shape().TotalSize()
	for t, j := range at {
		if j < 0 || j >= size || (t > 0 && j <= at[t-1]) {
			return fmt.Errorf("graph: NonzerosAt: offset %d (the %d-th) of %s is not in increasing order within [0, %d)", j, t, n.Name(), size)
		}
	}
	k := 0
	for k < len(p.promises) && p.promises[k].node != i {
		k++
	}
	switch {
	case k < len(p.promises):
	case k < cap(p.promises): // a slot of an earlier run's promise, with its buffer
		p.promises = p.promises[:k+1]
		p.promises[k].node = i
	default:
		p.promises = append(p.promises, nonzeroPromise{node: i})
	}
	p.promises[k].at = append(p.promises[k].at[:0], at...)
	return nil
}

// keepPromises gives the memo of input i (a product's left operand, operandMemo) its value v
// compressed through the offsets promised for this run, if any.
func (p *Program) keepPromises(i int, v G.Value) {
	for _, pr := range p.promises {
		if pr.node != i {
			continue
		}
		if p.memos == nil {
			p.memos = make([]operandMemo, len(p.nodes))
		}
		m := &p.memos[i]
		rows, cols := v.Shape()[0], v.Shape()[1]
		switch data := v.Data().(type) {
		case []float32:
			m.s = promisedRows(m.s, data, rows, cols, pr.at)
		case []float64:
			m.s = promisedRows(m.s, data, rows, cols, pr.at)
		default:
			return
		}
		m.run, m.now, m.rows, m.cols, m.dense = p.runs, p.runs, rows, cols, false
	}
}

// promisedRows compresses a (rows×cols) by its rows as sparseRows.compress does, reading only
// the entries at (increasing offsets) and keeping those compress keeps (not ±0; NaN is kept).
// It reuses old's buffers when old is a *sparseRows[T].
func promisedRows[T Float](old any, a []T, rows, cols int, at []int) *sparseRows[T] {
	s, _ := old.(*sparseRows[T])
	if s == nil {
		s = new(sparseRows[T])
	}
	s.compact = false
	s.ptr = append(s.ptr[:0], make([]int, rows+1)...)
	s.idx, s.val = s.idx[:0], s.val[:0]
	for _, j := range at {
		if v := a[j]; v != 0 || v != v {
			r := j / cols
			s.idx = append(s.idx, int32(j-r*cols))
			s.val = append(s.val, v)
			s.ptr[r+1]++
		}
	}
	for r := 0; r < rows; r++ {
		s.ptr[r+1] += s.ptr[r]
	}
	return s
}
