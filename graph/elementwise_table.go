package graph

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/graph/internal/vec"
	G "gorgonia.org/gorgonia"
)

// Elementwise ops are declared in two tables, unaryTable and binaryTable: one entry per op
// holds everything the rest of the package needs to know about it — its name, its forward
// kernels, its VJP, how fusion treats it and its gradient-check cases. Nothing else switches
// over the kinds, so an op cannot be half added: a kind without an entry is an error naming it
// wherever it is run or differentiated, never a stale value or a zero gradient, and
// TestElementwiseTablesAreComplete fails. The tables are generic in the element type so that
// each kernel is written once and compiled for float32 and float64 alike.

// unaryKind indexes unaryTable. The order is the order of the ops in OpCases.
type unaryKind int

const (
	kNeg unaryKind = iota
	kAffine
	kReLU
	kTanh
	kSigmoid
	kSoftplus
	kExp
	kLog
	kSquare
	kSqrt
	kStep
	numUnary
)

// unaryDef declares one elementwise function of one input.
type unaryDef[T Float] struct {
	name string
	// fwd sets y[i] = f(x[i]) for i < len(y).
	fwd func(op *unaryOp, y, x []T)
	// vec32, where set, computes the same for float32 over the first n elements (a multiple of
	// 8) with the AVX2 kernels of graph/internal/vec; fwd finishes the tail.
	vec32 func(op *unaryOp, y, x []float32, n int)
	// params: the op uses the constants a and b, which are then part of its name and hash.
	params bool
	// heavy: a transcendental, tens of cycles per element, so smaller pieces are worth a core.
	heavy bool
	// cheap: at most a multiply-add per element, so a fused kernel recomputes it for each of
	// its consumers rather than writing it out and reading it back.
	cheap bool
	// vjp is the adjoint of the input x given the output y and its adjoint g, built of this
	// package's ops so that it is differentiable again; nil with a nil error when it is
	// identically zero.
	vjp func(op *unaryOp, x, y, g *G.Node) (*G.Node, error)
	// checks are the op's gradient-check cases (OpCases).
	checks []OpCase
	// internal: not exported. Its checks run after all others, because CheckOps draws each
	// case's inputs from its position in the list: adding an internal op then leaves the
	// inputs of every exported op as they were.
	internal bool
}

