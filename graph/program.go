package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Program evaluates a fixed set of output nodes and everything they depend on. Build it once
// with Compile, then on every step bind new input values (gorgonia.Let or Program.Let), call
// Run, and read any compiled node with Value, Float64s or Scalar.
//
// Every node owns its result buffer, reused from run to run, and no op writes into another
// node's buffer, so values never alias (gorgonia's TapeMachine reuses registers and can
// overwrite a result still in use) and a steady-state run allocates next to nothing. A value
// returned by Value is overwritten by the next Run; copy it (Float64s does) to keep it.
//
// A Program is not safe for concurrent use; compile one per goroutine.
type Program struct {
	nodes []*G.Node
	kids  [][]int
	vals  []G.Value
	index map[*G.Node]int
	args  []G.Value
	prof  map[string]*OpTime
	// support is what the last run learned of where each node's value is nonzero
	// (NonzeroRows)
	support []rowSupport
	// memos holds, for each node, what this run's products learned of it as a left operand
	memos []operandMemo
	// filters holds, for each filter node of convolutions that gather live taps, the taps
	// as this run gathered them (filterMemo)
	filters []filterMemo
	// promises are the NonzerosAt promises for the next run
	promises []nonzeroPromise

	// elementwise fusion (fuse.go): inlined nodes are computed inside their consumer's
	// kernel, and on demand by Value; fresh records the run that last computed each.
	inlined []bool
	fused   []*fusedKernel
	leafv   []G.Value
	runs    int
	fresh   []int

	// deferred products (product.go): lazy marks the products a run may leave uncomputed,
	// owed the run that last left each
	lazy []bool
	owed []int

	// partial runs (partial.go): keep marks the nodes that do not depend on the inputs
	// keptFor indexes, which RunChanged last recomputed
	keep    []bool
	keptFor []int
	// skip marks the nodes that the nodes at the indices skipFor, which RunFor last
	// computed, do not need
	skip     []bool
	skipFor  []int
	complete bool // the last run computed every node it had to

	// pool (pool.go) gives the first run its result buffers; taken are those it gave
	pool  *Pool
	taken []any
}

// OpTime is the time a Program spent in the ops of one kind (see Program.Profile).
type OpTime struct {
	Op       string // the op's name and shape, e.g. "MatMul(false, false) [128 256]"
	Calls    int
	Seconds  float64
	Elements int64 // output elements written
	Flops    int64 // floating-point operations of matrix products and convolutions
}

// Profile turns per-op timing on (or off, discarding it); OpTimes reports it. It costs two
// clock reads per op.
func (p *Program) Profile(on bool) {
	if p == nil {
		return
	}
	p.prof = nil
	if on {
		p.prof = map[string]*OpTime{}
	}
}

// OpTimes returns the time spent per op kind since Profile(true), most expensive first.
func (p *Program) OpTimes() []OpTime {
	if p == nil {
		return nil
	}
	out := make([]OpTime, 0, len(p.prof))
	for _, t := range p.prof {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seconds > out[j].Seconds })
	return out
}

// Compile prepares a Program computing outputs.
func Compile(outputs ...*G.Node) (*Program, error) {
	if len(outputs) == 0 {
		return nil, fmt.Errorf("graph: Compile of no outputs")
	}
	for _, o := range outputs {
		if o == nil {
			return nil, fmt.Errorf("graph: Compile of a nil node")
		}
	}
	order := topoSort(outputs)
	p := &Program{nodes: order, kids: make([][]int, len(order)), vals: make([]G.Value, len(order)), index: make(map[*G.Node]int, len(order))}
	for i, n := range order {
		p.index[n] = i
	}
	widest := 0
	for i, n := range order {
		ks := children(n)
		p.kids[i] = make([]int, len(ks))
		for j, c := range ks {
			p.kids[i][j] = p.index[c]
		}
		widest = max(widest, len(ks))
	}
	p.args = make([]G.Value, widest)
	p.fresh = make([]int, len(order))
	p.support = make([]rowSupport, len(order))
	if fuseEnabled {
		p.fuse(outputs)
	}
	return p, nil
}

// errNilProgram is what a Program's methods return when it was not made by Compile.
var errNilProgram = errors.New("graph: a nil Program, or one not made by Compile")

// lookup returns n's index in the program, or an error naming why there is none: a nil
// Program, a nil node, or a node the program does not compute.
func (p *Program) lookup(n *G.Node) (int, error) {
	if p == nil || p.index == nil {
		return 0, errNilProgram
	}
	if n == nil {
		return 0, errors.New("graph: a nil node")
	}
	i, ok := p.index[n]
	if !ok {
		return 0, fmt.Errorf("graph: node %s is not part of this program", n.Name())
	}
	return i, nil
}

