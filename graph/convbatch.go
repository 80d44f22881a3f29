package graph

import (
	"slices"

	"github.com/hyperflat/hyperflat/graph/internal/vec"
)

// The batched convolution path. Image by image (convDo's default), a convolution whose output
// map is small is a sequence of matrix products with few columns: on ResNet's last stage the
// map is 1×1, every per-image product has one column, and the filter gradient is 50 rank-1
// updates that each re-read the whole 9.4 MB filter bank. Here a block of images is laid out
// side by side, so that each kind is one wide product per block (the layout cuDNN and
// PyTorch's CPU im2col path use):
//
//	cols = [cols(x[n0]) … cols(x[n1−1])]               C·L × B·OH·OW
//	fwd:   P = W·cols,   y[n] = P[:, n-th block of columns]
//	backX: cols = Wᵀ·G,  dx[n] = col2im(n-th block of cols), G = [g[n0] … g[n1−1]]
//	backW: dW += G·colsᵀ  (blocks added in order, so the sum does not depend on cores)
//
// and only the L kernel taps that see at least one input pixel are laid out: with a 1×1 map
// and padding 1, 8 of a 3×3 kernel's 9 taps multiply nothing but padding, and dropping them
// makes the products 9× smaller. Their filter-gradient entries are exactly zero.

// liveTaps are the kernel taps kh·KW + kw whose window position reads the image for at least
// one output position.
func (w window) liveTaps() []int {
	live := func(k, pad, stride, in, out int) bool {
		lo := max(ceilDiv(pad-k, stride), 0)
		hi := min(floorDiv(in-1+pad-k, stride), out-1)
		return lo <= hi
	}
	var taps []int
	for kh := 0; kh < w.KH; kh++ {
		if !live(kh, w.PH, w.SH, w.H, w.OH) {
			continue
		}
		for kw := 0; kw < w.KW; kw++ {
			if live(kw, w.PW, w.SW, w.W, w.OW) {
				taps = append(taps, kh*w.KW+kw)
			}
		}
	}
	return taps
}

// convBatchMaxMap is the largest output map (OH·OW) computed in image blocks: above it the
// per-image products are already wide enough for the kernels' 24-column blocks, and their
// workspaces stay small.
const convBatchMaxMap = 256

// convBlockElems bounds a block's column matrix (elements), so that its workspace stays a few
// MB whatever the batch.
const convBlockElems = 1 << 20

// useBatched says whether a convolution takes the batched path.
func (w window) useBatched() bool {
	return w.OH*w.OW <= convBatchMaxMap || len(w.liveTaps()) < w.KH*w.KW
}

// convBlocks splits n images into equal blocks of at most convBlockElems column elements (at
// least one image each). It depends on the shapes only, never on the cores.
func convBlocks(n, perImage int) int {
	blocks := max(1, (n*perImage+convBlockElems-1)/convBlockElems)
	return min(blocks, max(n, 1))
}

// gathersFilters says whether op lays out its filters' live taps (gatherTaps) before its
// product: a convolution or input gradient with dead taps on the batched path.
func (op *convOp) gathersFilters() bool {
	return op.batched && op.kind != convBackW && len(op.taps) < op.w.KH*op.w.KW && convPath != "image"
}

// filterMemo is a filter node's live taps as gathered in one run of a Program: the 1×1
// stage's convolution and its input gradient read the same 9.4 MB filter bank for one tap in
// nine, and with the memo only the first of them does. Within a run an input's value does not
// change, so the run number (with the taps and size) says whether the memo holds it.
type filterMemo struct {
	run  int   // the run the memo holds (0: none)
	now  int   // the run in progress, set by the Program before each convolution
	taps []int // the taps it holds
	buf  any   // []float32 or []float64, F × C·len(taps)
}

// filterMemoOn turns the memo off for tests that compare it with gathering in every op.
var filterMemoOn = true

// filtersOf returns the memo's buffer for n elements of type T and whether it already holds
// this run's taps; nil when there is no memo (the caller gathers into a workspace).
func filtersOf[T Float](m *filterMemo, taps []int, n int) (wl []T, held bool) {
	if m == nil || m.now == 0 || !filterMemoOn {
		return nil, false
	}
	buf, _ := m.buf.([]T)
	if m.run == m.now && len(buf) == n && slices.Equal(m.taps, taps) {
		return buf, true
	}
	if cap(buf) < n {
		buf = make([]T, n)
	}
	m.buf, m.taps, m.run = buf[:n], taps, m.now
	return buf[:n], false
}

