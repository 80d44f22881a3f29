package graph

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/graph/internal/vec"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// sumToOp sums its input over the dims where keep (the input's rank) is 1. The result holds
// the same elements as an array of shape keep; its node shape out may drop those unit dims.
type sumToOp struct {
	base
	src, keep tensor.Shape
}

func sumTo(x *G.Node, keep, out tensor.Shape) (*G.Node, error) {
	src := x.Shape()
	if len(keep) != len(src) || keep.TotalSize() != out.TotalSize() {
		return nil, fmt.Errorf("graph: sumTo %v→%v as %v: bad shapes", shapeString(src), shapeString(out), shapeString(keep))
	}
	for i := range keep {
		if keep[i] != 1 && keep[i] != src[i] {
			return nil, fmt.Errorf("graph: cannot sum shape %v to %v", shapeString(src), shapeString(keep))
		}
	}
	op := &sumToOp{base: newBase("SumTo", shapeString(keep), out, x), src: src, keep: keep.Clone()}
	return apply(op, x)
}

func (op *sumToOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *sumToOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return sumToDo[float64](op, dst, in[0]) },
		func() (G.Value, error) { return sumToDo[float32](op, dst, in[0]) })
}

func sumToDo[T Float](op *sumToOp, dst, xv G.Value) (G.Value, error) {
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	v, y := output[T](dst, op.out)
	if len(x) != op.src.TotalSize() {
		return nil, fmt.Errorf("graph: %v: input has %d elements, want %d", op, len(x), op.src.TotalSize())
	}
	if len(y) == 1 {
		y[0] = sum(x)
		return v, nil
	}
	clear0(y)
	if perChannel(op.keep, op.src) {
		sumPerChannel(x, y, op.src[0], op.src[1], op.src[2]*op.src[3])
		return v, nil
	}
	if len(op.src) == 2 && op.keep[0] == 1 && op.keep[1] == op.src[1] {
		sumColumns(x, y, op.src[0])
		return v, nil
	}
	sumToWalk(op.keep, op.src, x, y)
	return v, nil
}

// narrowColumns is the row width below which sumColumns adds in a plain loop: a call per row
// into the vector kernels costs more than a row of 16 additions (a bias's gradient over a
// batch of a narrow layer's rows).
const narrowColumns = 32

// sumColumns adds the rows rows of x into y (cleared), in row order, as sumToWalk does for a
// 2-D sum over the first dim: each element of y is ((0 + x₀) + x₁) + … either way.
func sumColumns[T Float](x, y []T, rows int) {
	c := len(y)
	if c >= narrowColumns {
		for i := 0; i < rows; i++ {
			binaryRow(kAdd, y, y, x[i*c:][:c], 1, 1)
		}
		return
	}
	for i := 0; i < rows; i++ {
		row := x[i*c:][:c]
		for j := range y {
			y[j] += row[j]
		}
	}
}

// sumToWalk adds x (shape src) into y (shape keep, cleared), walking x's rows.
func sumToWalk[T Float](keep, src tensor.Shape, x, y []T) {
	ks := broadcastStrides(keep, src)
	nd := len(src)
	inner := ks[nd-1]
	walk(src, [][]int{rowMajorStrides(src), ks}, []int{0, 0}, func(o []int, n int) {
		row := x[o[0] : o[0]+n]
		if inner == 0 {
			y[o[1]] += sumSerial(row)
			return
		}
		out := y[o[1] : o[1]+n]
		binaryRow(kAdd, out, out, row, 1, 1)
	})
}

// perChannel reports whether keep sums an N×C×H×W src to its C channels (a batch norm's
// statistics and their gradients).
func perChannel(keep, src tensor.Shape) bool {
	return len(src) == 4 && len(keep) == 4 && keep[0] == 1 && keep[1] == src[1] && keep[2] == 1 && keep[3] == 1
}

