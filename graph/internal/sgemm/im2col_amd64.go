package sgemm

import "unsafe"

//go:noescape
func Im2colZ(plane, cols unsafe.Pointer, c, hw, l, ld int, offs *int, masks *uint16, chunks, tail int)

//go:noescape
func Col2imZ(cols, plane unsafe.Pointer, c, hw, l, ld int, offs *int, masks *uint16, chunks, tail int)

// Im2col lays out the live taps of c planes of the plan's convolution (c·H·W floats of img)
// into rows ch·L + t of cols (leading dimension ld), columns col0 … col0 + OH·W − 1, as
// graph's scalar im2col does, and reports true; it reports false, doing nothing, when float32
// products do not use AVX-512 (UseAVX512) or the slices are too short for the shapes.
func (p *ShiftPlan) Im2col(img []float32, c int, cols []float32, ld, col0 int) bool {
	if !use512 || !p.fits(len(img), c, len(cols), ld, col0) {
		return false
	}
	if c == 0 || p.l == 0 {
		return true
	}
	Im2colZ(unsafe.Pointer(&img[0]), unsafe.Pointer(&cols[col0]), c, p.hw*4, p.l, ld*4, &p.offs[0], &p.imMasks[0], p.imChunks, p.imTail)
	return true
}

// Col2im sets c planes of img (c·H·W floats) to the sum of the live taps' rows of cols that
// read each pixel, in tap order from zero (graph's scalar col2im into a cleared image), and
// reports true; false, doing nothing, as Im2col.
func (p *ShiftPlan) Col2im(cols []float32, ld, col0 int, img []float32, c int) bool {
	if !use512 || !p.fits(len(img), c, len(cols), ld, col0) {
		return false
	}
	if c == 0 {
		return true
	}
	if p.l == 0 {
		clear(img[:c*p.hw])
		return true
	}
	Col2imZ(unsafe.Pointer(&cols[col0]), unsafe.Pointer(&img[0]), c, p.hw*4, p.l, ld*4, &p.offs[0], &p.colMasks[0], p.colChunks, p.colTail)
	return true
}
