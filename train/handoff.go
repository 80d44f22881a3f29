package train

import (
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Handing a step's gradients to the optimizer: with what the Program knows of them — the rows
// outside which one is zero (a first layer behind one-hot inputs), which ones it proves finite
// from their operands, and which weight gradients it left uncomputed for an optimizer that
// computes them itself inside its update (graph.Program.DeferProduct) — so that the optimizer
// reads as little memory as it can.

// deferProducts lets the Program leave the weight gradients it can (graph.Program.DeferProduct)
// to opt when opt computes them itself (samplers.ProductTeller, taking a proof of finiteness,
// samplers.FiniteTeller, and checking what it writes, samplers.Checked, so that Step scans no
// gradient before the step), and has it compute them all otherwise.
func (p *program) deferProducts(opt samplers.Optimizer) {
	_, pt := opt.(samplers.ProductTeller)
	_, ft := opt.(samplers.FiniteTeller)
	_, ck := opt.(samplers.Checked)
	if on := pt && ft && ck; on != p.products {
		for _, g := range p.grads {
			p.prog.DeferProduct(g, on)
		}
		p.products = on
	}
}

// gradients sets grads to the values of the last run's gradients, and p.prods to the ones the
// Program left uncomputed and the optimizer may compute (the Program proves them finite from
// their operands); the Program computes any other it left.
func (p *program) gradients(grads []G.Value) error {
	if p.products && p.prods == nil {
		p.prods = make([]samplers.Product, len(p.grads))
	}
	for i, g := range p.grads {
		if p.products {
			p.prods[i] = samplers.Product{}
			if a, b, c, ok := p.prog.DeferredProduct(g); ok && p.prog.Finite(g) {
				grads[i], p.prods[i] = c, samplers.Product{A: a, B: b}
				continue
			}
		}
		var err error
		if grads[i], err = p.prog.Value(g); err != nil {
			return err
		}
	}
	return nil
}

// step hands the optimizer the gradients, with the rows outside which each is zero where the
// Program knows them (a first layer behind one-hot inputs) and the optimizer can use them, and
// the gradients left to it as products.
func (p *program) step(opt samplers.Optimizer, values []*tensor.Dense, grads []G.Value, d *deferral) error {
	if ft, ok := opt.(samplers.FiniteTeller); ok {
		ft.TellFinite(p.provedFinite())
	}
	if pt, ok := opt.(samplers.ProductTeller); ok && p.products {
		pt.TellProducts(p.prods)
	}
	rs, ok := opt.(samplers.RowStepper)
	if ok != p.readOnly {
		// a RowStepper only reads the gradients, so the Program may clear only the rows of
		// one that its last run wrote; another optimizer might write into them
		for _, g := range p.grads {
			if err := p.prog.SetReadOnly(g, ok); err != nil {
				return err
			}
		}
		p.readOnly = ok
	}
	if !ok {
		return opt.Step(values, grads)
	}
	if p.gradRows == nil {
		p.gradRows = make([][]int32, len(p.grads))
	}
	known := false
	for i, g := range p.grads {
		p.gradRows[i], _ = p.prog.NonzeroRows(g)
		known = known || p.gradRows[i] != nil
	}
	switch {
	case d != nil:
		return d.step(p, values, grads, p.gradRows)
	case !known:
		return opt.Step(values, grads)
	}
	return rs.StepRows(values, grads, p.gradRows)
}

// provedFinite flags the gradients of the last run that the Program vouches are finite from
// their operands alone (graph.Program.Finite: a hidden layer's weight gradient, whose operands,
// a batch's rows, are a small part of its size), which an optimizer then need not read for its
// check; a gradient with known nonzero rows is read only in those anyway.
func (p *program) provedFinite() []bool {
	if p.finite == nil {
		p.finite = make([]bool, len(p.grads))
	}
	for i, g := range p.grads {
		if p.products && p.prods[i].A != nil { // gradients proved it
			p.finite[i] = true
			continue
		}
		_, rows := p.prog.NonzeroRows(g)
		p.finite[i] = !rows && p.prog.Finite(g)
	}
	return p.finite
}
