package graph

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
)

// unaryOp applies a scalar function elementwise.
type unaryOp struct {
	base
	kind unaryKind
	a, b float64 // the constants of ops with params (Affine's scale and shift)
}

func unary(kind unaryKind, x *G.Node, a, b float64) (*G.Node, error) {
	d, err := unaryLookup[float64](kind)
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	if x == nil {
		return nil, fmt.Errorf("graph: %s of a nil node", d.name)
	}
	if err := checkDtype(x); err != nil {
		return nil, err
	}
	params := ""
	if d.params {
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b) || math.IsInf(b, 0) {
			return nil, fmt.Errorf("graph: %s with the non-finite constant %v, %v", d.name, a, b)
		}
		params = fmt.Sprintf("%v,%v", a, b)
	}
	op := &unaryOp{base: newBase(d.name, params, x.Shape(), x), kind: kind, a: a, b: b}
	return apply(op, x)
}

// Neg returns −x.
func Neg(x *G.Node) (*G.Node, error) { return unary(kNeg, x, 0, 0) }

// Exp returns eˣ elementwise.
func Exp(x *G.Node) (*G.Node, error) { return unary(kExp, x, 0, 0) }

// Log returns the natural logarithm elementwise.
func Log(x *G.Node) (*G.Node, error) { return unary(kLog, x, 0, 0) }

// Tanh returns tanh(x) elementwise.
func Tanh(x *G.Node) (*G.Node, error) { return unary(kTanh, x, 0, 0) }

// Sigmoid returns 1/(1+e⁻ˣ) elementwise, computed without overflow.
func Sigmoid(x *G.Node) (*G.Node, error) { return unary(kSigmoid, x, 0, 0) }

// Softplus returns log(1+eˣ) elementwise, computed without overflow.
func Softplus(x *G.Node) (*G.Node, error) { return unary(kSoftplus, x, 0, 0) }

// ReLU returns max(x, 0) elementwise. Its derivative at 0 is taken as 0.
func ReLU(x *G.Node) (*G.Node, error) { return unary(kReLU, x, 0, 0) }

// Square returns x² elementwise.
func Square(x *G.Node) (*G.Node, error) { return unary(kSquare, x, 0, 0) }

// Sqrt returns √x elementwise.
func Sqrt(x *G.Node) (*G.Node, error) { return unary(kSqrt, x, 0, 0) }

// Affine returns a·x + b elementwise for constants a and b.
func Affine(x *G.Node, a, b float64) (*G.Node, error) { return unary(kAffine, x, a, b) }

// Scale returns a·x for a constant a.
func Scale(x *G.Node, a float64) (*G.Node, error) { return unary(kAffine, x, a, 0) }

// step is 1 where x > 0 and 0 elsewhere; it is treated as having zero derivative.
func step(x *G.Node) (*G.Node, error) { return unary(kStep, x, 0, 0) }

func (op *unaryOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *unaryOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return unaryDo[float64](op, dst, in[0]) },
		func() (G.Value, error) { return unaryDo[float32](op, dst, in[0]) })
}

func unaryDo[T Float](op *unaryOp, dst, xv G.Value) (G.Value, error) {
	d, err := unaryLookup[T](op.kind)
	if err != nil {
		return nil, fmt.Errorf("graph: %v: %w", op, err)
	}
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	v, y := output[T](dst, op.out)
	if len(x) != len(y) {
		return nil, fmt.Errorf("graph: %v: input has %d elements, want %d", op, len(x), len(y))
	}
	grain := elementwiseGrain
	if d.heavy {
		grain /= 16
	}
	if len(y) < 2*grain {
		d.apply(op, y, x)
	} else {
		parallelFor(len(y), grain, func(lo, hi int) { d.apply(op, y[lo:hi], x[lo:hi]) })
	}
	return v, nil
}

// apply computes y = f(x) elementwise, with the AVX2 kernel where there is one.
func (d *unaryDef[T]) apply(op *unaryOp, y, x []T) {
	n := vecUnary(d, op, y, x)
	if n < len(y) {
		d.fwd(op, y[n:], x[n:])
	}
}

