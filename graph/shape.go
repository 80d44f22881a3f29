package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// reshapeOp copies its input into a new shape. It copies rather than shares memory so that no
// executor can see two nodes alias one buffer (gorgonia's own Reshape shares, which corrupts
// TapeMachine results).
type reshapeOp struct {
	base
	from tensor.Shape
}

// Reshape returns x with a new shape of the same size; one dim may be −1 and is inferred.
// An empty shape makes a scalar of a one-element x.
func Reshape(x *G.Node, shape ...int) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: Reshape of a nil node")
	}
	from := x.Shape()
	to := tensor.Shape(append([]int(nil), shape...))
	infer, known := -1, 1
	for i, d := range to {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d <= 0:
			return nil, fmt.Errorf("graph: Reshape %v to %v: bad dim %d", shapeString(from), shape, d)
		default:
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || from.TotalSize()%known != 0 {
			return nil, fmt.Errorf("graph: Reshape %v to %v: size does not divide", shapeString(from), shape)
		}
		to[infer] = from.TotalSize() / known
	}
	if to.TotalSize() != from.TotalSize() {
		return nil, fmt.Errorf("graph: Reshape %v (%d elements) to %v (%d elements)", shapeString(from), from.TotalSize(), shapeString(to), to.TotalSize())
	}
	op := &reshapeOp{base: newBase("Reshape", shapeString(to), to, x), from: from}
	return apply(op, x)
}

func (op *reshapeOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *reshapeOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return copyDo[float64](op.out, dst, in[0]) },
		func() (G.Value, error) { return copyDo[float32](op.out, dst, in[0]) })
}

func copyDo[T Float](out tensor.Shape, dst, xv G.Value) (G.Value, error) {
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	v, y := output[T](dst, out)
	if len(x) != len(y) {
		return nil, fmt.Errorf("graph: copy of %d elements into %d", len(x), len(y))
	}
	copy(y, x)
	return v, nil
}

func (op *reshapeOp) VJP(in []*G.Node, _, g *G.Node, _ []bool) ([]*G.Node, error) {
	r, err := Reshape(g, op.from...)
	return []*G.Node{r}, err
}

// transposeOp permutes dims: output dim d is input dim perm[d].
type transposeOp struct {
	base
	perm []int
	src  tensor.Shape
}

// Transpose permutes the dims of x: output dim d is input dim perm[d]. With no perm it
// reverses the dims (a matrix transpose for 2-D x).
func Transpose(x *G.Node, perm ...int) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: Transpose of a nil node")
	}
	s := x.Shape()
	nd := len(s)
	if len(perm) == 0 {
		for i := nd - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
	}
	if len(perm) != nd {
		return nil, fmt.Errorf("graph: Transpose of shape %v with permutation %v", shapeString(s), perm)
	}
	seen := make([]bool, nd)
	out := make(tensor.Shape, nd)
	identity := true
	for d, p := range perm {
		if p < 0 || p >= nd || seen[p] {
			return nil, fmt.Errorf("graph: %v is not a permutation of %d dims", perm, nd)
		}
		seen[p] = true
		out[d] = s[p]
		identity = identity && p == d
	}
	if identity {
		return Reshape(x, s...)
	}
	op := &transposeOp{base: newBase("Transpose", fmt.Sprint(perm), out, x), perm: append([]int(nil), perm...), src: s}
	return apply(op, x)
}

func (op *transposeOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *transposeOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return transposeDo[float64](op, dst, in[0]) },
		func() (G.Value, error) { return transposeDo[float32](op, dst, in[0]) })
}

func transposeDo[T Float](op *transposeOp, dst, xv G.Value) (G.Value, error) {
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	if len(x) != op.src.TotalSize() {
		return nil, fmt.Errorf("graph: %v: input has %d elements, want %d", op, len(x), op.src.TotalSize())
	}
	v, y := output[T](dst, op.out)
	srcStrides := rowMajorStrides(op.src)
	st := make([]int, len(op.perm))
	for d, p := range op.perm {
		st[d] = srcStrides[p]
	}
	inner := st[len(st)-1]
	walk(op.out, [][]int{rowMajorStrides(op.out), st}, []int{0, 0}, func(o []int, n int) {
		row := y[o[0] : o[0]+n]
		if inner == 1 {
			copy(row, x[o[1]:])
			return
		}
		j := o[1]
		for i := range row {
			row[i] = x[j]
			j += inner
		}
	})
	return v, nil
}

func (op *transposeOp) VJP(in []*G.Node, _, g *G.Node, _ []bool) ([]*G.Node, error) {
	inv := make([]int, len(op.perm))
	for d, p := range op.perm {
		inv[p] = d
	}
	t, err := Transpose(g, inv...)
	return []*G.Node{t}, err
}

// concatOp joins its inputs along one axis.
type concatOp struct {
	base
	axis  int
	sizes []int
	inner int // product of the dims after axis
}

