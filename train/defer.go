package train

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Deferred updates. Adam moves every weight at every step, by its momentum, even where the
// batch's gradient is zero; behind one-hot inputs that is almost every row of the first
// layer, and the update's pass over them, memory-bound, is most of a step. A step reads that
// layer only in the rows its batch's inputs select (graph.Program.ReadOnlyThroughProduct), so
// Fit lets an optimizer that can (samplers.Deferrer) leave the other rows behind and bring
// each up to date when a batch next selects it, and every row at the end of each epoch, before
// anything else reads the weights: the same updates, to the bit, in one pass over a row's
// memory for all the steps it waited.

// deferral is Fit's bookkeeping of deferred updates; a nil *deferral defers nothing.
type deferral struct {
	opt    samplers.Deferrer
	values []*tensor.Dense
	owes   []bool // the parameters that may have rows left behind
	lazy   []bool // the deferral flags of the step being taken
	sparse bool   // the step's batch came from compressed rows
	rows   []int32
	seen   []bool // scratch for rows, by input column
}

// newDeferral returns Fit's deferral for opt, or nil where deferring does not apply: an
// optimizer that cannot, or weight decay applied outside the optimizer (which moves every
// weight itself).
func (tr *Trainer) newDeferral(opt samplers.Optimizer) *deferral {
	o, ok := opt.(samplers.Deferrer)
	if !ok || tr.decay != nil {
		return nil
	}
	d := &deferral{opt: o, values: make([]*tensor.Dense, len(tr.params)), owes: make([]bool, len(tr.params)), lazy: make([]bool, len(tr.params))}
	for i, q := range tr.params {
		d.values[i] = q.Value
	}
	return d
}

// settleBatch brings up to date, before p runs on rows idx of a dataset (compressed as sp,
// or nil), every row the run will read: the rows idx's nonzero inputs select of a parameter
// p reads only through them, and every row of any other.
func (d *deferral) settleBatch(p *program, sp *sparseRows, idx []int) error {
	if d == nil {
		return nil
	}
	d.sparse = sp != nil
	have := false
	for i, owes := range d.owes {
		if !owes {
			continue
		}
		if !d.sparse || !p.rowRead[i] {
			if err := d.settle(i, nil); err != nil {
				return err
			}
			continue
		}
		if !have {
			d.batchRows(sp, idx)
			have = true
		}
		if err := d.settle(i, d.rows); err != nil {
			return err
		}
	}
	return nil
}

// batchRows sets d.rows to the input columns that rows idx have nonzeros in, increasing.
func (d *deferral) batchRows(sp *sparseRows, idx []int) {
	d.rows = d.rows[:0]
	for _, i := range idx {
		for _, c := range sp.col[sp.ptr[i]:sp.ptr[i+1]] {
			if int(c) >= len(d.seen) {
				d.seen = append(d.seen, make([]bool, int(c)+1-len(d.seen))...)
			}
			if !d.seen[c] {
				d.seen[c] = true
				d.rows = append(d.rows, c)
			}
		}
	}
	for _, c := range d.rows {
		d.seen[c] = false
	}
	slices.Sort(d.rows)
}

// settle applies what rows of parameter i owe (every row's when rows is nil).
func (d *deferral) settle(i int, rows []int32) error {
	err := d.opt.Settle(d.values, i, rows)
	if rows == nil {
		d.owes[i] = false
	}
	if errors.Is(err, samplers.ErrNonFinite) {
		return fmt.Errorf("%w: %v", ErrDiverged, err)
	}
	if err != nil {
		return fmt.Errorf("train: deferred updates: %w", err)
	}
	return nil
}

// settleAll brings every row of every parameter up to date.
func (d *deferral) settleAll() error {
	if d == nil {
		return nil
	}
	for i, owes := range d.owes {
		if owes {
			if err := d.settle(i, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// step hands the optimizer the gradients and their known rows (rows), deferring the other
// rows of each parameter the Program reads only through the batch's inputs.
func (d *deferral) step(p *program, values []*tensor.Dense, grads []G.Value, rows [][]int32) error {
	for i := range d.lazy {
		d.lazy[i] = d.sparse && p.rowRead[i] && rows[i] != nil
	}
	if err := d.opt.StepDeferred(values, grads, rows, d.lazy); err != nil {
		if errors.Is(err, samplers.ErrNonFinite) { // from settling rows this step updates whole
			return fmt.Errorf("%w: %v", ErrDiverged, err)
		}
		return err
	}
	for i, l := range d.lazy {
		d.owes[i] = d.owes[i] || l
	}
	return nil
}
