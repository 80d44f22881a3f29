package graph

import (
	"fmt"
	"os"
	"slices"

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

// fuseBlock is the number of elements a fused kernel computes at a time.
const fuseBlock = 256

// fuseBlockEW is the block of kernels whose blocks do not fix a sum's order (elementwise
// ones, and per-channel sums, which sum a plane at a time): four times fuseBlock, which cost
// a call per instruction every 256 elements (a batch norm's forward and backward on
// 50×128×4×4, one core: 0.41 → 0.29 ms); their registers still fit the first-level cache.
// A variable for tests that compare block sizes.
var fuseBlockEW = 4 * fuseBlock

// fuseBlockMax bounds the blocks of kernels with broadcast operands, which follow the
// operands' runs.
const fuseBlockMax = 1024

// fuseMin is the smallest output worth fusing.
const fuseMin = 1024

// fusedKernel evaluates a tree of elementwise ops: inst in post-order, the last one the root
// (or the input of the root's sum when sum is set).
type fusedKernel struct {
	inst   []finst
	leaves []int          // program indices of the values the kernel reads
	pats   []*leafPattern // per leaf: nil, or how a broadcast operand is read
	size   int            // elements of the elementwise domain
	sum    bool           // the root sums its input to a scalar
	span   int            // blocks never cross a multiple of span (broadcast operands' runs)
	blk    int            // elements per block
	// expand, when not nil, gives each broadcast leaf (pats[l] ≠ nil) a register of its own,
	// which fusedBlock fills with the leaf's values over the block before the instructions run
	// (−1 for the other leaves): blocks then span many of its runs, where following the runs
	// (a channel's 2×2 or 4×4 map) would run every instruction on a few elements at a time
	expand []int
	// channel marks the leaves that stand for a per-channel broadcast (fuseChannels): always
	// expanded, so that the ops read their values as they read the broadcast's array
	channel []bool
	// period, for each expanded leaf whose pattern repeats image after image (outermost
	// stride 0), is the number of elements after which it repeats (else 0): fusedDo expands
	// one period once a run, and blocks within a period read it there instead of expanding
	period []int
	// planes, for a kernel whose root sums its input per channel (an N×C×H×W input to C
	// sums: a batch norm's statistics and their gradients), is N, C and H·W; the blocks are then
	// runs of whole planes of one image, each plane summed as sumPerChannel sums it
	planes *[3]int
}

// fuseExpandSpan is the span below which a fused kernel expands its broadcast leaves into
// registers rather than computing one run at a time.
const fuseExpandSpan = 64

// fuseExpandOn turns the expansion off for tests that compare it with computing run by run.
var fuseExpandOn = true

// finst is one op of a fused kernel. A source is a register (the result of instruction r,
// src = r) or a leaf (src = −1 − leaf index).
type finst struct {
	op   G.Op
	src  [2]int
	nsrc int
}

// fusable reports whether node n of a program is an elementwise op over its whole output whose
// inputs each have the output's size or one element, or are broadcast along runs (fusedKernel's
// patterns); short says that a run is shorter than fuseRunMin, which only kernels that expand
// their broadcast operands compute efficiently (not sums, whose blocks are kept as they were).
func fusable(n *G.Node, kids []*G.Node) (ok, short bool) {
	size := n.Shape().TotalSize()
	if size < fuseMin {
		return false, false
	}
	switch op := n.Op().(type) {
	case *unaryOp:
		if !op.kind.known() {
			return false, false // left to the op's own Do, which reports it
		}
	case *binaryOp:
		if !op.kind.known() {
			return false, false
		}
	case *gateOp:
	case *broadcastToOp:
		return len(kids) == 1 && kids[0].Shape().TotalSize() == 1, false
	default:
		return false, false
	}
	for j, k := range kids {
		if s := k.Shape().TotalSize(); s != size && s != 1 {
			b, isBinary := n.Op().(*binaryOp)
			if !isBinary {
				return false, false
			}
			l := bcastPattern(b, j)
			if l.run < 1 || (l.run < fuseRunMin && !fuseShortRuns) {
				return false, false
			}
			short = short || l.run < fuseRunMin
		}
	}
	return true, short
}

// fuseShortRuns lets elementwise ops whose broadcast operands run fewer than fuseRunMin
// elements (a channel's 2×2 or 1×1 map) be fused into kernels that expand them; off for tests
// that compare with leaving them unfused.
var fuseShortRuns = true

// fuseRunMin is the shortest run of a broadcast operand (a row of a bias added to every row,
// a channel's value repeated over a plane) worth fusing.
const fuseRunMin = 16

// regs is the number of blk-element registers a block of the kernel uses.
func (k *fusedKernel) regs() int {
	n := len(k.inst)
	for _, slot := range k.expand {
		n = max(n, len(k.inst)+slot+1)
	}
	return n
}

// channelSumRoot reports whether n sums its N×C×H×W input per channel (sumPerChannel).
func channelSumRoot(n *G.Node, kids []*G.Node) bool {
	op, ok := n.Op().(*sumToOp)
	return ok && fuseChannelSums && len(kids) == 1 && perChannel(op.keep, op.src) && kids[0].Shape().TotalSize() >= fuseMin &&
		n.Shape().TotalSize() < kids[0].Shape().TotalSize()
}

// fuseChannelSums lets per-channel sums fuse their input's kernel; off for tests that compare
// with the sum of the materialized input.
var fuseChannelSums = true

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
	short := make([]bool, n) // the node's kernel would read an operand broadcast along short runs
	root := make([]bool, n)
	for i, nd := range p.nodes {
		if nd.Op() == nil {
			continue
		}
		ks := kidNodes(i)
		ew[i], short[i] = fusable(nd, ks)
		root[i] = ew[i] || sumRoot(nd, ks) || channelSumRoot(nd, ks)
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
			if short[i] && !channelSumRoot(p.nodes[c], kidNodes(c)) { // whose blocks sum planes
				continue
			}
			size = p.nodes[i].Shape().TotalSize()
		}
		if p.nodes[i].Shape().TotalSize() == size {
			p.inlined[i] = true
			short[c] = short[c] || short[i] // nodes come after their inputs
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
		if !ew[i] || short[i] || p.inlined[i] || out[nd] || consumers[i] < 2 || !cheap(nd.Op()) {
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
	channel := p.fuseChannels(out, users, ew)
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
		leaf := map[string]int{}
		built := map[int]int{} // node → register: a node inlined twice is computed once
		var build func(j int) int
		build = func(j int) int {
			if r, ok := built[j]; ok {
				return r
			}
			in := finst{op: p.nodes[j].Op(), nsrc: len(p.kids[j])}
			size := p.nodes[j].Shape().TotalSize()
			_, binary := in.op.(*binaryOp)
			for a, c := range p.kids[j] {
				if channel[c] {
					// a channel's values over the maps: the kernel reads them through a pattern
					lp := channelPattern(p.nodes[c].Shape())
					key := fmt.Sprint(p.kids[c][0], lp, "channel")
					l, ok := leaf[key]
					if !ok {
						l = len(k.leaves)
						leaf[key] = l
						k.leaves = append(k.leaves, p.kids[c][0])
						k.pats = append(k.pats, &lp)
						k.channel = append(k.channel, true)
					}
					in.src[a] = -1 - l
					continue
				}
				if p.inlined[c] {
					if _, bc := p.nodes[c].Op().(*broadcastToOp); bc && binary {
						// a broadcast scalar: the binary op reads the scalar itself
						c = p.kids[c][0]
					} else {
						in.src[a] = build(c)
						continue
					}
				}
				var pat *leafPattern
				key := fmt.Sprint(c)
				if cs := p.nodes[c].Shape().TotalSize(); cs != size && cs != 1 {
					lp := bcastPattern(in.op.(*binaryOp), a)
					pat = &lp
					key = fmt.Sprint(c, lp)
				}
				l, ok := leaf[key]
				if !ok {
					l = len(k.leaves)
					leaf[key] = l
					k.leaves = append(k.leaves, c)
					k.pats = append(k.pats, pat)
					k.channel = append(k.channel, false)
				}
				in.src[a] = -1 - l
			}
			k.inst = append(k.inst, in)
			built[j] = len(k.inst) - 1
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
		if k.sum && channelSumRoot(p.nodes[i], kidNodes(i)) {
			k.planeKernel(p.nodes[p.kids[i][0]].Shape())
			p.fused[i] = k
			continue
		}
		k.span, k.blk = k.size, fuseBlock
		if !k.sum {
			k.blk = fuseBlockEW
		}
		for l, pat := range k.pats {
			if pat != nil && !k.channel[l] {
				k.span = gcd(k.span, pat.run)
			}
		}
		if k.span < k.size {
			k.blk = min(k.span, fuseBlockMax)
		}
		all := fuseExpandOn && k.span < fuseExpandSpan && !k.sum // a sum's blocks fix its order: left as they were
		if all {
			k.span, k.blk = k.size, fuseBlockEW
		}
		if all || slices.Contains(k.channel, true) {
			k.expand = make([]int, len(k.pats))
			slot := 0
			for l, pat := range k.pats {
				k.expand[l] = -1
				if pat != nil && (all || k.channel[l]) {
					k.expand[l] = slot
					slot++
				}
			}
			k.period = make([]int, len(k.pats))
			for l, pat := range k.pats {
				if k.expand[l] >= 0 && len(pat.outer) > 0 && pat.strides[0] == 0 && pat.outer[0] > 1 {
					k.period[l] = k.size / pat.outer[0]
				}
			}
		}
		p.fused[i] = k
		if fuseDump {
			fmt.Fprintf(os.Stderr, "fused %v %v: size %d span %d blk %d sum %v\n", p.nodes[i].Op(), p.nodes[i].Shape(), k.size, k.span, k.blk, k.sum)
			for j, in := range k.inst {
				fmt.Fprintf(os.Stderr, "   %d: %v %v\n", j, in.op, in.src[:in.nsrc])
			}
			for j, l := range k.leaves {
				fmt.Fprintf(os.Stderr, "   leaf %d: %v %v pat %+v\n", j, p.nodes[l].Op(), p.nodes[l].Shape(), k.pats[j])
			}
		}
	}
}

// planeKernel sets the blocks of a kernel whose root sums its input of shape s per channel:
// runs of whole planes of one image, about fuseBlock elements, every broadcast operand
// expanded (the blocks do not follow its runs; they cannot change the sums, which are a
// plane's each).
func (k *fusedKernel) planeKernel(s tensor.Shape) {
	n, c, hw := s[0], s[1], s[2]*s[3]
	k.planes = &[3]int{n, c, hw}
	k.span, k.blk = k.size, min(c, max(1, fuseBlockEW/max(hw, 1)))*hw
	k.expand = make([]int, len(k.pats))
	k.period = make([]int, len(k.pats))
	slot := 0
	for l, pat := range k.pats {
		k.expand[l] = -1
		if pat == nil {
			continue
		}
		k.expand[l] = slot
		slot++
		if len(pat.outer) > 0 && pat.strides[0] == 0 && pat.outer[0] > 1 {
			k.period[l] = k.size / pat.outer[0]
		}
	}
}

// fuseChannels marks the per-channel broadcasts (1×C×1×1 to N×C×H×W: batch norm's backward
// spreads d(mean) and d(variance) over the maps so) that are not outputs and that every user
// reads as an operand of an elementwise op of the broadcast's size inside an elementwise
// kernel (not a sum). The kernels then read the C values through a pattern, expanded into a
// register (fusedBlock), and the N×C×H×W array is neither written nor read. The ops see the
// same values at the same strides as they saw in the array, so they give the same bits.
func (p *Program) fuseChannels(out map[*G.Node]bool, users [][]int, ew []bool) []bool {
	channel := make([]bool, len(p.nodes))
	if !fuseChannelsOn {
		return channel
	}
	// inKernel: node v is computed inside an elementwise (not a sum's) kernel
	var inKernel func(v int) bool
	inKernel = func(v int) bool {
		if !p.inlined[v] {
			return ew[v]
		}
		for _, w := range users[v] {
			if !inKernel(w) {
				return false
			}
		}
		return len(users[v]) > 0
	}
	for i, nd := range p.nodes {
		b, ok := nd.Op().(*broadcastToOp)
		size := nd.Shape().TotalSize()
		if !ok || out[nd] || len(users[i]) == 0 || !perChannel(b.keep, b.out) || b.keep.TotalSize() < 2 || size < fuseMin || size == b.keep.TotalSize() {
			continue
		}
		for _, u := range users[i] {
			_, binary := p.nodes[u].Op().(*binaryOp)
			ok = ok && binary && p.nodes[u].Shape().TotalSize() == size && inKernel(u)
		}
		if ok {
			channel[i], p.inlined[i] = true, true
		}
	}
	return channel
}

// fuseChannelsOn turns fuseChannels off for tests that compare with materialized broadcasts.
var fuseChannelsOn = true

// channelPattern is how a kernel over an N×C×H×W domain reads one value per channel, as
// bcastPattern gives it for a binary operand of shape 1×C×1×1 (on 1×1 maps an image's run of
// C consecutive values).
func channelPattern(s tensor.Shape) leafPattern {
	if s[2]*s[3] == 1 {
		return leafPattern{run: s[1], inner: 1, outer: []int{s[0]}, strides: []int{0}}
	}
	return leafPattern{run: s[2] * s[3], outer: []int{s[0], s[1]}, strides: []int{0, 1}}
}

// run computes the kernel of root node nd from the leaves' values.
func (k *fusedKernel) run(nd *G.Node, dst G.Value, leaves []G.Value) (G.Value, error) {
	return run(nd.Dtype(),
		func() (G.Value, error) { return fusedDo[float64](k, nd.Shape(), dst, leaves) },
		func() (G.Value, error) { return fusedDo[float32](k, nd.Shape(), dst, leaves) })
}

func fusedDo[T Float](k *fusedKernel, shape tensor.Shape, dst G.Value, lv []G.Value) (G.Value, error) {
	if err := fusedCheck[T](k); err != nil {
		return nil, err
	}
	leaves := make([][]T, len(lv))
	for i, v := range lv {
		e, err := Elements[T](v)
		if err != nil {
			return nil, err
		}
		if k.pats[i] == nil && len(e) != k.size && len(e) != 1 {
			return nil, fmt.Errorf("graph: fused kernel: operand of %d elements in a kernel over %d", len(e), k.size)
		}
		leaves[i] = e
	}
	v, y := output[T](dst, shape)
	// the periodic leaves' values over one period, in one workspace
	var periods [][]T
	if total := sumInts(k.period); total > 0 {
		buf := getWorkspace[T](total)
		defer putWorkspace(buf)
		periods = make([][]T, len(k.period))
		rest := *buf
		for l, P := range k.period {
			if P > 0 {
				periods[l], rest = rest[:P], rest[P:]
				expandPattern(k.pats[l], leaves[l], 0, P, periods[l])
			}
		}
	}
	// blocks: each run of k.run elements in pieces of at most k.blk
	per := (k.span + k.blk - 1) / k.blk
	blocks := k.size / k.span * per
	span := func(b int) (int, int) {
		r, j := b/per, b%per
		s := r*k.span + j*k.blk
		return s, min(s+k.blk, (r+1)*k.span)
	}
	if k.planes != nil {
		planeSums(k, y, leaves, periods)
		return v, nil
	}
	if k.sum {
		group := max(1, (1<<15)/k.blk) // blocks per partial sum: fixed by the shapes alone
		parts := make([]T, (blocks+group-1)/group)
		parallelFor(len(parts), 1, func(lo, hi int) {
			ws := getWorkspace[T](k.regs() * k.blk)
			for c := lo; c < hi; c++ {
				var s T
				for b := c * group; b < min(blocks, (c+1)*group); b++ {
					st, e := span(b)
					s += sumSerial(fusedBlock(k, *ws, leaves, periods, st, e, nil))
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
	parallelFor(blocks, max(1, elementwiseGrain/k.blk), func(lo, hi int) {
		ws := getWorkspace[T](k.regs() * k.blk)
		for b := lo; b < hi; b++ {
			s, e := span(b)
			fusedBlock(k, *ws, leaves, periods, s, e, y[s:e])
		}
		putWorkspace(ws)
	})
	return v, nil
}

// planeSums computes a kernel whose root sums per channel (k.planes) into y: groups of
// channels split across cores, each computing its planes image after image and adding each
// plane's sum to its channel as sumPerChannel does, so the bits of the unfused sum for any
// number of cores.
func planeSums[T Float](k *fusedKernel, y []T, leaves, periods [][]T) {
	n, c, hw := k.planes[0], k.planes[1], k.planes[2]
	cb := k.blk / max(hw, 1) // channels a block
	clear0(y)
	if n == 0 || c == 0 || hw == 0 {
		return
	}
	groups := (c + cb - 1) / cb
	parallelFor(groups, max(1, elementwiseGrain/(n*k.blk)), func(lo, hi int) {
		ws := getWorkspace[T](k.regs() * k.blk)
		for g := lo; g < hi; g++ {
			c0, c1 := g*cb, min((g+1)*cb, c)
			for i := 0; i < n; i++ {
				vals := fusedBlock(k, *ws, leaves, periods, (i*c+c0)*hw, (i*c+c1)*hw, nil)
				sumChannels(vals, y[c0:c1], 1, c1-c0, hw, 0, c1-c0)
			}
		}
		putWorkspace(ws)
	})
}

func sumInts(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// fusedCheck reports an error for an instruction fusedBlock has no code for. Checked before
// the blocks run, since those run on helper goroutines that cannot return one.
func fusedCheck[T Float](k *fusedKernel) error {
	for _, in := range k.inst {
		var err error
		switch op := in.op.(type) {
		case *unaryOp:
			_, err = unaryLookup[T](op.kind)
		case *binaryOp:
			_, err = binaryLookup[T](op.kind)
		case *gateOp, *broadcastToOp:
		default:
			err = fmt.Errorf("not an elementwise op")
		}
		if err != nil {
			return fmt.Errorf("graph: fused kernel: %v: %w", in.op, err)
		}
	}
	return nil
}

// fusedBlock evaluates elements s … e−1 of kernel k with registers regs, writing the root's
// values into out (a register when out is nil), and returns them.
func fusedBlock[T Float](k *fusedKernel, regs []T, leaves, periods [][]T, s, e int, out []T) []T {
	n := e - s
	var res []T
	// inPeriod: the block's values of leaf l lie within one period of it
	inPeriod := func(l int) ([]T, bool) {
		if periods == nil || periods[l] == nil {
			return nil, false
		}
		P := len(periods[l])
		o := s % P
		return periods[l][o:min(o+n, P)], o+n <= P
	}
	src := func(in *finst, a int) ([]T, int) {
		if r := in.src[a]; r >= 0 {
			return regs[r*k.blk:][:n], 1
		}
		li := -1 - in.src[a]
		l := leaves[li]
		if k.expand != nil && k.expand[li] >= 0 {
			if v, ok := inPeriod(li); ok {
				return v, 1
			}
			return regs[(len(k.inst)+k.expand[li])*k.blk:][:n], 1
		}
		if pat := k.pats[li]; pat != nil {
			off := pat.offset(s)
			if pat.inner == 0 {
				return l[off : off+1], 0
			}
			return l[off : off+n], 1
		}
		if len(l) == 1 {
			return l, 0
		}
		return l[s:e], 1
	}
	for l, slot := range k.expand {
		if _, ok := inPeriod(l); slot >= 0 && !ok {
			expandPattern(k.pats[l], leaves[l], s, e, regs[(len(k.inst)+slot)*k.blk:][:n])
		}
	}
	for j := range k.inst {
		in := &k.inst[j]
		dst := regs[j*k.blk:][:n]
		if j == len(k.inst)-1 && out != nil {
			dst = out[:n]
		}
		switch op := in.op.(type) {
		case *unaryOp:
			x, _ := src(in, 0)
			unaryDefs[T]()[op.kind].apply(op, dst, x)
		case *binaryOp:
			a, sa := src(in, 0)
			b, sb := src(in, 1)
			binaryDefs[T]()[op.kind].apply(dst, a, b, sa, sb)
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
		default:
			panic(fmt.Sprintf("graph: fused kernel: %v passed fusedCheck", in.op))
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
		d, err := binaryLookup[float64](o.kind)
		return err == nil && d.cheap
	case *unaryOp:
		d, err := unaryLookup[float64](o.kind)
		return err == nil && d.cheap
	}
	return false
}