// Let binds value (a *tensor.Dense, a gorgonia scalar, or a Go float) to the input node n.
func (p *Program) Let(n *G.Node, value any) error {
	if p == nil || n == nil {
		return errors.New("graph: Let on a nil Program or a nil node")
	}
	if err := G.Let(n, value); err != nil {
		return fmt.Errorf("graph: binding %s: %w", n.Name(), err)
	}
	return nil
}

// Run evaluates the program with the values currently bound to its input nodes. It stops
// early with ctx's error if ctx is cancelled between ops.
func (p *Program) Run(ctx context.Context) error {
	return p.runKeeping(ctx, nil)
}

// runKeeping is Run, except that it leaves every node i with keep[i] as the last run left it
// (RunChanged); a nil keep runs every node.
func (p *Program) runKeeping(ctx context.Context, keep []bool) error {
	if p == nil || p.index == nil {
		return errNilProgram
	}
	running.Add(1)
	defer running.Add(-1)
	p.runs++
	p.complete = false
	defer func() { p.promises = p.promises[:0] }()
	for i, n := range p.nodes {
		if i&63 == 0 && ctx != nil {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if keep != nil && keep[i] {
			continue
		}
		op := n.Op()
		if op == nil {
			v := n.Value()
			if v == nil {
				return fmt.Errorf("graph: input %s has no value; bind one with Program.Let or gorgonia.Let", n.Name())
			}
			if !v.Shape().Eq(n.Shape()) && !(v.Shape().TotalSize() == 1 && n.Shape().TotalSize() == 1) {
				return fmt.Errorf("graph: input %s is bound to a value of shape %v; want %v", n.Name(), shapeString(v.Shape()), shapeString(n.Shape()))
			}
			if v.Dtype() != n.Dtype() {
				return fmt.Errorf("graph: input %s is bound to a %v value; want %v", n.Name(), v.Dtype(), n.Dtype())
			}
			p.vals[i] = v
			if len(p.promises) > 0 {
				p.keepPromises(i, v)
			}
			continue
		}
		if p.inlined != nil && p.inlined[i] {
			continue
		}
		var t0 time.Time
		if p.prof != nil {
			t0 = time.Now()
		}
		var v G.Value
		var err error
		p.support[i].known = false
		dst := p.poolDst(i)
		if p.fused != nil && p.fused[i] != nil {
			v, err = p.runFused(i, dst)
		} else {
			args := p.args[:len(p.kids[i])]
			for j, k := range p.kids[i] {
				args[j] = p.vals[k]
			}
			mm, isProduct := op.(*matMulOp)
			if isProduct {
				p.rememberLeft(i)
			}
			if c, ok := op.(*convOp); ok && c.gathersFilters() {
				p.rememberFilters(i)
			}
			if isProduct && p.lazy != nil && p.lazy[i] {
				v, err = p.execProduct(i, mm, dst, args)
			} else {
				v, err = p.exec(op, dst, args, &p.support[i])
			}
		}
		if p.prof != nil {
			key := fmt.Sprintf("%v %v", op, n.Shape())
			t := p.prof[key]
			if t == nil {
				t = &OpTime{Op: key}
				p.prof[key] = t
			}
			t.Calls++
			t.Seconds += time.Since(t0).Seconds()
			t.Elements += int64(n.Shape().TotalSize())
			t.Flops += opFlops(op)
		}
		if err != nil {
			return fmt.Errorf("graph: running %s: %w", n.Name(), err)
		}
		p.vals[i] = v
	}
	p.complete = true
	return nil
}

// rememberLeft points product i at the memo of its left operand's node for this run.
func (p *Program) rememberLeft(i int) {
	if p.memos == nil {
		p.memos = make([]operandMemo, len(p.nodes))
	}
	m := &p.memos[p.kids[i][0]]
	m.now = p.runs
	p.support[i].left = m
}

// rememberFilters points convolution i at the memo of its filter node's live taps for this
// run.
func (p *Program) rememberFilters(i int) {
	if p.filters == nil {
		p.filters = make([]filterMemo, len(p.nodes))
	}
	m := &p.filters[p.kids[i][1]]
	m.now = p.runs
	p.support[i].filters = m
}

func (p *Program) runFused(i int, dst G.Value) (v G.Value, err error) {
	k := p.fused[i]
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("fused kernel panicked: %v", r)
		}
	}()
	p.leafv = p.leafv[:0]
	for _, l := range k.leaves {
		p.leafv = append(p.leafv, p.vals[l])
	}
	return k.run(p.nodes[i], dst, p.leafv)
}

