package sgemm

// ShiftPlan is the layout of a stride-1 convolution whose output map is as wide as its input
// (W), for the AVX-512 im2col and col2im kernels (im2col512_amd64.s): each live tap's row of
// the column matrix is the input plane shifted by (kh − PH)·W + kw − PW, with a 16-bit mask
// per tap and 16-element chunk saying which elements read the image. It depends on the shapes
// only, and is safe for concurrent use.
type ShiftPlan struct {
	h, w, oh, l, np, hw int
	offs                []int // per tap, the shift in bytes
	// imMasks[t·imChunks + j]: the output positions 16j … 16j+15 that tap t reads from the
	// image; colMasks likewise for the pixels of the plane that tap t's row adds to
	imMasks, colMasks   []uint16
	imChunks, colChunks int
	imTail, colTail     int // the last chunk's elements (a mask)
}

// NewShiftPlan plans the live taps (kh·kw + kw indices of a KH×KW kernel, KW = kw) of a
// stride-1 convolution of H×W planes, top and left padding ph and pw, with oh output rows
// of W positions each; nil where the shapes are not that (W or oh < 1, a tap outside the
// kernel).
func NewShiftPlan(h, w, oh, ph, pw, kw int, taps []int) *ShiftPlan {
	if h < 1 || w < 1 || oh < 1 || kw < 1 {
		return nil
	}
	p := &ShiftPlan{h: h, w: w, oh: oh, l: len(taps), np: oh * w, hw: h * w}
	p.imChunks, p.colChunks = (p.np+15)/16, (p.hw+15)/16
	p.imTail, p.colTail = tailMask(p.np), tailMask(p.hw)
	p.imMasks = make([]uint16, len(taps)*p.imChunks)
	p.colMasks = make([]uint16, len(taps)*p.colChunks)
	for t, k := range taps {
		if k < 0 {
			return nil
		}
		dh, dw := k/kw-ph, k%kw-pw
		p.offs = append(p.offs, 4*(dh*w+dw))
		for q := 0; q < p.np; q++ { // output position (q/w, q%w) reads pixel (q/w + dh, q%w + dw)
			if ih, iw := q/w+dh, q%w+dw; ih >= 0 && ih < h && iw >= 0 && iw < w {
				p.imMasks[t*p.imChunks+q/16] |= 1 << (q % 16)
			}
		}
		for q := 0; q < p.hw; q++ { // pixel (q/w, q%w) is read by output position (q/w − dh, q%w − dw)
			if o, ow := q/w-dh, q%w-dw; o >= 0 && o < oh && ow >= 0 && ow < w {
				p.colMasks[t*p.colChunks+q/16] |= 1 << (q % 16)
			}
		}
	}
	return p
}

func tailMask(n int) int {
	if n%16 == 0 {
		return 0xffff
	}
	return 1<<(n%16) - 1
}

// fits says whether c planes of img (n elements) and their rows of a column matrix (nc
// elements, leading dimension ld, from column col0) are within the slices.
func (p *ShiftPlan) fits(n, c, nc, ld, col0 int) bool {
	if c < 0 || ld < p.np || col0 < 0 || n < c*p.hw {
		return false
	}
	return c == 0 || p.l == 0 || (c*p.l-1)*ld+col0+p.np <= nc
}
