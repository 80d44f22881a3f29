package graph

import (
	"fmt"
	"math/bits"
	"sync"

	kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"
	"github.com/hyperflat/hyperflat/graph/internal/vec"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// convOp is a 2-D convolution computed image by image: each image's windows are laid out by
// im2col into a C·KH·KW × OH·OW workspace that feeds one matrix product directly, whose result
// is already that image's F × OH·OW block of the N×F×OH×OW output, so no transpose and no
// batch-sized column matrix is ever materialized. Images are split across cores, each worker
// with its own workspace, reused from step to step.
//
// The three kinds are the convolution and its two adjoints; each is linear in each input, and
// their VJPs are convolutions of the same three kinds, so Conv2d is differentiable to any
// order:
//
//	fwd(x, w)   = y,  y[n] = W·cols(x[n])
//	backX(g, w) = dx, dx[n] = col2im(Wᵀ·g[n])
//	backW(x, g) = dw, dw = Σ_n g[n]·cols(x[n])ᵀ
type convOp struct {
	base
	w    window
	f    int // filters
	kind convKind
	// taps are the live kernel taps (window.liveTaps) and batched says whether the op takes
	// the batched path (convbatch.go); both are fixed by the shapes.
	taps    []int
	batched bool
	// tab, for small output maps, is the plane offset every (tap, output position) reads, −1
	// for padding (window.gatherTable)
	tab []int32
	// shift, for batched stride-1 convolutions whose output is as wide as the input, plans the
	// AVX-512 layout kernels (used where float32 products use AVX-512)
	shift *kern.ShiftPlan
}

// plan sets the op's layout tables from its window and live taps.
func (op *convOp) plan() {
	if !op.batched {
		return
	}
	w := op.w
	op.tab = w.gatherTable(op.taps)
	if w.SH == 1 && w.SW == 1 && w.OW == w.W && kern.HasAVX512 {
		op.shift = kern.NewShiftPlan(w.H, w.W, w.OH, w.PH, w.PW, w.KW, op.taps)
	}
}

type convKind int

const (
	convFwd convKind = iota
	convBackX
	convBackW
)

var convNames = [...]string{"Conv2d", "Conv2dBackX", "Conv2dBackW"}

func (w window) outShape(f int) tensor.Shape    { return tensor.Shape{w.N, f, w.OH, w.OW} }
func (w window) filterShape(f int) tensor.Shape { return tensor.Shape{f, w.C, w.KH, w.KW} }

func newConv(kind convKind, win window, f int, a, b *G.Node) (*G.Node, error) {
	var out tensor.Shape
	switch kind {
	case convFwd:
		out = win.outShape(f)
	case convBackX:
		out = win.inShape()
	default:
		out = win.filterShape(f)
	}
	op := &convOp{base: newBase(convNames[kind], fmt.Sprintf("%v f%d", win, f), out, a, b), w: win, f: f, kind: kind,
		taps: win.liveTaps(), batched: win.useBatched()}
	op.plan()
	return apply(op, a, b)
}

func (op *convOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *convOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return op.doIntoSupport(dst, nil, in...)
}

// doIntoSupport is DoInto with the run's memos (s may be nil): a convolution over live taps
// and its input gradient in the same run gather the filters' taps once (filterMemo).
func (op *convOp) doIntoSupport(dst G.Value, s *rowSupport, in ...G.Value) (G.Value, error) {
	var m *filterMemo
	if s != nil {
		m = s.filters
	}
	return run(op.dt,
		func() (G.Value, error) { return convDo[float64](op, dst, in[0], in[1], m) },
		func() (G.Value, error) { return convDo[float32](op, dst, in[0], in[1], m) })
}

// convChunks is the number of partial sums a filter gradient is split into (fixed, so that
// results do not depend on the number of cores).
const convChunks = 8

// workspaces hand out per-worker scratch buffers, reused across steps and ops. They are
// pooled by power-of-two size class: a single pool would hand a large request a small
// buffer, drop it and allocate, so that a step whose ops need different sizes would allocate
// on every call.
var workspaces32, workspaces64 [48]sync.Pool

func sizeClass(n int) int { return bits.Len(uint(max(n, 1) - 1)) }

func getWorkspace[T Float](n int) *[]T {
	var zero T
	c := sizeClass(n)
	p := &workspaces64[c]
	if _, ok := any(zero).(float32); ok {
		p = &workspaces32[c]
	}
	if b, ok := p.Get().(*[]T); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]T, n, 1<<c)
	return &b
}

