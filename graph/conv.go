package graph

import (
	"fmt"

	"github.com/hyperflat/hyperflat/graph/internal/vec"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Geometry sets the stride and zero padding of a 2-D convolution or pooling window. A zero
// stride means 1 for Conv2d and Im2Col, and the window size for the pools (PyTorch's defaults).
// PadH and PadW pad both sides; ExtraBottom and ExtraRight add rows and columns on the bottom
// and right only, as TensorFlow's "same" padding does for even kernels (see SamePadding).
type Geometry struct {
	StrideH, StrideW        int
	PadH, PadW              int
	ExtraBottom, ExtraRight int
}

// SamePadding is the stride-1 geometry whose output has the input's height and width for a
// kh×kw kernel, padded like Keras/TensorFlow padding="same" (the odd pixel goes bottom/right).
func SamePadding(kh, kw int) Geometry {
	return Geometry{PadH: (kh - 1) / 2, PadW: (kw - 1) / 2, ExtraBottom: (kh - 1) % 2, ExtraRight: (kw - 1) % 2}
}

// window is the full geometry of a sliding window over an NCHW input.
type window struct {
	N, C, H, W, KH, KW, SH, SW, OH, OW int
	PH, PW                             int // top and left padding
	PB, PR                             int // bottom and right padding
}

func newWindow(s tensor.Shape, kh, kw int, g Geometry, defaultStrideIsKernel bool) (window, error) {
	if len(s) != 4 {
		return window{}, fmt.Errorf("graph: sliding window over shape %v; want N×C×H×W", shapeString(s))
	}
	w := window{N: s[0], C: s[1], H: s[2], W: s[3], KH: kh, KW: kw, SH: g.StrideH, SW: g.StrideW,
		PH: g.PadH, PW: g.PadW, PB: g.PadH + g.ExtraBottom, PR: g.PadW + g.ExtraRight}
	if w.SH == 0 {
		w.SH = 1
		if defaultStrideIsKernel {
			w.SH = kh
		}
	}
	if w.SW == 0 {
		w.SW = 1
		if defaultStrideIsKernel {
			w.SW = kw
		}
	}
	if kh <= 0 || kw <= 0 || w.SH < 0 || w.SW < 0 || w.PH < 0 || w.PW < 0 || w.PB < 0 || w.PR < 0 {
		return window{}, fmt.Errorf("graph: bad window %dx%d with %+v", kh, kw, g)
	}
	ph, pw := w.H+w.PH+w.PB, w.W+w.PW+w.PR
	if ph < kh || pw < kw {
		return window{}, fmt.Errorf("graph: window %dx%d larger than padded input %dx%d", kh, kw, ph, pw)
	}
	w.OH = (ph-kh)/w.SH + 1
	w.OW = (pw-kw)/w.SW + 1
	return w, nil
}

func (w window) String() string {
	return fmt.Sprintf("%dx%dx%dx%d k%dx%d s%dx%d p%d,%d,%d,%d", w.N, w.C, w.H, w.W, w.KH, w.KW, w.SH, w.SW, w.PH, w.PB, w.PW, w.PR)
}

func (w window) inShape() tensor.Shape   { return tensor.Shape{w.N, w.C, w.H, w.W} }
func (w window) colsShape() tensor.Shape { return tensor.Shape{w.C * w.KH * w.KW, w.N * w.OH * w.OW} }
func (w window) poolShape() tensor.Shape { return tensor.Shape{w.N, w.C, w.OH, w.OW} }

// im2colOp lays every window of an NCHW input out as a column (C·KH·KW rows of N·OH·OW), so
// that a convolution is one matrix product filters·cols; with adjoint set it is col2im, which
// adds each column back into its window. The two are each other's adjoints and so each
// other's VJP. Rows of this layout are long runs copied straight from input rows.
type im2colOp struct {
	base
	w       window
	adjoint bool
}

// Im2Col lays out every kh×kw window of the N×C×H×W input x as a column of the result, which
// has C·kh·kw rows (channel-major, then kernel row, then kernel column) of N·OH·OW entries
// (image-major, then output row, then output column); padding reads as zero.
func Im2Col(x *G.Node, kh, kw int, g Geometry) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: Im2Col of a nil node")
	}
	w, err := newWindow(x.Shape(), kh, kw, g, false)
	if err != nil {
		return nil, err
	}
	op := &im2colOp{base: newBase("Im2Col", w.String(), w.colsShape(), x), w: w}
	return apply(op, x)
}