// sumPerChannel adds each plane of x (n × c planes of hw elements) to its channel's element
// of y, as sumToDo's walk does — images in order, each plane summed by sumSerial — without a
// call through the walk per plane, which on ResNet's 2×2 and 1×1 maps cost more than the sums.
// The result does not depend on the number of cores.
func sumPerChannel[T Float](x, y []T, n, c, hw int) {
	// channels split across cores: each channel's planes are still added image after image
	parallelFor(c, max(1, elementwiseGrain/max(n*hw, 1)), func(lo, hi int) {
		sumChannels(x, y, n, c, hw, lo, hi)
	})
}

// sumChannels is sumPerChannel for channels lo … hi−1.
func sumChannels[T Float](x, y []T, n, c, hw, lo, hi int) {
	y = y[lo:hi]
	for i := 0; i < n; i++ {
		img := x[(i*c+lo)*hw:][:(hi-lo)*hw]
		switch {
		case hw == 1:
			for ch, e := range img {
				y[ch] += e + 0 // sumSerial of one element: e + 0 (−0 becomes +0)
			}
		case hw < 8: // sumSerial's scalar path: one chain from zero, then + 0
			for ch := range y {
				var s T
				for _, e := range img[ch*hw:][:hw] {
					s += e
				}
				y[ch] += s + 0
			}
		default:
			if y32, ok := f32s(y); ok && hw%8 == 0 {
				// sumSerial's vector path without a call per plane: the same sums
				vec.SumPlanesF32(p32(y32), p32(any(img).([]float32)), hi-lo, hw)
				continue
			}
			for ch := range y {
				y[ch] += sumSerial(img[ch*hw:][:hw])
			}
		}
	}
}

func (op *sumToOp) VJP(in []*G.Node, _, g *G.Node, _ []bool) ([]*G.Node, error) {
	b, err := broadcastTo(g, op.keep, op.src)
	return []*G.Node{b}, err
}

// broadcastToOp repeats its input, read as an array of shape keep (of the output's rank),
// along the dims where keep is 1.
type broadcastToOp struct {
	base
	keep tensor.Shape
}

func broadcastTo(x *G.Node, keep, out tensor.Shape) (*G.Node, error) {
	if len(keep) != len(out) || keep.TotalSize() != x.Shape().TotalSize() {
		return nil, fmt.Errorf("graph: cannot broadcast %v as %v to %v", shapeString(x.Shape()), shapeString(keep), shapeString(out))
	}
	for i := range keep {
		if keep[i] != 1 && keep[i] != out[i] {
			return nil, fmt.Errorf("graph: cannot broadcast %v to %v", shapeString(keep), shapeString(out))
		}
	}
	op := &broadcastToOp{base: newBase("BroadcastTo", shapeString(keep), out, x), keep: keep.Clone()}
	return apply(op, x)
}

// BroadcastTo repeats x to the given shape under NumPy's broadcasting rule.
func BroadcastTo(x *G.Node, shape ...int) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: BroadcastTo of a nil node")
	}
	out := tensor.Shape(shape)
	xs := x.Shape()
	if len(xs) > len(out) {
		return nil, fmt.Errorf("graph: cannot broadcast %v to %v", shapeString(xs), shapeString(out))
	}
	if xs.Eq(out) {
		return Reshape(x, shape...)
	}
	return broadcastTo(x, aligned(xs, len(out)), out)
}

func (op *broadcastToOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *broadcastToOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return broadcastToDo[float64](op, dst, in[0]) },
		func() (G.Value, error) { return broadcastToDo[float32](op, dst, in[0]) })
}