func unaryTable[T Float]() [numUnary]unaryDef[T] {
	return [numUnary]unaryDef[T]{
		kNeg: {
			name: "Neg",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					y[i] = -v
				}
			},
			vec32: func(_ *unaryOp, y, x []float32, n int) { vec.AffineF32(p32(y), p32(x), n, -1, 0) },
			cheap: true,
			vjp:   func(_ *unaryOp, _, _, g *G.Node) (*G.Node, error) { return Neg(g) },
			checks: []OpCase{
				{Name: "Neg", Inputs: inputs(shaped(normal, 5)), F: one(Neg)},
			},
		},
		kAffine: {
			name: "Affine",
			fwd: func(op *unaryOp, y, x []T) {
				a, b := T(op.a), T(op.b)
				for i, v := range x[:len(y)] {
					y[i] = a*v + b
				}
			},
			vec32: func(op *unaryOp, y, x []float32, n int) {
				vec.AffineF32(p32(y), p32(x), n, float32(op.a), float32(op.b))
			},
			params: true,
			cheap:  true,
			vjp: func(op *unaryOp, _, _, g *G.Node) (*G.Node, error) {
				if op.a == 0 {
					return nil, nil
				}
				return Scale(g, op.a)
			},
			checks: []OpCase{
				{Name: "Affine", Inputs: inputs(shaped(normal, 5)), F: one(func(x *G.Node) (*G.Node, error) { return Affine(x, -1.5, 0.25) })},
			},
		},
		kReLU: {
			name: "ReLU",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					y[i] = max(v, 0) // branch-free: a branch mispredicts on half of random inputs
				}
			},
			vec32: func(_ *unaryOp, y, x []float32, n int) { vec.ReluF32(p32(y), p32(x), n) },
			cheap: true,
			vjp:   func(_ *unaryOp, x, _, g *G.Node) (*G.Node, error) { return gate(x, g) },
			checks: []OpCase{
				{Name: "ReLU", Inputs: inputs(shaped(awayFromZero, 3, 4)), F: one(ReLU)},
			},
		},
		kTanh: {
			name: "Tanh",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					y[i] = T(math.Tanh(float64(v)))
				}
			},
			heavy: true,
			vjp: func(_ *unaryOp, _, y, g *G.Node) (*G.Node, error) { // (1 − y²)·g
				return chain(g, y, func(y *G.Node) (*G.Node, error) {
					return then(Square(y))(func(s *G.Node) (*G.Node, error) { return Affine(s, -1, 1) })
				})
			},
			checks: []OpCase{
				{Name: "Tanh", Inputs: inputs(shaped(normal, 3, 4)), F: one(Tanh)},
			},
		},
		kSigmoid: {
			name: "Sigmoid",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					y[i] = T(sigmoid(float64(v)))
				}
			},
			heavy: true,
			vjp: func(_ *unaryOp, _, y, g *G.Node) (*G.Node, error) { // y(1 − y)·g
				return chain(g, y, func(y *G.Node) (*G.Node, error) {
					return then(Affine(y, -1, 1))(func(s *G.Node) (*G.Node, error) { return Mul(y, s) })
				})
			},
			checks: []OpCase{
				{Name: "Sigmoid", Inputs: inputs(shaped(normal, 3, 4)), F: one(Sigmoid)},
			},
		},
		kSoftplus: {
			name: "Softplus",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					f := float64(v)
					y[i] = T(math.Log1p(math.Exp(-math.Abs(f))) + math.Max(f, 0))
				}
			},
			heavy: true,
			vjp:   func(_ *unaryOp, x, _, g *G.Node) (*G.Node, error) { return chain(g, x, Sigmoid) }, // σ(x)·g
			checks: []OpCase{
				{Name: "Softplus", Inputs: inputs(shaped(normal, 3, 4)), F: one(Softplus)},
			},
		},
		kExp: {
			name: "Exp",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					y[i] = T(math.Exp(float64(v)))
				}
			},
			heavy: true,
			vjp:   func(_ *unaryOp, _, y, g *G.Node) (*G.Node, error) { return Mul(g, y) },
			checks: []OpCase{
				{Name: "Exp", Inputs: inputs(shaped(normal, 3, 4)), F: one(Exp)},
			},
		},
		kLog: {
			name: "Log",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					y[i] = T(math.Log(float64(v)))
				}
			},
			heavy: true,
			vjp:   func(_ *unaryOp, x, _, g *G.Node) (*G.Node, error) { return Div(g, x) },
			checks: []OpCase{
				{Name: "Log", Inputs: inputs(shaped(positive, 3, 4)), F: one(Log)},
			},
		},
		kSquare: {
			name: "Square",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					y[i] = v * v
				}
			},
			vec32: func(_ *unaryOp, y, x []float32, n int) { vec.MulF32(p32(y), p32(x), p32(x), n) },
			cheap: true,
			vjp: func(_ *unaryOp, x, _, g *G.Node) (*G.Node, error) { // 2x·g
				return chain(g, x, func(x *G.Node) (*G.Node, error) { return Scale(x, 2) })
			},
			checks: []OpCase{
				{Name: "Square", Inputs: inputs(shaped(normal, 3, 4)), F: one(Square)},
			},
		},
		kSqrt: {
			name: "Sqrt",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					y[i] = T(math.Sqrt(float64(v)))
				}
			},
			heavy: true,
			vjp: func(_ *unaryOp, _, y, g *G.Node) (*G.Node, error) { // g / (2y)
				return then(Scale(y, 2))(func(twoY *G.Node) (*G.Node, error) { return Div(g, twoY) })
			},
			checks: []OpCase{
				{Name: "Sqrt", Inputs: inputs(shaped(positive, 3, 4)), F: one(Sqrt)},
			},
		},
		kStep: { // 1 where x > 0, else 0: the derivative of ReLU, itself with zero derivative
			name: "Step",
			fwd: func(_ *unaryOp, y, x []T) {
				for i, v := range x[:len(y)] {
					y[i] = T(b2f(v > 0))
				}
			},
			vec32: func(_ *unaryOp, y, x []float32, n int) { vec.StepF32(p32(y), p32(x), n) },
			cheap: true,
			vjp:   func(_ *unaryOp, _, _, _ *G.Node) (*G.Node, error) { return nil, nil },
			checks: []OpCase{
				{Name: "Step", Inputs: inputs(shaped(awayFromZero, 3, 4)), F: one(step)},
			},
			internal: true,
		},
	}
}