func putWorkspace[T Float](b *[]T) {
	var zero T
	c := sizeClass(cap(*b))
	if 1<<c != cap(*b) {
		return // not one of ours
	}
	if _, ok := any(zero).(float32); ok {
		workspaces32[c].Put(b)
	} else {
		workspaces64[c].Put(b)
	}
}

func convDo[T Float](op *convOp, dst, av, bv G.Value, memo *filterMemo) (G.Value, error) {
	a, err := Elements[T](av)
	if err != nil {
		return nil, err
	}
	b, err := Elements[T](bv)
	if err != nil {
		return nil, err
	}
	w, F := op.w, op.f
	ckk, ohw, chw := w.C*w.KH*w.KW, w.OH*w.OW, w.C*w.H*w.W
	nx, nw, ny := w.N*chw, F*ckk, w.N*F*ohw
	want := [...][2]int{convFwd: {nx, nw}, convBackX: {ny, nw}, convBackW: {nx, ny}}[op.kind]
	if len(a) != want[0] || len(b) != want[1] {
		return nil, fmt.Errorf("graph: %v: inputs have %d and %d elements, want %d and %d", op, len(a), len(b), want[0], want[1])
	}
	v, y := output[T](dst, op.out)
	if op.batched && convPath != "image" {
		convBatchedDo(op, a, b, y, memo)
		return v, nil
	}
	one := w
	one.N = 1
	switch op.kind {
	case convFwd: // y[n] = W·cols(x[n])
		parallelFor(w.N, 1, func(lo, hi int) {
			ws := getWorkspace[T](ckk * ohw)
			cols := *ws
			for n := lo; n < hi; n++ {
				im2colImage(one, a[n*chw:][:chw], cols)
				gemmKernels(false, false, F, ohw, ckk, b, cols, 0, y[n*F*ohw:][:F*ohw])
			}
			putWorkspace(ws)
		})
	case convBackX: // dx[n] = col2im(Wᵀ·g[n])
		parallelFor(w.N, 1, func(lo, hi int) {
			ws := getWorkspace[T](ckk * ohw)
			cols := *ws
			for n := lo; n < hi; n++ {
				gemmKernels(true, false, ckk, ohw, F, b, a[n*F*ohw:][:F*ohw], 0, cols)
				img := y[n*chw:][:chw]
				clear0(img)
				col2imImage(one, cols, img)
			}
			putWorkspace(ws)
		})
	case convBackW: // dwᵀ = Σ_n cols(x[n])·g[n]ᵀ: partial sums over fixed chunks of images, added in order
		chunks := min(w.N, convChunks)
		if chunks == 0 {
			clear0(y)
			break
		}
		ws := getWorkspace[T](chunks * nw)
		parts := *ws
		parallelFor(chunks, 1, func(lo, hi int) {
			cw := getWorkspace[T](ckk * ohw)
			cols := *cw
			for c := lo; c < hi; c++ {
				acc := parts[c*nw:][:nw] // C·KH·KW × F
				for n := c * w.N / chunks; n < (c+1)*w.N/chunks; n++ {
					im2colImage(one, a[n*chw:][:chw], cols)
					beta := T(1)
					if n == c*w.N/chunks {
						beta = 0
					}
					if ckk*F <= 1024 && ohw >= 128 {
						// few, long dot products: dw[f][j] += g[n][f]·cols[j] into dwᵀ's layout
						dotsInto(acc, b[n*F*ohw:][:F*ohw], cols, F, ckk, ohw, beta)
						continue
					}
					gemmKernels(false, true, ckk, F, ohw, cols, b[n*F*ohw:][:F*ohw], beta, acc)
				}
			}
			putWorkspace(cw)
		})
		for c := 1; c < chunks; c++ {
			for i, e := range parts[c*nw:][:nw] {
				parts[i] += e
			}
		}
		for f := 0; f < F; f++ { // dw = (dwᵀ)ᵀ
			row := y[f*ckk:][:ckk]
			for j := range row {
				row[j] = parts[j*F+f]
			}
		}
		putWorkspace(ws)
	}
	return v, nil
}