func broadcastToDo[T Float](op *broadcastToOp, dst, xv G.Value) (G.Value, error) {
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	if len(x) != op.keep.TotalSize() {
		return nil, fmt.Errorf("graph: %v: input has %d elements, want %d", op, len(x), op.keep.TotalSize())
	}
	v, y := output[T](dst, op.out)
	nd := len(op.out)
	if nd == 0 {
		y[0] = x[0]
		return v, nil
	}
	if perChannel(op.keep, op.out) {
		// a channel's value over its planes, without a walk callback per plane: the first
		// image is filled channel by channel, the others are copies of it (on 1×1 and 2×2 maps
		// a fill a channel cost more than the stores)
		c, hw := op.out[1], op.out[2]*op.out[3]
		if op.out[0] == 0 {
			return v, nil
		}
		first := y[:c*hw]
		for ch, e := range x[:c] {
			fill(first[ch*hw:][:hw], e)
		}
		for i := 1; i < op.out[0]; i++ {
			copy(y[i*c*hw:][:c*hw], first)
		}
		return v, nil
	}
	if nd == 2 && op.keep[0] == 1 && op.keep[1] == op.out[1] { // a bias over a batch: the row repeated
		broadcastRows(y, x[:op.out[1]])
		return v, nil
	}
	ks := broadcastStrides(op.keep, op.out)
	inner := ks[nd-1]
	walk(op.out, [][]int{rowMajorStrides(op.out), ks}, []int{0, 0}, func(o []int, n int) {
		row := y[o[0] : o[0]+n]
		if inner == 0 {
			fill(row, x[o[1]])
			return
		}
		copy(row, x[o[1]:o[1]+n])
	})
	return v, nil
}

// broadcastBlock is the size in elements of the prefix of y that broadcastRows copies from:
// small enough to stay in the first-level cache, large enough that a narrow row costs a few
// copies rather than one per row.
const broadcastBlock = 2048

// broadcastRows fills y with copies of row, by doubling copies up to broadcastBlock elements
// and then copies of that prefix.
func broadcastRows[T Float](y, row []T) {
	n := copy(y, row)
	for n < len(y) && 2*n <= broadcastBlock {
		n += copy(y[n:], y[:n])
	}
	for i := n; i < len(y); i += n {
		copy(y[i:], y[:n])
	}
}

func (op *broadcastToOp) VJP(in []*G.Node, _, g *G.Node, _ []bool) ([]*G.Node, error) {
	s, err := sumTo(g, op.keep, in[0].Shape())
	return []*G.Node{s}, err
}

// normAxes validates axes against rank nd, resolving negative ones, and returns the shape
// with those dims set to 1 and the shape with them removed.
func normAxes(s tensor.Shape, axes []int) (keep, dropped tensor.Shape, err error) {
	nd := len(s)
	keep = s.Clone()
	on := make([]bool, nd)
	for _, a := range axes {
		if a < 0 {
			a += nd
		}
		if a < 0 || a >= nd {
			return nil, nil, fmt.Errorf("graph: axis %d out of range for shape %v", a, shapeString(s))
		}
		on[a] = true
		keep[a] = 1
	}
	dropped = tensor.Shape{}
	for i, d := range s {
		if !on[i] {
			dropped = append(dropped, d)
		}
	}
	return keep, dropped, nil
}

// Sum sums x over the given axes (all axes when none are given, giving a scalar). Negative
// axes count from the end.
func Sum(x *G.Node, axes ...int) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: Sum of a nil node")
	}
	s := x.Shape()
	if len(axes) == 0 {
		return sumTo(x, aligned(tensor.Shape{}, len(s)), tensor.Shape{})
	}
	keep, dropped, err := normAxes(s, axes)
	if err != nil {
		return nil, err
	}
	return sumTo(x, keep, dropped)
}

// SumKeep sums x over the given axes, keeping them as dims of size 1.
func SumKeep(x *G.Node, axes ...int) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: SumKeep of a nil node")
	}
	keep, _, err := normAxes(x.Shape(), axes)
	if err != nil {
		return nil, err
	}
	return sumTo(x, keep, keep)
}

// Mean averages x over the given axes (all axes when none are given).
func Mean(x *G.Node, axes ...int) (*G.Node, error) {
	s, err := Sum(x, axes...)
	if err != nil {
		return nil, err
	}
	return Scale(s, float64(s.Shape().TotalSize())/float64(x.Shape().TotalSize()))
}

// MeanKeep averages x over the given axes, keeping them as dims of size 1.
func MeanKeep(x *G.Node, axes ...int) (*G.Node, error) {
	s, err := SumKeep(x, axes...)
	if err != nil {
		return nil, err
	}
	return Scale(s, float64(s.Shape().TotalSize())/float64(x.Shape().TotalSize()))
}

// constOp is a value computed from its input's shape alone: a fill, a copy with the
// derivative cut (StopGradient), or a running maximum. None of them passes derivatives.
type constOp struct {
	base
	kind  int // constFill, constStop, constMax
	fill  float64
	src   tensor.Shape
	axis  int
	inner int // product of the dims after axis
}