// binaryKind indexes binaryTable. The order is the order of the ops in OpCases.
type binaryKind int

const (
	kAdd binaryKind = iota
	kSub
	kMul
	kDiv
	numBinary
)

// binaryDef declares one elementwise function of two operands, broadcast NumPy's way.
type binaryDef[T Float] struct {
	name string
	// row sets y[i] = a[i·sa] ∘ b[i·sb] for i < len(y). A stride is 1 for an operand read
	// along the row, 0 for one element repeated; the pairs (1, 1), (1, 0) and (0, 1) are worth
	// a loop each, the rest take one general loop.
	row func(y, a, b []T, sa, sb int)
	// vec32, where set, is the AVX2 kernel of graph/internal/vec for float32 rows with strides
	// (1, 1), over n elements (a multiple of 8).
	vec32 func(y, a, b *float32, n int)
	// affine, where set, writes the op with one operand a single element c (the left one when
	// left) as α·x + β, so that vec.AffineF32 computes rows with strides (1, 0) and (0, 1).
	affine func(c float32, left bool) (alpha, beta float32)
	// scalar32 and rscalar32, where set, are AVX2 kernels for rows with strides (1, 0) (y = a ∘ c)
	// and (0, 1) (y = c ∘ b) of ops without an affine form, over n elements (a multiple of 8)
	scalar32  func(y, x *float32, c float32, n int)
	rscalar32 func(y *float32, c float32, x *float32, n int)
	// cheap: as for unaryDef.
	cheap bool
	// vjp returns the adjoints of a and b (for those with need set) given the output y and its
	// adjoint g, reduced to the operands' shapes; an entry may be nil for a zero adjoint.
	vjp func(a, b, y, g *G.Node, need []bool) ([]*G.Node, error)
	// checks are the op's gradient-check cases (OpCases).
	checks []OpCase
}