// Col2Im is the adjoint of Im2Col for an input of shape inShape: it adds every column of cols
// back into the window it came from.
func Col2Im(cols *G.Node, inShape tensor.Shape, kh, kw int, g Geometry) (*G.Node, error) {
	if cols == nil {
		return nil, fmt.Errorf("graph: Col2Im of a nil node")
	}
	if len(inShape) != 4 {
		return nil, fmt.Errorf("graph: Col2Im to shape %v; want N×C×H×W", shapeString(inShape))
	}
	w, err := newWindow(inShape, kh, kw, g, false)
	if err != nil {
		return nil, err
	}
	if !cols.Shape().Eq(w.colsShape()) {
		return nil, fmt.Errorf("graph: Col2Im of shape %v; want %v", shapeString(cols.Shape()), shapeString(w.colsShape()))
	}
	return col2im(cols, w)
}

func col2im(cols *G.Node, w window) (*G.Node, error) {
	op := &im2colOp{base: newBase("Col2Im", w.String(), w.inShape(), cols), w: w, adjoint: true}
	return apply(op, cols)
}

func (op *im2colOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *im2colOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return run(op.dt,
		func() (G.Value, error) { return im2colDo[float64](op, dst, in[0]) },
		func() (G.Value, error) { return im2colDo[float32](op, dst, in[0]) })
}

func im2colDo[T Float](op *im2colOp, dst, xv G.Value) (G.Value, error) {
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	w := op.w
	img, cols := x, []T(nil)
	v, y := output[T](dst, op.out)
	if op.adjoint {
		img, cols = y, x
		if len(cols) != w.colsShape().TotalSize() {
			return nil, fmt.Errorf("graph: %v: input has %d elements", op, len(cols))
		}
		clear0(img)
	} else {
		cols = y
		if len(img) != w.inShape().TotalSize() {
			return nil, fmt.Errorf("graph: %v: input has %d elements", op, len(img))
		}
	}
	np := w.N * w.OH * w.OW
	for c := 0; c < w.C; c++ {
		for kh := 0; kh < w.KH; kh++ {
			for kw := 0; kw < w.KW; kw++ {
				dst := cols[((c*w.KH+kh)*w.KW+kw)*np:][:np]
				// Output columns lo … hi−1 read input columns inside the image.
				lo := ceilDiv(w.PW-kw, w.SW)
				lo = max(lo, 0)
				hi := min(floorDiv(w.W-1+w.PW-kw, w.SW)+1, w.OW)
				hi = max(hi, lo)
				for n := 0; n < w.N; n++ {
					plane := img[(n*w.C+c)*w.H*w.W:][:w.H*w.W]
					for oh := 0; oh < w.OH; oh++ {
						seg := dst[(n*w.OH+oh)*w.OW:][:w.OW]
						ih := oh*w.SH - w.PH + kh
						if ih < 0 || ih >= w.H {
							if !op.adjoint {
								clear0(seg)
							}
							continue
						}
						in := plane[ih*w.W:][:w.W]
						iw := lo*w.SW - w.PW + kw
						switch {
						case op.adjoint && w.SW == 1:
							for k, e := range seg[lo:hi] {
								in[iw+k] += e
							}
						case op.adjoint:
							for _, e := range seg[lo:hi] {
								in[iw] += e
								iw += w.SW
							}
						case w.SW == 1:
							clear0(seg[:lo])
							copy(seg[lo:hi], in[iw:])
							clear0(seg[hi:])
						default:
							clear0(seg[:lo])
							for k := range seg[lo:hi] {
								seg[lo+k] = in[iw]
								iw += w.SW
							}
							clear0(seg[hi:])
						}
					}
				}
			}
		}
	}
	return v, nil
}