// Concat joins xs along axis; all other dims must agree.
func Concat(axis int, xs ...*G.Node) (*G.Node, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("graph: Concat of nothing")
	}
	for _, x := range xs {
		if x == nil {
			return nil, fmt.Errorf("graph: Concat of a nil node")
		}
	}
	s0 := xs[0].Shape()
	nd := len(s0)
	if axis < 0 {
		axis += nd
	}
	if axis < 0 || axis >= nd {
		return nil, fmt.Errorf("graph: Concat axis %d out of range for shape %v", axis, shapeString(s0))
	}
	out := s0.Clone()
	out[axis] = 0
	sizes := make([]int, len(xs))
	for k, x := range xs {
		s := x.Shape()
		if len(s) != nd {
			return nil, fmt.Errorf("graph: Concat of shapes %v and %v", shapeString(s0), shapeString(s))
		}
		for d := range s {
			if d != axis && s[d] != s0[d] {
				return nil, fmt.Errorf("graph: Concat along %d of shapes %v and %v", axis, shapeString(s0), shapeString(s))
			}
		}
		sizes[k] = s[axis]
		out[axis] += s[axis]
	}
	inner := 1
	for _, d := range s0[axis+1:] {
		inner *= d
	}
	op := &concatOp{base: newBase("Concat", fmt.Sprint(axis, sizes), out, xs...), axis: axis, sizes: sizes, inner: inner}
	return apply(op, xs...)
}

func (op *concatOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *concatOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return concatDo[float64](op, dst, in) },
		func() (G.Value, error) { return concatDo[float32](op, dst, in) })
}

func concatDo[T Float](op *concatOp, dst G.Value, in []G.Value) (G.Value, error) {
	v, y := output[T](dst, op.out)
	total := op.out[op.axis] * op.inner
	outer := len(y) / total
	off := 0
	for k, xv := range in {
		x, err := Elements[T](xv)
		if err != nil {
			return nil, err
		}
		blk := op.sizes[k] * op.inner
		if len(x) != outer*blk {
			return nil, fmt.Errorf("graph: %v: input %d has %d elements, want %d", op, k, len(x), outer*blk)
		}
		for o := 0; o < outer; o++ {
			copy(y[o*total+off:o*total+off+blk], x[o*blk:(o+1)*blk])
		}
		off += blk
	}
	return v, nil
}

func (op *concatOp) VJP(in []*G.Node, _, g *G.Node, need []bool) ([]*G.Node, error) {
	out := make([]*G.Node, len(in))
	start := 0
	for k := range in {
		if need[k] {
			r := make([]S, op.axis+1)
			for d := 0; d < op.axis; d++ {
				r[d] = S{0, op.out[d]}
			}
			r[op.axis] = S{start, start + op.sizes[k]}
			var err error
			if out[k], err = Slice(g, r...); err != nil {
				return nil, err
			}
		}
		start += op.sizes[k]
	}
	return out, nil
}

// S is the half-open index range [Start, End) along one axis, for Slice.
type S struct{ Start, End int }

// sliceOp copies a box out of its input; padOp is its adjoint, embedding its input in zeros.
type sliceOp struct {
	base
	starts []int
	full   tensor.Shape // the shape of the larger array
	box    tensor.Shape // the shape of the smaller one
	pad    bool
}

// Slice returns the box of x given by one range per leading axis; axes without a range are
// taken whole. The result keeps x's rank.
func Slice(x *G.Node, ranges ...S) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: Slice of a nil node")
	}
	s := x.Shape()
	if len(ranges) > len(s) {
		return nil, fmt.Errorf("graph: %d ranges for shape %v", len(ranges), shapeString(s))
	}
	starts := make([]int, len(s))
	out := s.Clone()
	for d, r := range ranges {
		if r.Start < 0 || r.End > s[d] || r.Start >= r.End {
			return nil, fmt.Errorf("graph: range [%d,%d) out of bounds for axis %d of shape %v", r.Start, r.End, d, shapeString(s))
		}
		starts[d] = r.Start
		out[d] = r.End - r.Start
	}
	if out.Eq(s) {
		return Reshape(x, s...)
	}
	op := &sliceOp{base: newBase("Slice", fmt.Sprint(starts), out, x), starts: starts, full: s, box: out}
	return apply(op, x)
}

func pad(x *G.Node, starts []int, full tensor.Shape) (*G.Node, error) {
	op := &sliceOp{base: newBase("Pad", fmt.Sprint(starts), full, x), starts: append([]int(nil), starts...), full: full.Clone(), box: x.Shape(), pad: true}
	return apply(op, x)
}

func (op *sliceOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *sliceOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return sliceDo[float64](op, dst, in[0]) },
		func() (G.Value, error) { return sliceDo[float32](op, dst, in[0]) })
}

func sliceDo[T Float](op *sliceOp, dst, xv G.Value) (G.Value, error) {
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	v, y := output[T](dst, op.out)
	box := op.box
	want := op.full.TotalSize()
	if op.pad {
		want = box.TotalSize()
	}
	if len(x) != want {
		return nil, fmt.Errorf("graph: %v: input has %d elements, want %d", op, len(x), want)
	}
	if op.pad {
		clear0(y)
	}
	fs := rowMajorStrides(op.full)
	base := 0
	for d, s := range op.starts {
		base += s * fs[d]
	}
	walk(box, [][]int{rowMajorStrides(box), fs}, []int{0, base}, func(o []int, n int) {
		if op.pad {
			copy(y[o[1]:o[1]+n], x[o[0]:o[0]+n])
		} else {
			copy(y[o[0]:o[0]+n], x[o[1]:o[1]+n])
		}
	})
	return v, nil
}

func (op *sliceOp) VJP(in []*G.Node, _, g *G.Node, _ []bool) ([]*G.Node, error) {
	if op.pad {
		s := in[0].Shape()
		r := make([]S, len(s))
		for d := range s {
			r[d] = S{op.starts[d], op.starts[d] + s[d]}
		}
		n, err := Slice(g, r...)
		return []*G.Node{n}, err
	}
	n, err := pad(g, op.starts, op.full)
	return []*G.Node{n}, err
}