func binaryTable[T Float]() [numBinary]binaryDef[T] {
	return [numBinary]binaryDef[T]{
		kAdd: {
			name: "Add",
			row: func(y, a, b []T, sa, sb int) {
				switch {
				case sa == 1 && sb == 1:
					a, b = a[:len(y)], b[:len(y)]
					for i := range y {
						y[i] = a[i] + b[i]
					}
				case sa == 1 && sb == 0:
					a, c := a[:len(y)], b[0]
					for i := range y {
						y[i] = a[i] + c
					}
				case sa == 0 && sb == 1:
					c, b := a[0], b[:len(y)]
					for i := range y {
						y[i] = c + b[i]
					}
				default:
					for i := range y {
						y[i] = a[i*sa] + b[i*sb]
					}
				}
			},
			vec32:  vec.AddF32,
			affine: func(c float32, _ bool) (float32, float32) { return 1, c },
			cheap:  true,
			vjp:    func(a, b, _, g *G.Node, need []bool) ([]*G.Node, error) { return addVJP(a, b, g, need, false) },
			checks: []OpCase{
				{Name: "Add (broadcast row)", Inputs: inputs(shaped(normal, 3, 4), shaped(normal, 4)), F: two(Add)},
			},
		},
		kSub: {
			name: "Sub",
			row: func(y, a, b []T, sa, sb int) {
				switch {
				case sa == 1 && sb == 1:
					a, b = a[:len(y)], b[:len(y)]
					for i := range y {
						y[i] = a[i] - b[i]
					}
				case sa == 1 && sb == 0:
					a, c := a[:len(y)], b[0]
					for i := range y {
						y[i] = a[i] - c
					}
				case sa == 0 && sb == 1:
					c, b := a[0], b[:len(y)]
					for i := range y {
						y[i] = c - b[i]
					}
				default:
					for i := range y {
						y[i] = a[i*sa] - b[i*sb]
					}
				}
			},
			vec32: vec.SubF32,
			affine: func(c float32, left bool) (float32, float32) {
				if left {
					return -1, c
				}
				return 1, -c
			},
			cheap: true,
			vjp:   func(a, b, _, g *G.Node, need []bool) ([]*G.Node, error) { return addVJP(a, b, g, need, true) },
			checks: []OpCase{
				{Name: "Sub (broadcast column)", Inputs: inputs(shaped(normal, 3, 4), shaped(normal, 3, 1)), F: two(Sub)},
			},
		},
		kMul: {
			name: "Mul",
			row: func(y, a, b []T, sa, sb int) {
				switch {
				case sa == 1 && sb == 1:
					a, b = a[:len(y)], b[:len(y)]
					for i := range y {
						y[i] = a[i] * b[i]
					}
				case sa == 1 && sb == 0:
					a, c := a[:len(y)], b[0]
					for i := range y {
						y[i] = a[i] * c
					}
				case sa == 0 && sb == 1:
					c, b := a[0], b[:len(y)]
					for i := range y {
						y[i] = c * b[i]
					}
				default:
					for i := range y {
						y[i] = a[i*sa] * b[i*sb]
					}
				}
			},
			vec32:  vec.MulF32,
			affine: func(c float32, _ bool) (float32, float32) { return c, 0 },
			cheap:  true,
			vjp: func(a, b, _, g *G.Node, need []bool) ([]*G.Node, error) {
				out := make([]*G.Node, 2)
				var err error
				if need[0] {
					if out[0], err = then(Mul(g, b))(func(p *G.Node) (*G.Node, error) { return reduceTo(p, a) }); err != nil {
						return nil, err
					}
				}
				if need[1] {
					out[1], err = then(Mul(g, a))(func(p *G.Node) (*G.Node, error) { return reduceTo(p, b) })
				}
				return out, err
			},
			checks: []OpCase{
				{Name: "Mul (broadcast 4-D)", Inputs: inputs(shaped(normal, 2, 3, 2, 2), shaped(normal, 1, 3, 1, 1)), F: two(Mul)},
				{Name: "Mul (scalar)", Inputs: inputs(shaped(normal, 3, 2), shaped(normal)), F: two(Mul)},
			},
		},
		kDiv: {
			name: "Div",
			row: func(y, a, b []T, sa, sb int) {
				switch {
				case sa == 1 && sb == 1:
					a, b = a[:len(y)], b[:len(y)]
					for i := range y {
						y[i] = a[i] / b[i]
					}
				case sa == 1 && sb == 0:
					a, c := a[:len(y)], b[0]
					for i := range y {
						y[i] = a[i] / c
					}
				case sa == 0 && sb == 1:
					c, b := a[0], b[:len(y)]
					for i := range y {
						y[i] = c / b[i]
					}
				default:
					for i := range y {
						y[i] = a[i*sa] / b[i*sb]
					}
				}
			},
			// no affine form: a·(1/c) is not always a/c to the last bit
			vec32: vec.DivF32, scalar32: vec.DivScalarF32, rscalar32: vec.ScalarDivF32,
			vjp: func(a, b, y, g *G.Node, need []bool) ([]*G.Node, error) { // ∂(a/b)/∂a = 1/b, ∂(a/b)/∂b = −y/b
				out := make([]*G.Node, 2)
				var err error
				if need[0] {
					if out[0], err = then(Div(g, b))(func(p *G.Node) (*G.Node, error) { return reduceTo(p, a) }); err != nil {
						return nil, err
					}
				}
				if need[1] {
					var gy, q, r *G.Node
					if gy, err = Mul(g, y); err != nil {
						return nil, err
					}
					if q, err = Div(gy, b); err != nil {
						return nil, err
					}
					if r, err = reduceTo(q, b); err != nil {
						return nil, err
					}
					out[1], err = Neg(r)
				}
				return out, err
			},
			checks: []OpCase{
				{Name: "Div (broadcast)", Inputs: inputs(shaped(normal, 3, 4), shaped(positive, 1, 4)), F: two(Div)},
			},
		},
	}
}

