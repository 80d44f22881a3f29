package samplers

import (
	"fmt"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Checked is implemented by optimizers whose Step checks the parameters as it writes them, so
// that a caller's divergence check (train.Trainer.Step's) need not read them again: the
// update pass already has every new value in a register.
type Checked interface {
	// NonFiniteAfterStep is the index of the first parameter that the last successful Step
	// left with a NaN or infinite entry, or −1.
	NonFiniteAfterStep() int
}

var (
	_ Checked = (*Adam)(nil)
	_ Checked = (*RMSprop)(nil)
	_ Checked = (*Langevin)(nil)
)

// FiniteTeller is implemented by optimizers that refuse, before changing anything, a step whose
// gradients hold a NaN or infinite entry, and so read every gradient at every step for that
// alone. TellFinite names, for the next step only, the gradients (one flag each) that the caller
// has proved finite without reading them (graph.Program.Finite: a weight gradient whose
// operands bound it below overflow), and that step does not read those for the check. A flag
// set wrongly lets a non-finite gradient through; the parameters it spoils are still reported
// (Checked).
type FiniteTeller interface {
	TellFinite(proved []bool)
}

var _ FiniteTeller = (*Adam)(nil)

// fastFiniteGrads is finiteGrads through graph's vector scan: the same check and error, at
// memory speed, reading a gradient with known rows (StepRows) only in those rows, and none
// that proved (nil, or a flag per gradient: FiniteTeller) says is finite.
func fastFiniteGrads[T graph.Float](params []*tensor.Dense, grads []G.Value, rows [][]int32, proved []bool) error {
	for i, g := range grads {
		if proved != nil && proved[i] {
			continue
		}
		e, err := values[T](g)
		if err != nil {
			return fmt.Errorf("samplers: gradient %d: %w", i, err)
		}
		j := -1
		if r := rowsOf(rows, i); r != nil {
			j = graph.FirstNonFiniteRows(e, rowWidth(params[i]), r)
		} else {
			j = graph.FirstNonFinite(e)
		}
		if j >= 0 {
			return fmt.Errorf("samplers: gradient of parameter %d has a non-finite entry (%v at flat index %d)", i, e[j], j)
		}
	}
	return nil
}

// RowStepper is implemented by optimizers that can be told, with the gradients, the rows
// outside which each gradient is zero (graph.Program.NonzeroRows gives them for a weight
// gradient behind one-hot inputs, a few rows of thousands). StepRows then reads no gradient
// elsewhere, and does exactly what Step does. Neither writes into the gradients: a caller may
// rely on that (train lets its Program clear only the rows of a gradient that the last step
// wrote, graph.Program.SetReadOnly).
type RowStepper interface {
	// StepRows is Step with, for each gradient, its nonzero rows (increasing indices into
	// its leading dimension) or nil where they are not known.
	StepRows(params []*tensor.Dense, grads []G.Value, rows [][]int32) error
}

var _ RowStepper = (*Adam)(nil)

// checkRows checks that rows (nil, or one entry per parameter) names, for each parameter with
// an entry, increasing indices into its leading dimension.
func checkRows(params []*tensor.Dense, rows [][]int32) error {
	if rows == nil {
		return nil
	}
	if len(rows) != len(params) {
		return fmt.Errorf("samplers: %d row lists for %d parameters", len(rows), len(params))
	}
	for i, r := range rows {
		if err := checkRowsOf(params[i], i, r); err != nil {
			return err
		}
	}
	return nil
}

// checkRowsOf checks that r (nil, or the rows of parameter i, p) is increasing indices into
// p's leading dimension.
func checkRowsOf(p *tensor.Dense, i int, r []int32) error {
	if r == nil {
		return nil
	}
	sh := p.Shape()
	if len(sh) == 0 {
		return fmt.Errorf("samplers: rows given for parameter %d, a scalar", i)
	}
	for t, x := range r {
		if x < 0 || int(x) >= sh[0] || (t > 0 && x <= r[t-1]) {
			return fmt.Errorf("samplers: the rows of parameter %d (shape %v) are not increasing indices below %d (entry %d is %d)", i, sh, sh[0], t, x)
		}
	}
	return nil
}

// rowsOf is rows[i], or nil when rows is nil.
func rowsOf(rows [][]int32, i int) []int32 {
	if rows == nil {
		return nil
	}
	return rows[i]
}

// rowWidth is the number of elements in one row of p's leading dimension.
func rowWidth(p *tensor.Dense) int {
	if sh := p.Shape(); sh[0] > 0 {
		return sh.TotalSize() / sh[0]
	}
	return 0
}