// b2i converts a bool to 0 or 1 without a branch (the compiler emits SETcc).
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

func b2f(b bool) float64 { return float64(b2i(b)) }

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func (op *unaryOp) VJP(in []*G.Node, y, g *G.Node, _ []bool) ([]*G.Node, error) {
	d, err := unaryLookup[float64](op.kind) // the rules do not depend on the element type
	if err != nil {
		return nil, fmt.Errorf("graph: differentiating %v: %w", op, err)
	}
	if d.vjp == nil {
		return nil, fmt.Errorf("graph: differentiating %v: unary op kind %v has no VJP", op, op.kind)
	}
	dx, err := d.vjp(op, in[0], y, g)
	return []*G.Node{dx}, err
}

// chain returns g ⊙ f(x).
func chain(g, x *G.Node, f func(*G.Node) (*G.Node, error)) (*G.Node, error) {
	fx, err := f(x)
	if err != nil {
		return nil, err
	}
	return Mul(g, fx)
}

// then sequences a fallible construction step.
func then(n *G.Node, err error) func(func(*G.Node) (*G.Node, error)) (*G.Node, error) {
	return func(f func(*G.Node) (*G.Node, error)) (*G.Node, error) {
		if err != nil {
			return nil, err
		}
		return f(n)
	}
}

// binaryOp combines two operands elementwise with NumPy broadcasting.
type binaryOp struct {
	base
	kind       binaryKind
	sa, sb     []int // operand strides over the output's dims (0 where broadcast)
	sameShapes bool
	// chanOperand is 1 or 2 where that operand is one value per channel (1×C×1×1) and the
	// other is the whole N×C×H×W output (batch norm's statistics and parameters), else 0
	chanOperand int
}

func binary(kind binaryKind, a, b *G.Node) (*G.Node, error) {
	d, err := binaryLookup[float64](kind)
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	if a == nil || b == nil {
		return nil, fmt.Errorf("graph: %s of a nil node", d.name)
	}
	if err := checkDtype(a); err != nil {
		return nil, err
	}
	as, bs := a.Shape(), b.Shape()
	out, err := broadcastShape(as, bs)
	if err != nil {
		return nil, fmt.Errorf("graph: %s: %w", d.name, err)
	}
	op := &binaryOp{base: newBase(d.name, "", out, a, b), kind: kind, sameShapes: as.Eq(bs)}
	op.sa = broadcastStrides(aligned(as, len(out)), out)
	op.sb = broadcastStrides(aligned(bs, len(out)), out)
	switch la, lb := aligned(as, len(out)), aligned(bs, len(out)); {
	case op.sameShapes:
	case lb.Eq(out) && perChannel(la, out):
		op.chanOperand = 1
	case la.Eq(out) && perChannel(lb, out):
		op.chanOperand = 2
	}
	return apply(op, a, b)
}

// Add returns a + b with NumPy broadcasting.
func Add(a, b *G.Node) (*G.Node, error) { return binary(kAdd, a, b) }

// Sub returns a − b with NumPy broadcasting.
func Sub(a, b *G.Node) (*G.Node, error) { return binary(kSub, a, b) }

// Mul returns the elementwise product a ⊙ b with NumPy broadcasting.
func Mul(a, b *G.Node) (*G.Node, error) { return binary(kMul, a, b) }

// Div returns the elementwise quotient a / b with NumPy broadcasting.
func Div(a, b *G.Node) (*G.Node, error) { return binary(kDiv, a, b) }

func (op *binaryOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *binaryOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return binaryDo[float64](op, dst, in[0], in[1]) },
		func() (G.Value, error) { return binaryDo[float32](op, dst, in[0], in[1]) })
}

