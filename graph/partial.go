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
	return p.runKeeping(ctx, cachedMask(idx, &p.keep, &p.keptFor, p.keepMask))
}

// cachedMask is build's mask of the node indices idx (sorted and deduplicated), cached in
// *mask for *builtFor: the same set asked again, as every product of one estimate asks, reuses it.
func cachedMask(idx []int, mask *[]bool, builtFor *[]int, build func([]int) []bool) []bool {
	slices.Sort(idx)
	idx = slices.Compact(idx)
	if *mask == nil || !slices.Equal(idx, *builtFor) {
		*mask, *builtFor = build(idx), idx
	}
	return *mask
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

// RunFor evaluates only the nodes that the given nodes need, themselves included; every
// other node keeps its value of the last run, or has none before the first. A program of
// Hessian-vector products that also outputs the loss's gradient can so compute the
// gradient alone, instead of a second program holding a second copy of the forward pass.
// The program is then not complete: the next RunChanged runs every node. A node that is not
// part of the program, or that it does not keep (fused into another: ask for an output of
// Compile), is an error. A program with deferred products (DeferProduct) or NonzerosAt
// promises pending runs every node, as RunChanged does.
func (p *Program) RunFor(ctx context.Context, nodes ...*G.Node) error {
	if p == nil || p.index == nil {
		return errNilProgram
	}
	if len(nodes) == 0 {
		return fmt.Errorf("graph: RunFor of no node")
	}
	idx := make([]int, 0, len(nodes))
	for _, n := range nodes {
		i, err := p.lookup(n)
		if err != nil {
			return err
		}
		if p.inlined != nil && p.inlined[i] {
			return fmt.Errorf("graph: RunFor of %s, which the program fuses into another node", n.Name())
		}
		idx = append(idx, i)
	}
	if p.lazy != nil || len(p.promises) > 0 {
		return p.runKeeping(ctx, nil)
	}
	err := p.runKeeping(ctx, cachedMask(idx, &p.skip, &p.skipFor, p.skipMask))
	p.complete = false
	return err
}

// skipMask marks the nodes that none of the nodes at the indices wanted depends on.
func (p *Program) skipMask(wanted []int) []bool {
	need := make([]bool, len(p.nodes))
	for _, i := range wanted {
		need[i] = true
	}
	for i := len(p.nodes) - 1; i >= 0; i-- {
		if need[i] {
			for _, k := range p.kids[i] {
				need[k] = true
			}
		}
	}
	for i := range need {
		need[i] = !need[i]
	}
	return need
}