// convBatchedDo computes op on the batched path; a, b and y are as in convDo, and memo (nil
// outside a Program's run) the run's memo of the filters' live taps.
func convBatchedDo[T Float](op *convOp, a, b, y []T, memo *filterMemo) {
	w, F := op.w, op.f
	taps := op.taps
	KK, L := w.KH*w.KW, len(taps)
	C, ohw, chw := w.C, w.OH*w.OW, w.C*w.H*w.W
	ckl := C * L
	all := L == KK
	// the live taps' filters, F × C·L (the filters themselves when every tap is live)
	var wl []T
	var wlBuf *[]T
	switch {
	case op.kind == convBackW && all:
		wl = y
	case op.kind == convBackW:
		wlBuf = getWorkspace[T](F * ckl)
		wl = *wlBuf
	case all:
		wl = b
	default:
		held := false
		if wl, held = filtersOf[T](memo, taps, F*ckl); wl == nil {
			wlBuf = getWorkspace[T](F * ckl)
			wl = *wlBuf
		}
		if !held {
			// memory-bound (it reads the whole filter bank: 9.4 MB on ResNet's last stage),
			// so on every core
			parallelFor(F, 8, func(lo, hi int) { gatherTaps(wl[lo*ckl:hi*ckl], b[lo*C*KK:hi*C*KK], KK, taps) })
		}
	}
	if op.kind != convBackW && convCachedBlocks(op, a, b, y, wl, taps) {
		if wlBuf != nil {
			putWorkspace(wlBuf)
		}
		return
	}
	blocks := convBlocks(w.N, ckl*ohw)
	per := (w.N + blocks - 1) / blocks
	colsBuf := getWorkspace[T](ckl * per * ohw)
	gBuf := getWorkspace[T](F * per * ohw)
	for n0 := 0; n0 < w.N; n0 += per {
		n1 := min(n0+per, w.N)
		ld := (n1 - n0) * ohw
		cols, gp := (*colsBuf)[:ckl*ld], (*gBuf)[:F*ld]
		switch op.kind {
		case convFwd:
			parallelFor(n1-n0, 1, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					im2colConv(op, a[(n0+i)*chw:][:chw], cols, ld, i*ohw)
				}
			})
			gemmAcc(false, false, F, ld, ckl, wl, cols, 0, gp)
			scatterBlocks(gp, y[n0*F*ohw:], F, n1-n0, ohw)
		case convBackX:
			gatherBlocks(a[n0*F*ohw:], gp, F, n1-n0, ohw)
			gemmAcc(true, false, ckl, ld, F, wl, gp, 0, cols)
			parallelFor(n1-n0, 1, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					col2imConv(op, cols, ld, i*ohw, y[(n0+i)*chw:][:chw])
				}
			})
		case convBackW:
			parallelFor(n1-n0, 1, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					im2colConv(op, a[(n0+i)*chw:][:chw], cols, ld, i*ohw)
				}
			})
			gatherBlocks(b[n0*F*ohw:], gp, F, n1-n0, ohw)
			beta := T(1)
			if n0 == 0 {
				beta = 0
			}
			gemmAcc(false, true, F, ckl, ld, gp, cols, beta, wl)
		}
	}
	if op.kind == convBackW {
		if w.N == 0 {
			clear0(wl)
		}
		if !all {
			parallelFor(F, 8, func(lo, hi int) { scatterTaps(y[lo*C*KK:hi*C*KK], wl[lo*ckl:hi*ckl], KK, taps) })
		}
	}
	putWorkspace(colsBuf)
	putWorkspace(gBuf)
	if wlBuf != nil {
		putWorkspace(wlBuf)
	}
}