// floorDiv is ⌊a/b⌋ for b > 0 and any sign of a.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ceilDiv is ⌈a/b⌉ for b > 0 and any sign of a.
func ceilDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a > 0 {
		q++
	}
	return q
}

func (op *im2colOp) VJP(_ []*G.Node, _, g *G.Node, _ []bool) ([]*G.Node, error) {
	if op.adjoint {
		o := &im2colOp{base: newBase("Im2Col", op.w.String(), op.w.colsShape(), g), w: op.w}
		n, err := apply(o, g)
		return []*G.Node{n}, err
	}
	n, err := col2im(g, op.w)
	return []*G.Node{n}, err
}

// Conv2d is the cross-correlation of an N×C×H×W input x with F×C×KH×KW filters w (no bias),
// giving N×F×OH×OW. It is computed image by image as im2col and one matrix product into the
// output (see convOp); its derivatives are convolutions of the same kind, differentiable to
// any order.
func Conv2d(x, w *G.Node, g Geometry) (*G.Node, error) {
	if x == nil || w == nil {
		return nil, fmt.Errorf("graph: Conv2d of a nil node")
	}
	if err := checkDtype(x); err != nil {
		return nil, err
	}
	ws := w.Shape()
	xs := x.Shape()
	if len(ws) != 4 || len(xs) != 4 || ws[1] != xs[1] {
		return nil, fmt.Errorf("graph: Conv2d of input %v with filters %v; want N×C×H×W and F×C×KH×KW", shapeString(xs), shapeString(ws))
	}
	win, err := newWindow(x.Shape(), ws[2], ws[3], g, false)
	if err != nil {
		return nil, err
	}
	return newConv(convFwd, win, ws[0], x, w)
}

// AvgPool2d averages every kh×kw window of an N×C×H×W input; padding counts as zeros in the
// average (PyTorch's count_include_pad=True).
func AvgPool2d(x *G.Node, kh, kw int, g Geometry) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: AvgPool2d of a nil node")
	}
	win, err := newWindow(x.Shape(), kh, kw, g, true)
	if err != nil {
		return nil, err
	}
	g.StrideH, g.StrideW = win.SH, win.SW
	cols, err := Im2Col(x, kh, kw, g)
	if err != nil {
		return nil, err
	}
	if cols, err = Reshape(cols, win.C, kh*kw, win.N, win.OH*win.OW); err != nil {
		return nil, err
	}
	m, err := Mean(cols, 1) // C × N × OH·OW
	if err != nil {
		return nil, err
	}
	if m, err = Transpose(m, 1, 0, 2); err != nil {
		return nil, err
	}
	return Reshape(m, win.N, win.C, win.OH, win.OW)
}

// Max-pooling is split so that it can be differentiated again and so that the window maxima
// are found once per step: argmax(x) records, for every window, the position of its largest
// element within the input plane (as a value of x's dtype; it carries no derivative);
// gather(idx, v) picks v at those positions and scatter(idx, g) adds every element of g back
// at them. Both are linear in their second input and each other's adjoint. The forward pass
// and every derivative of a MaxPool2d share one argmax node.

type poolKind int

const (
	poolArgmax poolKind = iota
	poolGatherK
	poolScatterK
)

type poolOp struct {
	base
	w    window
	kind poolKind
}