// addVJP is the VJP of a + b, or of a − b when sub is set.
func addVJP(a, b, g *G.Node, need []bool, sub bool) ([]*G.Node, error) {
	out := make([]*G.Node, 2)
	var err error
	if need[0] {
		if out[0], err = reduceTo(g, a); err != nil {
			return nil, err
		}
	}
	if need[1] {
		if out[1], err = reduceTo(g, b); err != nil {
			return nil, err
		}
		if sub {
			out[1], err = Neg(out[1])
		}
	}
	return out, err
}

// The tables, one per element type. They are filled by init rather than by their
// declarations because the VJPs and checks call the constructors, which read the tables: Go
// rejects that cycle in a variable's initializer.
var (
	unaryF64  [numUnary]unaryDef[float64]
	unaryF32  [numUnary]unaryDef[float32]
	binaryF64 [numBinary]binaryDef[float64]
	binaryF32 [numBinary]binaryDef[float32]
)

func init() {
	unaryF64, unaryF32 = unaryTable[float64](), unaryTable[float32]()
	binaryF64, binaryF32 = binaryTable[float64](), binaryTable[float32]()
}

func unaryDefs[T Float]() *[numUnary]unaryDef[T] {
	if t, ok := any(&unaryF64).(*[numUnary]unaryDef[T]); ok {
		return t
	}
	t, _ := any(&unaryF32).(*[numUnary]unaryDef[T])
	return t
}

func binaryDefs[T Float]() *[numBinary]binaryDef[T] {
	if t, ok := any(&binaryF64).(*[numBinary]binaryDef[T]); ok {
		return t
	}
	t, _ := any(&binaryF32).(*[numBinary]binaryDef[T])
	return t
}

// unaryLookup returns the entry of kind k for element type T, or an error naming the kind if
// the table has no kernel for it.
func unaryLookup[T Float](k unaryKind) (*unaryDef[T], error) {
	t := unaryDefs[T]()
	if t == nil || k < 0 || k >= numUnary || t[k].fwd == nil {
		var zero T
		return nil, fmt.Errorf("unary op kind %v has no %T kernel", k, zero)
	}
	return &t[k], nil
}

// binaryLookup is unaryLookup for binary kinds.
func binaryLookup[T Float](k binaryKind) (*binaryDef[T], error) {
	t := binaryDefs[T]()
	if t == nil || k < 0 || k >= numBinary || t[k].row == nil {
		var zero T
		return nil, fmt.Errorf("binary op kind %v has no %T kernel", k, zero)
	}
	return &t[k], nil
}

func (k unaryKind) String() string {
	if k >= 0 && k < numUnary && unaryF64[k].name != "" {
		return unaryF64[k].name
	}
	return fmt.Sprintf("unaryKind(%d)", int(k))
}

func (k binaryKind) String() string {
	if k >= 0 && k < numBinary && binaryF64[k].name != "" {
		return binaryF64[k].name
	}
	return fmt.Sprintf("binaryKind(%d)", int(k))
}

// known reports whether both element types have kernels for k.
func (k unaryKind) known() bool {
	_, e64 := unaryLookup[float64](k)
	_, e32 := unaryLookup[float32](k)
	return e64 == nil && e32 == nil
}

func (k binaryKind) known() bool {
	_, e64 := binaryLookup[float64](k)
	_, e32 := binaryLookup[float32](k)
	return e64 == nil && e32 == nil
}

// elementwiseCases are the check cases of the tables, binary ops first, the internal ones or
// the others.
func elementwiseCases(internal bool) []OpCase {
	var out []OpCase
	for _, d := range binaryF64 {
		if !internal {
			out = append(out, d.checks...)
		}
	}
	for _, d := range unaryF64 {
		if d.internal == internal {
			out = append(out, d.checks...)
		}
	}
	return out
}