func binaryDo[T Float](op *binaryOp, dst, av, bv G.Value) (G.Value, error) {
	d, err := binaryLookup[T](op.kind)
	if err != nil {
		return nil, fmt.Errorf("graph: %v: %w", op, err)
	}
	a, err := Elements[T](av)
	if err != nil {
		return nil, err
	}
	b, err := Elements[T](bv)
	if err != nil {
		return nil, err
	}
	v, y := output[T](dst, op.out)
	if op.sameShapes {
		if len(a) != len(y) || len(b) != len(y) {
			return nil, fmt.Errorf("graph: %v: operand sizes %d, %d, want %d", op, len(a), len(b), len(y))
		}
		if len(y) < 2*elementwiseGrain {
			d.apply(y, a, b, 1, 1)
		} else {
			parallelFor(len(y), elementwiseGrain, func(lo, hi int) { d.apply(y[lo:hi], a[lo:hi], b[lo:hi], 1, 1) })
		}
		return v, nil
	}
	switch { // an operand of one element: one flat pass, no walk
	case len(b) == 1 && len(a) == len(y) && len(y) < 2*elementwiseGrain:
		d.apply(y, a, b, 1, 0)
		return v, nil
	case len(a) == 1 && len(b) == len(y) && len(y) < 2*elementwiseGrain:
		d.apply(y, a, b, 0, 1)
		return v, nil
	case len(b) == 1 && len(a) == len(y):
		parallelFor(len(y), elementwiseGrain, func(lo, hi int) { d.apply(y[lo:hi], a[lo:hi], b, 1, 0) })
		return v, nil
	case len(a) == 1 && len(b) == len(y):
		parallelFor(len(y), elementwiseGrain, func(lo, hi int) { d.apply(y[lo:hi], a, b[lo:hi], 0, 1) })
		return v, nil
	}
	if op.chanOperand != 0 {
		ch, full := b, a
		if op.chanOperand == 1 {
			ch, full = a, b
		}
		if len(ch) != op.out[1] || len(full) != len(y) {
			return nil, fmt.Errorf("graph: %v: operand sizes %d, %d, want %d and %d", op, len(a), len(b), len(y), op.out[1])
		}
		binaryPerChannel(d, y, a, b, op.out[0], op.out[1], op.out[2]*op.out[3], op.chanOperand)
		return v, nil
	}
	nd := len(op.out)
	ia, ib := 0, 0
	if nd > 0 {
		ia, ib = op.sa[nd-1], op.sb[nd-1]
	}
	walk(op.out, [][]int{rowMajorStrides(op.out), op.sa, op.sb}, []int{0, 0, 0}, func(o []int, n int) {
		d.apply(y[o[0]:o[0]+n], a[o[1]:], b[o[2]:], ia, ib)
	})
	return v, nil
}

// binaryPerChannel is binaryDo where operand which (1 or 2) holds one value per channel of
// the n×c×hw output and the other is as large as the output, without the walk's call per
// channel and image (on 1×1 and 2×2 maps it cost more than the arithmetic). It computes what
// the walk computes: maps of at least 8 elements a channel at a time with the channel's value
// as a scalar operand (the kernels for a scalar operand are not those for two arrays: Mul's
// affine form makes −0 of +0); smaller maps, which the walk computed with the scalar
// definition, as whole images against the channel values expanded over one image's maps
// (the kernels for two arrays give the scalar definition's bits).
func binaryPerChannel[T Float](d *binaryDef[T], y, a, b []T, n, c, hw, which int) {
	per := c * hw
	ch, full := b, a
	if which == 1 {
		ch, full = a, b
	}
	grain := max(1, elementwiseGrain/max(per, 1))
	if hw >= 8 {
		parallelFor(n, grain, func(lo, hi int) {
			for o := lo * c; o < hi*c; o++ {
				yo, fo, co := y[o*hw:][:hw], full[o*hw:][:hw], ch[o%c:]
				if which == 1 {
					d.apply(yo, co, fo, 0, 1)
				} else {
					d.apply(yo, fo, co, 1, 0)
				}
			}
		})
		return
	}
	pat := ch[:c] // on 1×1 maps the values are the image's pattern
	var buf *[]T
	if hw > 1 {
		buf = getWorkspace[T](per)
		pat = *buf
		for i, e := range ch[:c] {
			for j := range hw {
				pat[i*hw+j] = e
			}
		}
	}
	parallelFor(n, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			yi, fi := y[i*per:][:per], full[i*per:][:per]
			if which == 1 {
				d.apply(yi, pat, fi, 1, 1)
			} else {
				d.apply(yi, fi, pat, 1, 1)
			}
		}
	})
	if buf != nil {
		putWorkspace(buf)
	}
}