// MaxPool2d takes the maximum of every kh×kw window of an N×C×H×W input (padding never wins).
// Its derivative routes to the first maximal element of each window.
func MaxPool2d(x *G.Node, kh, kw int, g Geometry) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph: MaxPool2d of a nil node")
	}
	w, err := newWindow(x.Shape(), kh, kw, g, true)
	if err != nil {
		return nil, err
	}
	if max(w.PH, w.PB)*2 > kh || max(w.PW, w.PR)*2 > kw {
		return nil, fmt.Errorf("graph: MaxPool2d padding %+v exceeds half the window %dx%d", g, kh, kw)
	}
	if x.Dtype() == tensor.Float32 && w.H*w.W > 1<<24 {
		return nil, fmt.Errorf("graph: MaxPool2d over %dx%d float32 planes (at most 2^24 elements)", w.H, w.W)
	}
	idx, err := apply(&poolOp{base: newBase("PoolArgmax", w.String(), w.poolShape(), x), w: w, kind: poolArgmax}, x)
	if err != nil {
		return nil, err
	}
	return poolGather(idx, x, w)
}

func poolGather(idx, v *G.Node, w window) (*G.Node, error) {
	op := &poolOp{base: newBase("PoolGather", w.String(), w.poolShape(), idx, v), w: w, kind: poolGatherK}
	return apply(op, idx, v)
}

func poolScatter(idx, g *G.Node, w window) (*G.Node, error) {
	op := &poolOp{base: newBase("PoolScatter", w.String(), w.inShape(), idx, g), w: w, kind: poolScatterK}
	return apply(op, idx, g)
}

func (op *poolOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *poolOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	if op.kind == poolArgmax {
		return run(op.dt,
			func() (G.Value, error) { return poolArgmaxDo[float64](op, dst, in[0]) },
			func() (G.Value, error) { return poolArgmaxDo[float32](op, dst, in[0]) })
	}
	return run(op.dt,
		func() (G.Value, error) { return poolMoveDo[float64](op, dst, in[0], in[1]) },
		func() (G.Value, error) { return poolMoveDo[float32](op, dst, in[0], in[1]) })
}

// pairIota is 0, 2, …, 14 (the offsets of eight 2×2 windows in a row), then 1 and 16: the
// constants of vec.ArgMax2x2F32.
var pairIota = [10]float32{0, 2, 4, 6, 8, 10, 12, 14, 1, 16}

// poolGrain is the number of planes worth a goroutine of their own.
const poolGrain = 8

func poolArgmaxDo[T Float](op *poolOp, dst, xv G.Value) (G.Value, error) {
	x, err := Elements[T](xv)
	if err != nil {
		return nil, err
	}
	w := op.w
	if len(x) != w.inShape().TotalSize() {
		return nil, fmt.Errorf("graph: %v: input has %d elements", op, len(x))
	}
	v, y := output[T](dst, op.out)
	H, W, OH, OW := w.H, w.W, w.OH, w.OW
	simple := w.KH == 2 && w.KW == 2 && w.SH == 2 && w.SW == 2 && w.PH == 0 && w.PW == 0 && 2*OH <= H && 2*OW <= W
	parallelFor(w.N*w.C, poolGrain, func(lo, hi int) {
		for nc := lo; nc < hi; nc++ {
			plane := x[nc*H*W:][:H*W]
			out := y[nc*OH*OW:][:OH*OW]
			if simple {
				for oh := 0; oh < OH; oh++ {
					r0 := plane[2*oh*W:][:W]
					r1 := plane[(2*oh+1)*W:][:W]
					o := out[oh*OW:][:OW]
					base := 2 * oh * W
					done := 0
					if o32, ok := f32s(o); ok && len(o) >= 8 {
						a0, a1 := any(r0).([]float32), any(r1).([]float32)
						n8 := len(o) &^ 7
						vec.ArgMax2x2F32(p32(o32), p32(a0), p32(a1), n8, float32(base), float32(W), &pairIota[0])
						if t := len(o) - 8; t > 0 && n8 < len(o) { // the last 8 windows again, overlapping
							vec.ArgMax2x2F32(p32(o32[t:]), p32(a0[2*t:]), p32(a1[2*t:]), 8, float32(base+2*t), float32(W), &pairIota[0])
						}
						done = len(o)
					}
					for ow := done; ow < len(o); ow++ {
						// branch-free: on real activations every comparison is a coin flip; the
						// maxima are picked by index, not by a float max
						j := 2 * ow
						c0 := b2i(r0[j+1] > r0[j])
						c1 := b2i(r1[j+1] > r1[j])
						c2 := b2i(r1[j+c1] > r0[j+c0])
						o[ow] = T(base + j + c0 + c2*(W+c1-c0))
					}
				}
				continue
			}
			if o32, ok := f32s(out); ok {
				// eight windows at a time by masked gathers (on random activations the
				// scalar loop's comparisons are branch mispredictions), the same indices
				p := any(plane).([]float32)
				for oh := 0; oh < OH; oh++ {
					ih0 := oh*w.SH - w.PH
					khLo, khHi := max(0, -ih0), min(w.KH, H-ih0)
					vec.ArgMaxRowF32(p32(o32[oh*OW:]), p32(p), OW, ih0+khLo, khHi-khLo, W, w.KW, w.SW, -w.PW)
				}
				continue
			}
			for oh := 0; oh < OH; oh++ {
				ih0 := oh*w.SH - w.PH
				khLo, khHi := max(0, -ih0), min(w.KH, H-ih0)
				for ow := 0; ow < OW; ow++ {
					iw0 := ow*w.SW - w.PW
					kwLo, kwHi := max(0, -iw0), min(w.KW, W-iw0)
					at := (ih0+khLo)*W + iw0 + kwLo
					best := plane[at]
					for kh := khLo; kh < khHi; kh++ {
						row := plane[(ih0+kh)*W:][:W]
						for kw := kwLo; kw < kwHi; kw++ {
							if e := row[iw0+kw]; e > best {
								best, at = e, (ih0+kh)*W+iw0+kw
							}
						}
					}
					out[oh*OW+ow] = T(at)
				}
			}
		}
	})
	return v, nil
}

