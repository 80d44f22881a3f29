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
//
// It reads the gradients last to first and reports the first one that fails, as a scan in
// order would: the optimizers' update, which follows, reads them first to last, and so finds
// the first tens of MB (a ResNet-18's 45 MB of gradients) still in the last-level cache.
func fastFiniteGrads[T graph.Float](params []*tensor.Dense, grads []G.Value, rows [][]int32, proved []bool) error {
	var first error
	for i := len(grads) - 1; i >= 0; i-- {
		if proved != nil && proved[i] {
			continue
		}
		e, err := values[T](grads[i])
		if err != nil {
			first = fmt.Errorf("samplers: gradient %d: %w", i, err)
			continue
		}
		j := -1
		if r := rowsOf(rows, i); r != nil {
			j = graph.FirstNonFiniteRows(e, rowWidth(params[i]), r)
		} else {
			j = graph.FirstNonFinite(e)
		}
		if j >= 0 {
			first = fmt.Errorf("samplers: gradient of parameter %d has a non-finite entry (%v at flat index %d)", i, e[j], j)
		}
	}
	return first
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

// Product is a weight gradient given as the product Aᵀ·B of its operands, which the caller
// did not compute (graph.Program.DeferredProduct): A is k×r and B k×c, row-major, for an r×c
// gradient, k a batch's rows (a layer's inputs and its output's gradient). The zero Product
// stands for a gradient given as usual.
type Product struct{ A, B G.Value }

// ProductTeller is implemented by optimizers that can take gradients as Products and compute
// them a block of rows at a time within their update, so that a small batch's weight gradient
// is never written to memory nor read back (graph.AdamUpdateProduct). TellProducts gives, for
// the next step only, one Product per gradient (the zero Product where it is given as usual).
// A gradient given as a Product must be proved finite for that step (FiniteTeller); its entry
// in the step's grads must still have the gradient's shape and type, and is not read.
type ProductTeller interface {
	TellProducts(prods []Product)
}

var _ ProductTeller = (*Adam)(nil)

// checkProducts checks prods (nil, or one per gradient, as TellProducts gave them) against
// the step's parameters, rows and proved flags, before the step changes anything.
func checkProducts[T graph.Float](params []*tensor.Dense, rows [][]int32, proved []bool, prods []Product) error {
	if prods == nil {
		return nil
	}
	if len(prods) != len(params) {
		return fmt.Errorf("samplers: TellProducts gave %d products for %d gradients", len(prods), len(params))
	}
	for i, pr := range prods {
		if pr.A == nil && pr.B == nil {
			continue
		}
		as, bs, ps := shapeOf(pr.A), shapeOf(pr.B), params[i].Shape()
		switch {
		case pr.A == nil || pr.B == nil:
			return fmt.Errorf("samplers: the product for gradient %d lacks an operand", i)
		case proved == nil || !proved[i]:
			return fmt.Errorf("samplers: gradient %d is given as a product but not proved finite (TellFinite)", i)
		case rowsOf(rows, i) != nil:
			return fmt.Errorf("samplers: gradient %d is given as a product and with nonzero rows", i)
		case len(as) != 2 || len(bs) != 2 || len(ps) != 2 || as[0] != bs[0] || as[1] != ps[0] || bs[1] != ps[1] || as[0] < 1:
			return fmt.Errorf("samplers: the product for gradient %d has operands of shapes %v and %v; want k×%d and k×%d", i, as, bs, ps[0], ps[1])
		}
		if _, _, err := productOperands[T](pr); err != nil {
			return fmt.Errorf("samplers: the product for gradient %d: %w", i, err)
		}
	}
	return nil
}

// productOperands are a checked Product's operands as []T.
func productOperands[T graph.Float](pr Product) (a, b []T, err error) {
	if a, err = values[T](pr.A); err == nil {
		b, err = values[T](pr.B)
	}
	return a, b, err
}

// shapeOf is v's shape, or nil for a nil v.
func shapeOf(v G.Value) tensor.Shape {
	if v == nil {
		return nil
	}
	return v.Shape()
}