// apply computes y[i] = a[i·sa] ∘ b[i·sb] for one row, with the AVX2 kernels where they apply.
func (d *binaryDef[T]) apply(y, a, b []T, sa, sb int) {
	if vecBinary(d, y, a, b, sa, sb) {
		return
	}
	d.row(y, a, b, sa, sb)
}

// binaryRow is one row of op k for kernels of other ops (sums, convolutions) that reuse the
// table's. k is a constant there: a kind without an entry is a bug in this package.
func binaryRow[T Float](k binaryKind, y, a, b []T, sa, sb int) {
	d, err := binaryLookup[T](k)
	if err != nil {
		panic("graph: " + err.Error())
	}
	d.apply(y, a, b, sa, sb)
}

func (op *binaryOp) VJP(in []*G.Node, y, g *G.Node, need []bool) ([]*G.Node, error) {
	d, err := binaryLookup[float64](op.kind) // the rules do not depend on the element type
	if err != nil {
		return nil, fmt.Errorf("graph: differentiating %v: %w", op, err)
	}
	if d.vjp == nil {
		return nil, fmt.Errorf("graph: differentiating %v: binary op kind %v has no VJP", op, op.kind)
	}
	return d.vjp(in[0], in[1], y, g, need)
}

// reduceTo sums x (the adjoint of a broadcast result) down to the shape of like.
func reduceTo(x, like *G.Node) (*G.Node, error) {
	xs, ls := x.Shape(), like.Shape()
	if xs.Eq(ls) {
		return x, nil
	}
	if len(ls) > len(xs) {
		return nil, fmt.Errorf("graph: cannot reduce shape %v to %v", shapeString(xs), shapeString(ls))
	}
	return sumTo(x, aligned(ls, len(xs)), ls)
}

// gateOp is ReLU's vector-Jacobian product in one pass: g where x > 0, else 0. It is linear in
// g, its own VJP in g, and has zero derivative in x (almost everywhere).
type gateOp struct{ base }

func gate(x, g *G.Node) (*G.Node, error) {
	if !x.Shape().Eq(g.Shape()) {
		s, err := step(x)
		if err != nil {
			return nil, err
		}
		return Mul(g, s)
	}
	return apply(&gateOp{base: newBase("ReLUGate", "", x.Shape(), x, g)}, x, g)
}

func (op *gateOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *gateOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return gateDo[float64](op, dst, in[0], in[1]) },
		func() (G.Value, error) { return gateDo[float32](op, dst, in[0], in[1]) })
}

func gateDo[T Float](op *gateOp, dst, xv, gv G.Value) (G.Value, error) {
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	g, err := Elements[T](gv)
	if err != nil {
		return nil, err
	}
	v, y := output[T](dst, op.out)
	if len(x) != len(y) || len(g) != len(y) {
		return nil, fmt.Errorf("graph: %v: operand sizes %d, %d, want %d", op, len(x), len(g), len(y))
	}
	if len(y) < 2*elementwiseGrain {
		gateKernel(y, x, g)
	} else {
		parallelFor(len(y), elementwiseGrain, func(lo, hi int) { gateKernel(y[lo:hi], x[lo:hi], g[lo:hi]) })
	}
	return v, nil
}

func gateKernel[T Float](y, x, g []T) {
	if vecGate(y, x, g) {
		return
	}
	gateScalar(y, x, g)
}

func gateScalar[T Float](y, x, g []T) {
	x, g = x[:len(y)], g[:len(y)]
	for i := range y {
		// branch-free select: a mispredicted branch per element costs more than the multiply
		y[i] = g[i] * T(b2i(x[i] > 0))
	}
}

func (op *gateOp) VJP(in []*G.Node, _, u *G.Node, need []bool) ([]*G.Node, error) {
	out := make([]*G.Node, 2)
	if need[1] {
		var err error
		if out[1], err = gate(in[0], u); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// elementwiseGrain is the number of elements worth a goroutine of their own.
const elementwiseGrain = 1 << 15