// demand computes node i of the last run if fusion left it uncomputed.
func (p *Program) demand(i int) error {
	if p.inlined == nil || !p.inlined[i] || p.fresh[i] == p.runs {
		return nil
	}
	args := make([]G.Value, len(p.kids[i]))
	for j, k := range p.kids[i] {
		if err := p.demand(k); err != nil {
			return err
		}
		args[j] = p.vals[k]
	}
	v, err := p.exec(p.nodes[i].Op(), p.poolDst(i), args, nil)
	if err != nil {
		return fmt.Errorf("graph: computing %s: %w", p.nodes[i].Name(), err)
	}
	p.vals[i] = v
	p.fresh[i] = p.runs
	return nil
}

// exec runs op, into dst where it can, recording what it learns of the result's nonzero rows in
// s (when not nil).
func (p *Program) exec(op G.Op, dst G.Value, args []G.Value, s *rowSupport) (v G.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("op %v panicked: %v", op, r)
		}
	}()
	if d, ok := op.(supportDoer); ok && s != nil {
		return d.doIntoSupport(dst, s, args...)
	}
	if d, ok := op.(intoDoer); ok {
		return d.DoInto(dst, args...)
	}
	return op.Do(args...)
}

// Value returns n's value from the last Run; it is overwritten by the next one.
func (p *Program) Value(n *G.Node) (G.Value, error) {
	i, err := p.lookup(n)
	if err != nil {
		return nil, err
	}
	if p.runs == 0 {
		return nil, fmt.Errorf("graph: node %s has no value yet; call Run", n.Name())
	}
	if err := p.demand(i); err != nil {
		return nil, err
	}
	if err := p.demandProduct(i); err != nil {
		return nil, err
	}
	if p.vals[i] == nil {
		return nil, fmt.Errorf("graph: node %s has no value yet; call Run", n.Name())
	}
	return p.vals[i], nil
}

// NonzeroRows returns the rows of n's value from the last Run outside which it is zero, in
// increasing order, when the Program knows them, and ok = false otherwise. Row i of a value
// with leading dimension r is the i-th of r equal runs of its row-major data. A Program knows
// them for a matrix product it computed through the nonzeros of a sparse left operand (the
// weight gradient of a layer behind one-hot inputs, whose rows are the inputs the batch has),
// so that an optimizer can leave the rest unread. The slice is overwritten by the next Run.
func (p *Program) NonzeroRows(n *G.Node) (rows []int32, ok bool) {
	if p == nil {
		return nil, false
	}
	i, found := p.index[n]
	if !found || p.runs == 0 || !p.support[i].known {
		return nil, false
	}
	return p.support[i].rows, true
}

// SetReadOnly with on promises that nothing writes into n's value between runs (an optimizer
// that only reads a gradient), so that a run that recomputes it through a sparse product (a
// weight gradient behind one-hot inputs, NonzeroRows) may clear only the rows the previous
// run wrote instead of all of it; a caller that writes into the value while the promise holds
// gets wrong values from later runs. SetReadOnly(n, false) withdraws it: the next run clears
// all of the value again.
func (p *Program) SetReadOnly(n *G.Node, on bool) error {
	i, err := p.lookup(n)
	if err != nil {
		return err
	}
	s := &p.support[i]
	s.readOnly, s.clean = on, s.clean && on
	return nil
}

// ReadOnlyThroughProduct reports whether every node of the program that reads w is the
// matrix product x·w (MatMul(x, w), untransposed). A run then reads w only in the rows that
// meet x's nonzero columns: a sparse product reads no others, and a dense one multiplies them
// by zeros, which leaves its sums as they are while those rows hold finite values. So an
// optimizer may leave the other rows of w behind between runs (samplers.Deferrer) as long as
// it brings up to date, before each run, the rows x's next value has nonzeros in.
func (p *Program) ReadOnlyThroughProduct(x, w *G.Node) bool {
	if p == nil {
		return false
	}
	iw, ok := p.index[w]
	ix, okx := p.index[x]
	if !ok || !okx || iw == ix || deferOff {
		return false
	}
	readers := 0
	for i, kids := range p.kids {
		if !slices.Contains(kids, iw) {
			continue
		}
		op, isProduct := p.nodes[i].Op().(*matMulOp)
		if !isProduct || op.ta || op.tb || len(kids) != 2 || kids[0] != ix || kids[1] != iw {
			return false
		}
		readers++
	}
	return readers > 0
}

