package graph

import (
	"context"
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
)

// RunChanged evaluates the program as Run does, but recomputes only the nodes that depend on
// the input nodes in changed; every other node keeps the value of the last run. The caller
// promises that no other input's value has changed since that run, neither rebound nor
// written into: a Hessian-vector product in many directions at the same parameters then
// computes the loss's forward pass and gradient, which do not depend on the direction, once.
// Each node owns its buffer and no op writes into another's (see Program), so a kept value is
// the one the last run computed, and the results are those of Run, bit for bit.
//
// The first run of a program, one after a run that failed or was cancelled, and a program
// with deferred products (DeferProduct) or
// NonzerosAt promises pending, runs every node. A changed node that is not an input of the
// program is an error.
func (p *Program) RunChanged(ctx context.Context, changed ...*G.Node) error {
	if p == nil || p.index == nil {
		return errNilProgram
	}
	idx := make([]int, 0, len(changed))
	for _, n := range changed {
		i, err := p.lookup(n)
		if err != nil {
			return err
		}
		if n.Op() != nil {
			return fmt.Errorf("graph: RunChanged of %s, which is not an input node", n.Name())
		}
		idx = append(idx, i)
	}
	if !p.complete || p.lazy != nil || len(p.promises) > 0 {
		return p.runKeeping(ctx, nil)
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	if p.keep == nil || !slices.Equal(idx, p.keptFor) {
		p.keep = p.keepMask(idx)
		p.keptFor = idx
	}
	return p.runKeeping(ctx, p.keep)
}

// keepMask marks the nodes that depend on none of the inputs at the indices changed.
func (p *Program) keepMask(changed []int) []bool {
	keep := make([]bool, len(p.nodes))
	for i := range p.nodes {
		dirty := slices.Contains(changed, i)
		for _, k := range p.kids[i] {
			dirty = dirty || !keep[k]
		}
		keep[i] = !dirty
	}
	return keep
}