// gatherTaps copies the live taps of src's filter rows (kk elements each; taps their
// indices, increasing) into dst, len(taps) elements a row: the filters of a product over the
// live taps only. It is a copy, so memory-bound; with one live tap (ResNet's 1×1 stage keeps
// 1 of 9) it is one strided read a row, without the loop over taps.
func gatherTaps[T Float](dst, src []T, kk int, taps []int) {
	L := len(taps)
	if L == 1 && len(dst) > 0 {
		// four rows a step, through re-sliced windows whose bounds are checked once: the
		// element-by-element loop checked every read and ran at a third of the memory's pace
		s, i := src[taps[0]:], 0
		for ; i+4 <= len(dst) && 4*kk <= len(s); i += 4 {
			d, w := dst[i:i+4:i+4], s[:3*kk+1]
			d[0], d[1], d[2], d[3] = w[0], w[kk], w[2*kk], w[3*kk]
			s = s[4*kk:]
		}
		for j := 0; i < len(dst); i, j = i+1, j+kk {
			dst[i] = s[j]
		}
		return
	}
	for r := 0; r*L < len(dst); r++ {
		s, d := src[r*kk:][:kk], dst[r*L:][:L]
		for t, k := range taps {
			d[t] = s[k]
		}
	}
}

// scatterTapRows is how many filter rows scatterTaps zeros before it writes their live taps:
// few enough that the rows are still in the first-level cache when it does.
const scatterTapRows = 256

// scatterTaps is gatherTaps reversed for a filter gradient: each row of dst (kk elements)
// gets src's len(taps) values at its live taps and zeros at the others.
func scatterTaps[T Float](dst, src []T, kk int, taps []int) {
	L := len(taps)
	for r0 := 0; r0*kk < len(dst); r0 += scatterTapRows {
		r1 := min(r0+scatterTapRows, len(dst)/kk)
		clear0(dst[r0*kk : r1*kk])
		if L == 1 {
			for r, j := r0, r0*kk+taps[0]; r < r1; r, j = r+1, j+kk {
				dst[j] = src[r]
			}
			continue
		}
		for r := r0; r < r1; r++ {
			d, s := dst[r*kk:][:kk], src[r*L:][:L]
			for t, k := range taps {
				d[k] = s[t]
			}
		}
	}
}

// convCacheElems bounds the column matrix of a block that one core lays out and multiplies
// at once (elements): small enough that it is still in that core's L2 cache when the product
// reads it back, and wide enough (a few hundred columns) for the kernels' 24-column blocks.
const convCacheElems = 1 << 17

// convMinCols is the fewest columns a cache-sized block has: narrower products waste the
// kernels' 24-column blocks and re-read the filters once per block.
const convMinCols = 192

// convCachedBlocks computes a forward or input-gradient convolution in cache-sized blocks of
// images, the blocks split across cores, each core laying out and multiplying its own (one
// synchronization per op instead of two per block). It reports false, doing nothing, when the
// batch makes fewer than two such blocks: the caller then multiplies one wide block on all
// cores.
func convCachedBlocks[T Float](op *convOp, a, b, y, wl []T, taps []int) bool {
	w, F := op.w, op.f
	ckl, ohw, chw := w.C*len(taps), w.OH*w.OW, w.C*w.H*w.W
	per := max(1, convCacheElems/max(ckl*ohw, 1), (convMinCols+ohw-1)/ohw)
	blocks := (w.N + per - 1) / per
	if blocks < 2 {
		return false
	}
	per = (w.N + blocks - 1) / blocks // balanced
	// a block as wide as a multiple of the AVX-512 kernel's 48 columns (and so of the AVX2
	// kernel's 24), where a few images fewer make it one: the columns past the last 24-column
	// strip go through narrow kernels at a fraction of the speed (on ResNet's 4×4 maps 10
	// blocks of 160 columns left 16 of every 160 to them; 9 leave none but the last block's)
	if q := 48 / gcd(48, ohw); q > 1 && per >= q {
		per -= per % q
		blocks = (w.N + per - 1) / per
	}
	parallelFor(blocks, 1, func(lo, hi int) {
		colsBuf := getWorkspace[T](ckl * per * ohw)
		gBuf := getWorkspace[T](F * per * ohw)
		for blk := lo; blk < hi; blk++ {
			n0, n1 := blk*per, min((blk+1)*per, w.N)
			if n0 >= n1 {
				continue
			}
			ld := (n1 - n0) * ohw
			cols, gp := (*colsBuf)[:ckl*ld], (*gBuf)[:F*ld]
			if op.kind == convFwd {
				for i := 0; i < n1-n0; i++ {
					im2colConv(op, a[(n0+i)*chw:][:chw], cols, ld, i*ohw)
				}
				gemmSerial(false, false, F, ld, ckl, wl, cols, 0, gp)
				scatterBlocks(gp, y[n0*F*ohw:], F, n1-n0, ohw)
				continue
			}
			gatherBlocks(a[n0*F*ohw:], gp, F, n1-n0, ohw)
			gemmSerial(true, false, ckl, ld, F, wl, gp, 0, cols)
			for i := 0; i < n1-n0; i++ {
				col2imConv(op, cols, ld, i*ohw, y[(n0+i)*chw:][:chw])
			}
		}
		putWorkspace(colsBuf)
		putWorkspace(gBuf)
	})
	return true
}