func (op *convOp) VJP(in []*G.Node, _, g *G.Node, need []bool) ([]*G.Node, error) {
	out := make([]*G.Node, 2)
	var err error
	w, f := op.w, op.f
	switch op.kind {
	case convFwd: // in: x, w
		if need[0] {
			if out[0], err = newConv(convBackX, w, f, g, in[1]); err != nil {
				return nil, err
			}
		}
		if need[1] {
			out[1], err = newConv(convBackW, w, f, in[0], g)
		}
	case convBackX: // in: g, w; adjoint has x's shape
		if need[0] {
			if out[0], err = newConv(convFwd, w, f, g, in[1]); err != nil {
				return nil, err
			}
		}
		if need[1] {
			out[1], err = newConv(convBackW, w, f, g, in[0])
		}
	default: // in: x, g; adjoint has w's shape
		if need[0] {
			if out[0], err = newConv(convBackX, w, f, in[1], g); err != nil {
				return nil, err
			}
		}
		if need[1] {
			out[1], err = newConv(convFwd, w, f, in[0], g)
		}
	}
	return out, err
}

// im2colImage lays out the windows of one C×H×W image (w.N is ignored) as the columns of a
// C·KH·KW × OH·OW matrix; padding reads as zero.
func im2colImage[T Float](w window, img, cols []T) {
	np := w.OH * w.OW
	if w.SH == 1 && w.SW == 1 && w.OW == w.W && w.OH <= w.H+w.PH {
		im2colSame(w, img, cols)
		return
	}
	for c := 0; c < w.C; c++ {
		plane := img[c*w.H*w.W:][:w.H*w.W]
		for kh := 0; kh < w.KH; kh++ {
			for kw := 0; kw < w.KW; kw++ {
				im2colTap(w, plane, cols[((c*w.KH+kh)*w.KW+kw)*np:][:np], kh, kw)
			}
		}
	}
}

// col2imImage adds the columns of a C·KH·KW × OH·OW matrix back into the windows of one
// C×H×W image (w.N is ignored).
func col2imImage[T Float](w window, cols, img []T) {
	np := w.OH * w.OW
	if w.SH == 1 && w.SW == 1 && w.OW == w.W {
		col2imSame(w, cols, img)
		return
	}
	for c := 0; c < w.C; c++ {
		plane := img[c*w.H*w.W:][:w.H*w.W]
		for kh := 0; kh < w.KH; kh++ {
			for kw := 0; kw < w.KW; kw++ {
				col2imTap(w, cols[((c*w.KH+kh)*w.KW+kw)*np:][:np], plane, kh, kw)
			}
		}
	}
}

// gemmKernels is gemmSerial through this package's float32 kernels where the CPU has them,
// whatever the BLAS: for the convolutions' per-image products they beat OpenBLAS at every shape.
func gemmKernels[T Float](ta, tb bool, m, n, k int, a, b []T, beta T, c []T) {
	if a32, ok := any(a).([]float32); ok && m > 0 && n > 0 && k > 0 {
		lda, ldb := k, n
		if ta {
			lda = m
		}
		if tb {
			ldb = k
		}
		if sgemm(ta, tb, m, n, k, a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), n) {
			return
		}
	}
	gemmSerial(ta, tb, m, n, k, a, b, beta, c)
}

