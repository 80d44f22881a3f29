package graph

import (
	"fmt"
	"hash"
	"hash/fnv"
	"unsafe"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Differentiable is implemented by ops whose vector-Jacobian product is itself a graph of
// differentiable ops, so that Grad can be applied to its result again. Every op built by this
// package implements it; a user who writes an op of their own implements it too and checks it
// with GradCheck and GradGradCheck.
type Differentiable interface {
	G.Op
	// VJP returns, for every input i with need[i] set, the adjoint of input i given the node
	// output (this op applied to inputs) and the adjoint of the output. An entry may be nil
	// when the contribution is identically zero; entries whose need is false are ignored.
	VJP(inputs []*G.Node, output, adjoint *G.Node, need []bool) ([]*G.Node, error)
}

// intoDoer is implemented by ops that can write their result into the value they produced on
// the previous run, so that a compiled Program allocates nothing in steady state.
type intoDoer interface {
	DoInto(dst G.Value, inputs ...G.Value) (G.Value, error)
}

// supportDoer is implemented by ops that can also say, as they write their result, which of
// its rows may be nonzero (Program.NonzeroRows), or that use what the run in progress keeps
// of their operands (the memos in rowSupport).
type supportDoer interface {
	doIntoSupport(dst G.Value, s *rowSupport, inputs ...G.Value) (G.Value, error)
}

// rowSupport is what a Program knows of where a node's last value is nonzero: when known, it
// is zero outside rows (increasing) of its leading dimension.
type rowSupport struct {
	rows  []int32
	known bool
	// With readOnly (Program.ReadOnly: nothing writes into the value between runs), clean
	// says that the buffer at buf is zero outside the rows dirty, as the last run left it, so
	// that the next may clear only those.
	readOnly, clean bool
	dirty           []int32
	buf             unsafe.Pointer
	// left, for a product, is the memo of its left operand's node in the run in progress.
	left *operandMemo
	// filters, for a convolution over live taps, is the memo of its filter node's gathered
	// taps in the run in progress.
	filters *filterMemo
}

// Float is the element type of the values this package computes with.
type Float interface{ ~float32 | ~float64 }

// base carries what every op of this package shares: its printed name and parameters (which
// also form its hash, so that gorgonia's hash-consing only merges truly equal nodes), its
// concrete input types and its output shape.
type base struct {
	name   string
	params string
	dt     tensor.Dtype
	in     []hm.Type
	out    tensor.Shape
}

func newBase(name, params string, out tensor.Shape, inputs ...*G.Node) base {
	b := base{name: name, params: params, out: out.Clone()}
	for _, n := range inputs {
		b.in = append(b.in, n.Type())
	}
	if len(inputs) > 0 {
		b.dt = inputs[0].Dtype()
	}
	return b
}

func (b *base) Arity() int { return len(b.in) }

func (b *base) Type() hm.Type {
	ts := make([]hm.Type, 0, len(b.in)+1)
	ts = append(ts, b.in...)
	ts = append(ts, typeOf(b.dt, b.out))
	return hm.NewFnType(ts...)
}

func (b *base) InferShape(...G.DimSizer) (tensor.Shape, error) { return b.out.Clone(), nil }
func (b *base) ReturnsPtr() bool                               { return false }
func (b *base) CallsExtern() bool                              { return false }
func (b *base) OverwritesInput() int                           { return -1 }
func (b *base) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "hyperflat.%s(%s)->%v", b.name, b.params, b.out)
}
func (b *base) String() string {
	if b.params == "" {
		return b.name
	}
	return b.name + "(" + b.params + ")"
}

func (b *base) Hashcode() uint32 {
	h := fnv.New32a()
	b.WriteHash(h)
	return h.Sum32()
}

// typeOf is the gorgonia type of a node holding a value of dtype dt and the given shape:
// the dtype itself for a scalar, a tensor type otherwise.
func typeOf(dt tensor.Dtype, s tensor.Shape) hm.Type {
	if len(s) == 0 {
		return dt
	}
	return G.TensorType{Dims: len(s), Of: dt}
}