// im2colConv lays out one image on the batched path: through the AVX-512 shift kernels where
// the op has a plan for them and float32 products use AVX-512, else through the op's gather
// table where it has one (the same elements either way: copies).
func im2colConv[T Float](op *convOp, img, cols []T, ld, col0 int) {
	if op.shift != nil {
		if i32, ok := any(img).([]float32); ok && op.shift.Im2col(i32, op.w.C, any(cols).([]float32), ld, col0) {
			return
		}
	}
	if op.tab != nil {
		im2colTable(op.w, op.tab, len(op.taps), img, cols, ld, col0)
		return
	}
	im2colTaps(op.w, op.taps, img, cols, ld, col0)
}

// col2imConv sets one image of the batched path's input gradient to the sum of its columns'
// elements that read each pixel, each pixel's terms added in tap order from zero on every path
// (so the AVX-512 kernel, which adds a zero for a tap that does not read a pixel, gives the same
// bits: a sum from +0 is never −0).
func col2imConv[T Float](op *convOp, cols []T, ld, col0 int, img []T) {
	if op.shift != nil {
		if c32, ok := any(cols).([]float32); ok && op.shift.Col2im(c32, ld, col0, any(img).([]float32), op.w.C) {
			return
		}
	}
	clear0(img)
	if op.tab != nil {
		col2imTable(op.w, op.tab, len(op.taps), cols, ld, col0, img)
		return
	}
	col2imTaps(op.w, op.taps, cols, ld, col0, img)
}

// scatterBlocks copies P (F × nb·ohw, image blocks side by side) into nb images of F × ohw.
func scatterBlocks[T Float](p, y []T, F, nb, ohw int) {
	ld := nb * ohw
	if ohw == 1 { // a transpose: walk the destination in order
		for i := 0; i < nb; i++ {
			row := y[i*F:][:F]
			for f := range row {
				row[f] = p[f*ld+i]
			}
		}
		return
	}
	for i := 0; i < nb; i++ {
		for f := 0; f < F; f++ {
			copy(y[(i*F+f)*ohw:][:ohw], p[f*ld+i*ohw:])
		}
	}
}

// gatherBlocks is the inverse of scatterBlocks: nb images of F × ohw into G (F × nb·ohw).
func gatherBlocks[T Float](g, p []T, F, nb, ohw int) {
	ld := nb * ohw
	if ohw == 1 {
		for i := 0; i < nb; i++ {
			row := g[i*F:][:F]
			for f, e := range row {
				p[f*ld+i] = e
			}
		}
		return
	}
	for i := 0; i < nb; i++ {
		for f := 0; f < F; f++ {
			copy(p[f*ld+i*ohw:][:ohw], g[(i*F+f)*ohw:])
		}
	}
}

// convTableMaxMap is the largest output map laid out through a gather table: on smaller maps
// (ResNet's 4×4 and 2×2 stages) a window row is a few elements, and per-row copies cost more
// in bookkeeping than they move.
const convTableMaxMap = 16

// gatherTable is, for every live tap t and output position p of one plane, the offset in the
// input plane that position reads, or −1 where it reads padding; nil for maps above
// convTableMaxMap.
func (w window) gatherTable(taps []int) []int32 {
	np := w.OH * w.OW
	if np > convTableMaxMap {
		return nil
	}
	tab := make([]int32, len(taps)*np)
	for t, k := range taps {
		kh, kw := k/w.KW, k%w.KW
		for oh := 0; oh < w.OH; oh++ {
			for ow := 0; ow < w.OW; ow++ {
				ih, iw := oh*w.SH-w.PH+kh, ow*w.SW-w.PW+kw
				at := int32(-1)
				if ih >= 0 && ih < w.H && iw >= 0 && iw < w.W {
					at = int32(ih*w.W + iw)
				}
				tab[t*np+oh*w.OW+ow] = at
			}
		}
	}
	return tab
}