const (
	constFill = iota
	constStop
	constMax
)

func fillLike(x *G.Node, v float64) (*G.Node, error) {
	op := &constOp{base: newBase("Fill", fmt.Sprint(v), x.Shape(), x), kind: constFill, fill: v}
	return apply(op, x)
}

// StopGradient returns x's value as a node whose derivative is zero, like JAX's
// lax.stop_gradient.
func StopGradient(x *G.Node) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: StopGradient of a nil node")
	}
	op := &constOp{base: newBase("StopGradient", "", x.Shape(), x), kind: constStop}
	return apply(op, x)
}

// maxKeep is the maximum of x along axis, keeping the axis with size 1. It passes no
// derivative: it is only used as a shift that cancels out (softmax, log-sum-exp).
func maxKeep(x *G.Node, axis int) (*G.Node, error) {
	s := x.Shape()
	keep, _, err := normAxes(s, []int{axis})
	if err != nil {
		return nil, err
	}
	if axis < 0 {
		axis += len(s)
	}
	inner := 1
	for _, d := range s[axis+1:] {
		inner *= d
	}
	op := &constOp{base: newBase("MaxKeep", fmt.Sprint(axis), keep, x), kind: constMax, src: s, axis: axis, inner: inner}
	return apply(op, x)
}

func (op *constOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *constOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return constDo[float64](op, dst, in[0]) },
		func() (G.Value, error) { return constDo[float32](op, dst, in[0]) })
}

func constDo[T Float](op *constOp, dst, xv G.Value) (G.Value, error) {
	v, y := output[T](dst, op.out)
	switch op.kind {
	case constFill:
		c := T(op.fill)
		for i := range y {
			y[i] = c
		}
		return v, nil
	}
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	switch op.kind {
	case constStop:
		if len(x) != len(y) {
			return nil, fmt.Errorf("graph: %v: input has %d elements, want %d", op, len(x), len(y))
		}
		copy(y, x)
	case constMax:
		n := op.src[op.axis]
		if len(x) != op.src.TotalSize() {
			return nil, fmt.Errorf("graph: %v: input has %d elements, want %d", op, len(x), op.src.TotalSize())
		}
		outer := len(y) / op.inner
		for o := 0; o < outer; o++ {
			for i := 0; i < op.inner; i++ {
				m := T(math.Inf(-1))
				base := o*n*op.inner + i
				for k := 0; k < n; k++ {
					if e := x[base+k*op.inner]; e > m || e != e {
						m = e
					}
				}
				y[o*op.inner+i] = m
			}
		}
	default:
		return nil, fmt.Errorf("graph: %v: unknown constant op kind %d", op, op.kind)
	}
	return v, nil
}

func (op *constOp) VJP(in []*G.Node, _, _ *G.Node, _ []bool) ([]*G.Node, error) {
	return []*G.Node{nil}, nil
}

// sum adds up x with eight independent accumulators (a single one is bound by the latency of
// floating-point addition). Long x is summed in fixed chunks on several cores, the partial
// sums added in order, so the result never depends on the number of cores.
func sum[T Float](x []T) T {
	const chunk = 1 << 15
	if len(x) < 2*chunk {
		return sumSerial(x)
	}
	parts := make([]T, (len(x)+chunk-1)/chunk)
	parallelFor(len(parts), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			parts[i] = sumSerial(x[i*chunk : min(len(x), (i+1)*chunk)])
		}
	})
	return sumSerial(parts)
}

func sumSerial[T Float](x []T) T {
	if s, ok := vecSum(x); ok {
		return s
	}
	var s [8]T
	i := 0
	for ; i+8 <= len(x); i += 8 {
		c := x[i : i+8 : i+8]
		s[0] += c[0]
		s[1] += c[1]
		s[2] += c[2]
		s[3] += c[3]
		s[4] += c[4]
		s[5] += c[5]
		s[6] += c[6]
		s[7] += c[7]
	}
	for ; i < len(x); i++ {
		s[0] += x[i]
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}