// apply adds op applied to inputs to the graph, turning gorgonia's panics into errors.
func apply(op G.Op, inputs ...*G.Node) (n *G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph: applying %v: %v", op, r)
		}
	}()
	for _, in := range inputs {
		if in == nil {
			return nil, fmt.Errorf("graph: %v: nil input node", op)
		}
	}
	if len(inputs) > 1 {
		dt := inputs[0].Dtype()
		for _, in := range inputs[1:] {
			if in.Dtype() != dt {
				return nil, fmt.Errorf("graph: %v: mixed dtypes %v and %v", op, dt, in.Dtype())
			}
		}
	}
	n, err = G.ApplyOp(op, inputs...)
	if err != nil {
		return nil, fmt.Errorf("graph: %v: %w", op, err)
	}
	return n, nil
}

func checkDtype(n *G.Node) error {
	switch n.Dtype() {
	case tensor.Float64, tensor.Float32:
		return nil
	}
	return fmt.Errorf("graph: node %s has dtype %v; only float32 and float64 are supported", n.Name(), n.Dtype())
}

// Elements returns the elements of a float32 or float64 value (tensor or scalar) as []T without
// copying, so that writing to them changes the value; a scalar is a one-element slice
// aliasing it.
func Elements[T Float](v G.Value) ([]T, error) {
	var zero T
	switch x := v.(type) {
	case *tensor.Dense:
		if x.IsView() {
			x = x.Materialize().(*tensor.Dense)
		}
		switch any(zero).(type) {
		case float64:
			if x.Dtype() == tensor.Float64 {
				return any(x.Float64s()).([]T), nil
			}
		case float32:
			if x.Dtype() == tensor.Float32 {
				return any(x.Float32s()).([]T), nil
			}
		}
		return nil, fmt.Errorf("graph: value of dtype %v where %T was expected", x.Dtype(), zero)
	case *G.F64:
		if _, ok := any(zero).(float64); ok {
			return unsafe.Slice((*T)(unsafe.Pointer(x)), 1), nil
		}
	case *G.F32:
		if _, ok := any(zero).(float32); ok {
			return unsafe.Slice((*T)(unsafe.Pointer(x)), 1), nil
		}
	}
	return nil, fmt.Errorf("graph: unsupported value %T where %T was expected", v, zero)
}

// output returns a value of the given shape to write a result into, reusing dst (the op's
// result from the previous run) when it fits, and its elements as []T. The elements are not
// cleared.
func output[T Float](dst G.Value, s tensor.Shape) (G.Value, []T) {
	var zero T
	if len(s) == 0 {
		switch any(zero).(type) {
		case float64:
			p, ok := dst.(*G.F64)
			if !ok {
				p = G.NewF64(0)
			}
			return p, unsafe.Slice((*T)(unsafe.Pointer(p)), 1)
		default:
			p, ok := dst.(*G.F32)
			if !ok {
				p = G.NewF32(0)
			}
			return p, unsafe.Slice((*T)(unsafe.Pointer(p)), 1)
		}
	}
	if d, ok := dst.(*tensor.Dense); ok && !d.IsView() && d.Shape().Eq(s) {
		if out, err := Elements[T](d); err == nil {
			return d, out
		}
	}
	data := make([]T, s.TotalSize())
	return tensor.New(tensor.WithShape(s.Clone()...), tensor.WithBacking(data)), data
}

func clear0[T Float](s []T) {
	for i := range s {
		s[i] = 0
	}
}

// run dispatches a generic kernel on the op's dtype.
func run(dt tensor.Dtype, f64 func() (G.Value, error), f32 func() (G.Value, error)) (G.Value, error) {
	switch dt {
	case tensor.Float64:
		return f64()
	case tensor.Float32:
		return f32()
	}
	return nil, fmt.Errorf("graph: unsupported dtype %v", dt)
}

func shapeString(s tensor.Shape) string { return fmt.Sprint([]int(s)) }

func isScalarShape(s tensor.Shape) bool { return len(s) == 0 }