// im2colTable is im2colTaps through a gather table.
func im2colTable[T Float](w window, tab []int32, L int, img, cols []T, ld, col0 int) {
	np, hw := w.OH*w.OW, w.H*w.W
	if c32, ok := f32s(cols); ok && w.C > 0 && L > 0 && len(img) < 1<<31 {
		// a gather at a time, every channel and tap in one call (the maps are 1–16 pixels)
		vec.Im2colTableF32(p32(c32[col0:]), ld, p32(any(img).([]float32)), hw, &tab[0], w.C, L, np)
		return
	}
	for c := 0; c < w.C; c++ {
		plane := img[c*hw:][:hw]
		for t := 0; t < L; t++ {
			dst := cols[(c*L+t)*ld+col0:][:np]
			for p, at := range tab[t*np:][:np] {
				var v T
				if at >= 0 {
					v = plane[at]
				}
				dst[p] = v
			}
		}
	}
}

// col2imTable is col2imTaps through a gather table.
func col2imTable[T Float](w window, tab []int32, L int, cols []T, ld, col0 int, img []T) {
	np, hw := w.OH*w.OW, w.H*w.W
	for c := 0; c < w.C; c++ {
		plane := img[c*hw:][:hw]
		for t := 0; t < L; t++ {
			src := cols[(c*L+t)*ld+col0:][:np]
			for p, at := range tab[t*np:][:np] {
				if at >= 0 {
					plane[at] += src[p]
				}
			}
		}
	}
}

// im2colTaps lays out the windows of one C×H×W image (w.N is ignored) at the live taps only:
// row c·L + t of cols (leading dimension ld), columns col0 … col0 + OH·OW − 1, holds tap
// taps[t] of channel c at every output position; padding reads as zero.
func im2colTaps[T Float](w window, taps []int, img, cols []T, ld, col0 int) {
	L, np := len(taps), w.OH*w.OW
	if np == 1 && w.SH == 1 && w.SW == 1 && w.H == 1 && w.W == 1 {
		// a 1×1 map (ResNet's last stage): the one live tap reads the pixel itself
		for c := 0; c < w.C; c++ {
			for t := range taps {
				cols[(c*L+t)*ld+col0] = img[c]
			}
		}
		return
	}
	shift := w.SH == 1 && w.SW == 1 && w.OW == w.W && w.OH <= w.H+w.PH
	for c := 0; c < w.C; c++ {
		plane := img[c*w.H*w.W:][:w.H*w.W]
		for t, k := range taps {
			kh, kw := k/w.KW, k%w.KW
			dst := cols[(c*L+t)*ld+col0:][:np]
			if shift {
				im2colShift(w, plane, dst, kh, kw)
				continue
			}
			im2colTap(w, plane, dst, kh, kw)
		}
	}
}

// col2imTaps is the adjoint of im2colTaps: it adds the image's columns back into its windows.
// It may zero elements of cols that no window position reads (cols is scratch).
func col2imTaps[T Float](w window, taps []int, cols []T, ld, col0 int, img []T) {
	L, np := len(taps), w.OH*w.OW
	if np == 1 && w.SH == 1 && w.SW == 1 && w.H == 1 && w.W == 1 {
		for c := 0; c < w.C; c++ {
			for t := range taps {
				img[c] += cols[(c*L+t)*ld+col0]
			}
		}
		return
	}
	shift := w.SH == 1 && w.SW == 1 && w.OW == w.W
	for c := 0; c < w.C; c++ {
		plane := img[c*w.H*w.W:][:w.H*w.W]
		for t, k := range taps {
			kh, kw := k/w.KW, k%w.KW
			src := cols[(c*L+t)*ld+col0:][:np]
			if shift { // cols is scratch here: col2imShift may zero its wrapped elements
				col2imShift(w, src, plane, kh, kw)
				continue
			}
			col2imTap(w, src, plane, kh, kw)
		}
	}
}