// Float64s returns a copy of n's value from the last Run as float64s, in row-major order.
func (p *Program) Float64s(n *G.Node) ([]float64, error) {
	v, err := p.Value(n)
	if err != nil {
		return nil, err
	}
	return ToFloat64s(v)
}

// Scalar returns the value of a one-element node from the last Run.
func (p *Program) Scalar(n *G.Node) (float64, error) {
	f, err := p.Float64s(n)
	if err != nil {
		return 0, err
	}
	if len(f) != 1 {
		return 0, fmt.Errorf("graph: node %s has %d elements, not one", n.Name(), len(f))
	}
	return f[0], nil
}

// ToFloat64s copies a float32 or float64 value (tensor or scalar) into a new []float64.
func ToFloat64s(v G.Value) ([]float64, error) {
	if v == nil {
		return nil, errors.New("graph: ToFloat64s of a nil value")
	}
	switch v.Dtype() {
	case tensor.Float64:
		s, err := Elements[float64](v)
		if err != nil {
			return nil, err
		}
		return append([]float64(nil), s...), nil
	case tensor.Float32:
		s, err := Elements[float32](v)
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(s))
		for i, e := range s {
			out[i] = float64(e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("graph: value of dtype %v", v.Dtype())
}

// Flatten returns the values of nodes from the last Run, converted to float64 and concatenated
// in order: the flat vector of a list of parameter-shaped results (gradients, Hessian-vector
// products).
func (p *Program) Flatten(nodes ...*G.Node) ([]float64, error) {
	var out []float64
	for _, n := range nodes {
		f, err := p.Float64s(n)
		if err != nil {
			return nil, err
		}
		out = append(out, f...)
	}
	return out, nil
}

// SetFlat copies a flat vector into float32 or float64 tensors in order, the inverse of
// Flatten: flat must hold exactly as many values as the tensors together.
func SetFlat(dst []*tensor.Dense, flat []float64) error {
	off := 0
	for i, d := range dst {
		if d == nil {
			return fmt.Errorf("graph: SetFlat into a nil tensor (%d)", i)
		}
		n := d.Shape().TotalSize()
		if off+n > len(flat) {
			return fmt.Errorf("graph: SetFlat of %d values into tensors of more", len(flat))
		}
		switch x := d.Data().(type) {
		case []float64:
			copy(x, flat[off:off+n])
		case []float32:
			for j := range x {
				x[j] = float32(flat[off+j])
			}
		default:
			return fmt.Errorf("graph: SetFlat into a tensor of %T", x)
		}
		off += n
	}
	if off != len(flat) {
		return fmt.Errorf("graph: SetFlat of %d values into tensors of %d", len(flat), off)
	}
	return nil
}

// opFlops counts the multiply-adds (as two operations) of matrix products and convolutions.
func opFlops(op G.Op) int64 {
	switch o := op.(type) {
	case *matMulOp:
		return 2 * int64(o.m) * int64(o.n) * int64(o.k)
	case *convOp:
		w := o.w
		return 2 * int64(w.N) * int64(o.f) * int64(w.C*w.KH*w.KW) * int64(w.OH*w.OW)
	}
	return 0
}

// LiveBytes is the memory the values of the last Run occupy: every input, intermediate and
// output buffer the program holds (each backing array counted once). A steady-state Run
// allocates a small fraction of it (see BenchmarkCNNTrainStep).
func (p *Program) LiveBytes() int64 {
	if p == nil {
		return 0
	}
	seen := map[uintptr]bool{}
	var total int64
	for _, v := range p.vals {
		if v == nil {
			continue
		}
		n := int64(v.Shape().TotalSize()) * int64(v.Dtype().Size())
		if d, ok := v.(*tensor.Dense); ok {
			if ptr := d.Uintptr(); ptr != 0 {
				if seen[ptr] {
					continue
				}
				seen[ptr] = true
			}
		}
		total += n
	}
	return total
}

// Flops is the floating-point work of one Run in its matrix products and convolutions (two
// operations per multiply-add); elementwise ops are not counted.
func (p *Program) Flops() int64 {
	if p == nil {
		return 0
	}
	var f int64
	for _, n := range p.nodes {
		if op := n.Op(); op != nil {
			f += opFlops(op)
		}
	}
	return f
}