// col2imTap adds tap (kh, kw) of src (OH·OW long) back into one channel's plane, skipping
// the positions that read padding: the adjoint of im2colTap.
func col2imTap[T Float](w window, src, plane []T, kh, kw int) {
	lo := max(ceilDiv(w.PW-kw, w.SW), 0)
	hi := min(floorDiv(w.W-1+w.PW-kw, w.SW)+1, w.OW)
	hi = max(hi, lo)
	for oh := 0; oh < w.OH; oh++ {
		ih := oh*w.SH - w.PH + kh
		if ih < 0 || ih >= w.H {
			continue
		}
		seg := src[oh*w.OW:][lo:hi]
		in := plane[ih*w.W:][:w.W]
		iw := lo*w.SW - w.PW + kw
		if w.SW == 1 {
			in = in[iw:][:len(seg)]
			for k, e := range seg {
				in[k] += e
			}
		} else {
			for _, e := range seg {
				in[iw] += e
				iw += w.SW
			}
		}
	}
}

// im2colTap lays out tap (kh, kw) of one channel's plane at every output position, dst
// being OH·OW long; padding reads as zero.
func im2colTap[T Float](w window, plane, dst []T, kh, kw int) {
	lo := max(ceilDiv(w.PW-kw, w.SW), 0)
	hi := min(floorDiv(w.W-1+w.PW-kw, w.SW)+1, w.OW)
	hi = max(hi, lo)
	if d32, ok := f32s(dst); ok && w.SW > 1 && w.OW >= 8 && len(plane) < 1<<31 {
		// strided reads a gather at a time (the CIFAR stem's 7×7 stride-2 taps: a scalar
		// loop moved them at a few cycles an element); the same copies and zeros
		ohLo := max(ceilDiv(w.PH-kh, w.SH), 0)
		ohHi := max(min(floorDiv(w.H-1+w.PH-kh, w.SH)+1, w.OH), ohLo)
		clear0(d32[:ohLo*w.OW])
		clear0(d32[ohHi*w.OW:])
		if ohHi > ohLo {
			p := any(plane).([]float32)[(ohLo*w.SH-w.PH+kh)*w.W:]
			vec.Im2colTapF32(p32(d32[ohLo*w.OW:]), p32(p), ohHi-ohLo, w.OW, lo, hi, w.SW, kw-w.PW, w.SH*w.W)
		}
		return
	}
	for oh := 0; oh < w.OH; oh++ {
		seg := dst[oh*w.OW:][:w.OW]
		ih := oh*w.SH - w.PH + kh
		if ih < 0 || ih >= w.H {
			clear0(seg)
			continue
		}
		in := plane[ih*w.W:][:w.W]
		iw := lo*w.SW - w.PW + kw
		clear0(seg[:lo])
		if w.SW == 1 {
			copy(seg[lo:hi], in[iw:])
		} else {
			for k := range seg[lo:hi] {
				seg[lo+k] = in[iw]
				iw += w.SW
			}
		}
		clear0(seg[hi:])
	}
}

// im2colSame is im2colImage for stride 1 and an output as wide as the input ("same" width):
// each row of cols is the input plane shifted by (kh−PH, kw−PW), one long copy, after which
// the few elements that wrapped around a row edge and the rows outside the image are zeroed.
func im2colSame[T Float](w window, img, cols []T) {
	np := w.OH * w.OW
	for c := 0; c < w.C; c++ {
		plane := img[c*w.H*w.W:][:w.H*w.W]
		for kh := 0; kh < w.KH; kh++ {
			for kw := 0; kw < w.KW; kw++ {
				im2colShift(w, plane, cols[((c*w.KH+kh)*w.KW+kw)*np:][:np], kh, kw)
			}
		}
	}
}

