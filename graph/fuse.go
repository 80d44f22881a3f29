package graph

import (
	"fmt"
	"os"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Elementwise fusion. Compile looks for chains of elementwise ops (the unary ops, binary ops
// whose operands are full-size or single elements, ReLU's gate, scalar broadcasts) in which an
// intermediate result feeds exactly one other op of the chain and is not an output; each such
// chain runs as one fused kernel that walks its output in blocks small enough to stay in the
// L1 cache, so intermediates never go to memory. A chain may end in a sum of all elements
// (Dot, SquaredNorm, penalties), which then writes no array at all. The values of fused-away
// nodes are still available: Value computes them on demand.

// fuseEnabled turns fusion on; HYPERFLAT_NOFUSE=1 in the environment turns it off (for
// comparisons).
var fuseEnabled = os.Getenv("HYPERFLAT_NOFUSE") == ""

// fuseBlock is the number of elements a fused kernel computes at a time.
const fuseBlock = 256

// fuseMin is the smallest output worth fusing.
const fuseMin = 1024

// fusedKernel evaluates a tree of elementwise ops: inst in post-order, the last one the root
// (or the input of the root's sum when sum is set).
type fusedKernel struct {
	inst   []finst
	leaves []int // program indices of the values the kernel reads
	size   int   // elements of the elementwise domain
	sum    bool  // the root sums its input to a scalar
}

// finst is one op of a fused kernel. A source is a register (the result of instruction r,
// src = r) or a leaf (src = −1 − leaf index).
type finst struct {
	op   G.Op
	src  [2]int
	nsrc int
}

// fusable reports whether node n of a program is an elementwise op over its whole output whose
// inputs each have the output's size or one element.
func fusable(n *G.Node, kids []*G.Node) bool {
	size := n.Shape().TotalSize()
	if size < fuseMin {
		return false
	}
	switch n.Op().(type) {
	case *unaryOp, *gateOp, *binaryOp:
	case *broadcastToOp:
		return len(kids) == 1 && kids[0].Shape().TotalSize() == 1
	default:
		return false
	}
	for _, k := range kids {
		if s := k.Shape().TotalSize(); s != size && s != 1 {
			return false
		}
	}
	return true
}

// sumRoot reports whether n sums all elements of its input.
func sumRoot(n *G.Node, kids []*G.Node) bool {
	_, ok := n.Op().(*sumToOp)
	return ok && n.Shape().TotalSize() == 1 && len(kids) == 1 && kids[0].Shape().TotalSize() >= fuseMin
}

// fuse plans the fused kernels of a program: it marks the nodes computed inside another
// node's kernel (p.inlined) and sets p.fused for the roots.
func (p *Program) fuse(outputs []*G.Node) {
	n := len(p.nodes)
	consumers := make([]int, n)
	consumer := make([]int, n)
	for i := range p.nodes {
		seen := map[int]bool{}
		for _, k := range p.kids[i] {
			if !seen[k] {
				seen[k] = true
				consumers[k]++
				consumer[k] = i
			}
		}
	}
	out := map[*G.Node]bool{}
	for _, o := range outputs {
		out[o] = true
	}
	kidNodes := func(i int) []*G.Node {
		ks := make([]*G.Node, len(p.kids[i]))
		for j, k := range p.kids[i] {
			ks[j] = p.nodes[k]
		}
		return ks
	}
	ew := make([]bool, n)
	root := make([]bool, n)
	for i, nd := range p.nodes {
		if nd.Op() == nil {
			continue
		}
		ks := kidNodes(i)
		ew[i] = fusable(nd, ks)
		root[i] = ew[i] || sumRoot(nd, ks)
	}
	p.inlined = make([]bool, n)
	for i := range p.nodes {
		if !ew[i] || out[p.nodes[i]] || consumers[i] != 1 {
			continue
		}
		c := consumer[i]
		if !root[c] {
			continue
		}
		size := p.nodes[c].Shape().TotalSize()
		if !ew[c] { // a sum: its input's size
			size = p.nodes[i].Shape().TotalSize()
		}
		if p.nodes[i].Shape().TotalSize() == size {
			p.inlined[i] = true
		}
	}
	// A cheap op of leaves (a scalar broadcast, 2·θ, a − b of materialized values) with several
	// consumers is recomputed inside each of them rather than written out and read back, when
	// every consumer is a kernel root over the same number of elements.
	users := make([][]int, n)
	for i := range p.nodes {
		seen := map[int]bool{}
		for _, k := range p.kids[i] {
			if !seen[k] {
				seen[k] = true
				users[k] = append(users[k], i)
			}
		}
	}
	for i, nd := range p.nodes {
		if !ew[i] || p.inlined[i] || out[nd] || consumers[i] < 2 || !cheap(nd.Op()) {
			continue
		}
		ok := true
		for _, k := range p.kids[i] {
			ok = ok && !p.inlined[k]
		}
		size := nd.Shape().TotalSize()
		for _, c := range users[i] {
			if !root[c] {
				ok = false
				break
			}
			cs := p.nodes[c].Shape().TotalSize()
			if !ew[c] {
				cs = size // a sum of this node
			}
			ok = ok && cs == size
		}
		if ok {
			p.inlined[i] = true
		}
	}
	p.fused = make([]*fusedKernel, n)
	for i := range p.nodes {
		if !root[i] || p.inlined[i] {
			continue
		}
		any := false
		for _, k := range p.kids[i] {
			any = any || p.inlined[k]
		}
		if !any {
			continue
		}
		k := &fusedKernel{}
		leaf := map[int]int{}
		var build func(j int) int
		build = func(j int) int {
			in := finst{op: p.nodes[j].Op(), nsrc: len(p.kids[j])}
			for a, c := range p.kids[j] {
				if p.inlined[c] {
					in.src[a] = build(c)
					continue
				}
				l, ok := leaf[c]
				if !ok {
					l = len(k.leaves)
					leaf[c] = l
					k.leaves = append(k.leaves, c)
				}
				in.src[a] = -1 - l
			}
			k.inst = append(k.inst, in)
			return len(k.inst) - 1
		}
		if ew[i] {
			build(i)
			k.size = p.nodes[i].Shape().TotalSize()
		} else {
			build(p.kids[i][0])
			k.sum = true
			k.size = p.nodes[p.kids[i][0]].Shape().TotalSize()
		}
		p.fused[i] = k
	}
}

// run computes the kernel of root node nd from the leaves' values.
func (k *fusedKernel) run(nd *G.Node, dst G.Value, leaves []G.Value) (G.Value, error) {
	return run(nd.Dtype(),
		func() (G.Value, error) { return fusedDo[float64](k, nd.Shape(), dst, leaves) },
		func() (G.Value, error) { return fusedDo[float32](k, nd.Shape(), dst, leaves) })
}

func fusedDo[T Float](k *fusedKernel, shape tensor.Shape, dst G.Value, lv []G.Value) (G.Value, error) {
	leaves := make([][]T, len(lv))
	for i, v := range lv {
		e, err := Elements[T](v)
		if err != nil {
			return nil, err
		}
		if len(e) != k.size && len(e) != 1 {
			return nil, fmt.Errorf("graph: fused kernel: operand of %d elements in a kernel over %d", len(e), k.size)
		}
		leaves[i] = e
	}
	v, y := output[T](dst, shape)
	if k.sum {
		const chunk = 1 << 15
		parts := make([]T, (k.size+chunk-1)/chunk)
		parallelFor(len(parts), 1, func(lo, hi int) {
			ws := getWorkspace[T](len(k.inst) * fuseBlock)
			for c := lo; c < hi; c++ {
				var s T
				for b := c * chunk; b < min(k.size, (c+1)*chunk); b += fuseBlock {
					e := min(k.size, b+fuseBlock)
					s += sumSerial(fusedBlock(k, *ws, leaves, b, e, nil))
				}
				parts[c] = s
			}
			putWorkspace(ws)
		})
		y[0] = sumSerial(parts)
		return v, nil
	}
	if len(y) != k.size {
		return nil, fmt.Errorf("graph: fused kernel of %d elements into %d", k.size, len(y))
	}
	blocks := (k.size + fuseBlock - 1) / fuseBlock
	parallelFor(blocks, elementwiseGrain/fuseBlock, func(lo, hi int) {
		ws := getWorkspace[T](len(k.inst) * fuseBlock)
		for b := lo; b < hi; b++ {
			s, e := b*fuseBlock, min(k.size, (b+1)*fuseBlock)
			fusedBlock(k, *ws, leaves, s, e, y[s:e])
		}
		putWorkspace(ws)
	})
	return v, nil
}

// fusedBlock evaluates elements s … e−1 of kernel k with registers regs, writing the root's
// values into out (a register when out is nil), and returns them.
func fusedBlock[T Float](k *fusedKernel, regs []T, leaves [][]T, s, e int, out []T) []T {
	n := e - s
	var res []T
	src := func(in *finst, a int) ([]T, int) {
		if r := in.src[a]; r >= 0 {
			return regs[r*fuseBlock:][:n], 1
		}
		l := leaves[-1-in.src[a]]
		if len(l) == 1 {
			return l, 0
		}
		return l[s:e], 1
	}
	for j := range k.inst {
		in := &k.inst[j]
		dst := regs[j*fuseBlock:][:n]
		if j == len(k.inst)-1 && out != nil {
			dst = out[:n]
		}
		switch op := in.op.(type) {
		case *unaryOp:
			x, _ := src(in, 0)
			unaryKernel(op, dst, x)
		case *binaryOp:
			a, sa := src(in, 0)
			b, sb := src(in, 1)
			binaryRow(op.kind, dst, a, b, sa, sb)
		case *gateOp:
			x, _ := src(in, 0)
			g, _ := src(in, 1)
			gateKernel(dst, x, g)
		case *broadcastToOp:
			x, _ := src(in, 0)
			c := x[0]
			for i := range dst {
				dst[i] = c
			}
		}
		res = dst
	}
	return res
}

// cheap reports whether recomputing op is cheaper than reading its result back: at most a
// multiply-add per element.
func cheap(op G.Op) bool {
	switch o := op.(type) {
	case *broadcastToOp, *gateOp:
		return true
	case *binaryOp:
		return o.kind != kDiv
	case *unaryOp:
		switch o.kind {
		case kNeg, kAffine, kReLU, kStep, kSquare:
			return true
		}
	}
	return false
}