func poolMoveDo[T Float](op *poolOp, dst, idxv, srcv G.Value) (G.Value, error) {
	idx, err := Elements[T](idxv)
	if err != nil {
		return nil, err
	}
	src, err := Elements[T](srcv)
	if err != nil {
		return nil, err
	}
	w := op.w
	in, pooled := w.inShape().TotalSize(), w.poolShape().TotalSize()
	if len(idx) != pooled {
		return nil, fmt.Errorf("graph: %v: index has %d elements", op, len(idx))
	}
	v, y := output[T](dst, op.out)
	HW, OHW := w.H*w.W, w.OH*w.OW
	if op.kind == poolScatterK {
		if len(src) != pooled {
			return nil, fmt.Errorf("graph: %v: input has %d elements", op, len(src))
		}
		parallelFor(w.N*w.C, poolGrain, func(lo, hi int) {
			for nc := lo; nc < hi; nc++ {
				out := y[nc*HW:][:HW]
				clear0(out)
				for o, i := range idx[nc*OHW:][:OHW] {
					out[int(i)] += src[nc*OHW+o]
				}
			}
		})
		return v, nil
	}
	if len(src) != in {
		return nil, fmt.Errorf("graph: %v: input has %d elements", op, len(src))
	}
	parallelFor(w.N*w.C, poolGrain, func(lo, hi int) {
		for nc := lo; nc < hi; nc++ {
			plane := src[nc*HW:][:HW]
			out := y[nc*OHW:][:OHW]
			for o, i := range idx[nc*OHW:][:OHW] {
				out[o] = plane[int(i)]
			}
		}
	})
	return v, nil
}

func (op *poolOp) VJP(in []*G.Node, _, g *G.Node, need []bool) ([]*G.Node, error) {
	if op.kind == poolArgmax {
		return []*G.Node{nil}, nil
	}
	out := make([]*G.Node, 2)
	if !need[1] {
		return out, nil
	}
	var err error
	if op.kind == poolScatterK {
		out[1], err = poolGather(in[0], g, op.w)
	} else {
		out[1], err = poolScatter(in[0], g, op.w)
	}
	return out, err
}