// im2colShift is one row of im2colSame: tap (kh, kw) of one plane into dst (OH·OW).
func im2colShift[T Float](w window, plane, dst []T, kh, kw int) {
	W := w.W
	dh := kh - w.PH
	ohLo, ohHi := max(0, -dh), min(w.OH, w.H-dh)
	dw := kw - w.PW
	if ohHi <= ohLo {
		clear0(dst)
		return
	}
	clear0(dst[:ohLo*W])
	clear0(dst[ohHi*W:])
	// dst[oh·W + ow] = plane[(oh+dh)·W + ow + dw] for oh in [ohLo, ohHi)
	lo, hi := ohLo*W, ohHi*W
	src := (ohLo+dh)*W + dw
	// the first −dw elements may read before the plane and the last dw past it: they are
	// edge columns, zeroed below
	if src < 0 {
		lo, src = lo-src, 0
	}
	if end := src + (hi - lo); end > len(plane) {
		hi -= end - len(plane)
	}
	copy(dst[lo:hi], plane[src:])
	zeroEdges(dst, W, ohLo, ohHi, dw)
}

// zeroEdges zeroes, in rows ohLo … ohHi−1 of a W-wide map, the last dw columns (dw > 0) or
// the first −dw (dw < 0): the elements a row shifted by dw took from its neighbour. They are
// one or two elements a row, so they are stored directly rather than through a clear call.
func zeroEdges[T Float](dst []T, W, ohLo, ohHi, dw int) {
	switch {
	case dw > 0:
		for oh := ohLo; oh < ohHi; oh++ {
			for j := oh*W + W - dw; j < oh*W+W; j++ {
				dst[j] = 0
			}
		}
	case dw < 0:
		for oh := ohLo; oh < ohHi; oh++ {
			for j := oh * W; j < oh*W-dw; j++ {
				dst[j] = 0
			}
		}
	}
}

// col2imSame is col2imImage for stride 1 and "same" width, the adjoint of im2colSame: it zeroes
// the elements of cols that fall outside a row of the image (cols is scratch) and then adds
// each row of cols to the shifted plane in one long vector pass.
func col2imSame[T Float](w window, cols, img []T) {
	np := w.OH * w.OW
	for c := 0; c < w.C; c++ {
		plane := img[c*w.H*w.W:][:w.H*w.W]
		for kh := 0; kh < w.KH; kh++ {
			for kw := 0; kw < w.KW; kw++ {
				col2imShift(w, cols[((c*w.KH+kh)*w.KW+kw)*np:][:np], plane, kh, kw)
			}
		}
	}
}

// col2imShift is one row of col2imSame: src (OH·OW, scratch) added back into one plane at
// tap (kh, kw).
func col2imShift[T Float](w window, src, plane []T, kh, kw int) {
	W := w.W
	dh := kh - w.PH
	ohLo, ohHi := max(0, -dh), min(w.OH, w.H-dh)
	if ohHi <= ohLo {
		return
	}
	dw := kw - w.PW
	zeroEdges(src, W, ohLo, ohHi, dw)
	lo, hi := ohLo*W, ohHi*W
	dst := (ohLo+dh)*W + dw
	if dst < 0 {
		lo, dst = lo-dst, 0
	}
	if end := dst + (hi - lo); end > len(plane) {
		hi -= end - len(plane)
	}
	if hi > lo {
		out := plane[dst : dst+hi-lo]
		binaryRow(kAdd, out, out, src[lo:hi], 1, 1)
	}
}

// dotsInto sets accᵀ = g·colsᵀ + beta·accᵀ for g (F×k) and cols (ckk×k), acc being ckk×F: one
// dot product per filter and tap, through the vector kernels.
func dotsInto[T Float](acc, g, cols []T, F, ckk, k int, beta T) {
	for f := 0; f < F; f++ {
		gr := g[f*k:][:k]
		for j := 0; j < ckk; j++ {
			s := dot(gr, cols[j*k:][:k])
			if beta != 0 {
				s += beta * acc[j*F+f]
			}
			acc[j*F+f] = s
		}
	}
}

// dot is Σ a[i]·b[i].
func dot[T Float](a, b []T) T {
	if a32, ok := f32s(a); ok && len(a) >= 8 {
		b32 := any(b).([]float32)[:len(a32)]
		n8 := len(a32) &^ 7
		s := vec.DotF32(p32(a32), p32(b32), n8)
		for i := n8; i < len(a32); i++ {
			s += a32[i] * b32[i]
		}
		return T(s)
	}
	var s0, s1, s2, s3 T
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
