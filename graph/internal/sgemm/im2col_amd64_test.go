package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The AVX-512 im2col and col2im kernels against the definitions, bit for bit, on shapes around
// the 16-element chunks (maps of 1 to 17 columns and rows, kernels of 1 to 5 taps a side,
// padding 0 to 2, subsets of the taps, column blocks at an offset in a wider matrix), with
// NaN, infinite, negative-zero and subnormal inputs; and that nothing outside the rows and
// planes they own is written.

// refIm2col is the definition of Im2col.
func refIm2col(h, w, oh, ph, pw, kw int, taps []int, img []float32, c int, cols []float32, ld, col0 int) {
	L := len(taps)
	for ch := 0; ch < c; ch++ {
		for t, k := range taps {
			dh, dw := k/kw-ph, k%kw-pw
			for q := 0; q < oh*w; q++ {
				v := float32(0)
				if ih, iw := q/w+dh, q%w+dw; ih >= 0 && ih < h && iw >= 0 && iw < w {
					v = img[ch*h*w+ih*w+iw]
				}
				cols[(ch*L+t)*ld+col0+q] = v
			}
		}
	}
}

// refCol2im is the definition of Col2im: each pixel the float32 sum from zero, in tap order,
// of the elements of the taps' rows that read it.
func refCol2im(h, w, oh, ph, pw, kw int, taps []int, cols []float32, ld, col0 int, img []float32, c int) {
	L := len(taps)
	for ch := 0; ch < c; ch++ {
		plane := img[ch*h*w:][:h*w]
		clear(plane)
		for t, k := range taps {
			dh, dw := k/kw-ph, k%kw-pw
			for q := 0; q < oh*w; q++ {
				if ih, iw := q/w+dh, q%w+dw; ih >= 0 && ih < h && iw >= 0 && iw < w {
					plane[ih*w+iw] += cols[(ch*L+t)*ld+col0+q]
				}
			}
		}
	}
}

// awkward is a float32 from a mix that exercises what a copy or a sum could get wrong.
func awkward(rng *rand.Rand) float32 {
	switch rng.IntN(40) {
	case 0:
		return float32(math.NaN())
	case 1:
		return float32(math.Inf(1 - 2*rng.IntN(2)))
	case 2:
		return float32(math.Copysign(0, -1))
	case 3:
		return math.Float32frombits(uint32(rng.IntN(1 << 23))) // subnormal
	}
	return float32(rng.NormFloat64())
}

func same(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

func TestIm2colZScalar(t *testing.T) {
	if !HasAVX512 {
		t.Skip("this CPU (or its operating system) lacks AVX512F: the AVX-512 im2col and col2im kernels cannot run here; graph's scalar layout is used instead")
	}
	defer UseAVX512(UseAVX512(true))
	rng := rand.New(rand.NewPCG(5, 3))
	const sentinel = 12345.5
	cases := 0
	for _, h := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17} {
		for _, w := range []int{1, 2, 3, 4, 7, 8, 15, 16, 17} {
			for _, k := range []int{1, 2, 3, 5} {
				for pad := 0; pad <= min(2, k-1); pad++ {
					oh := h + 2*pad - k + 1
					if w+2*pad-k+1 != w || oh < 1 { // the output as wide as the input
						continue
					}
					all := make([]int, k*k)
					for i := range all {
						all[i] = i
					}
					some := []int{}
					for i := range all {
						if rng.IntN(3) > 0 {
							some = append(some, i)
						}
					}
					for _, taps := range [][]int{all, some} {
						p := NewShiftPlan(h, w, oh, pad, pad, k, taps)
						c, L, np := 1+rng.IntN(3), len(taps), oh*w
						ld, col0 := np+rng.IntN(3)*np+rng.IntN(5), 0
						col0 = rng.IntN(ld - np + 1)
						img := make([]float32, c*h*w+7)
						for i := range img {
							img[i] = awkward(rng)
						}
						n := max(1, c*L) * ld
						got, want := make([]float32, n), make([]float32, n)
						for i := range got {
							got[i], want[i] = sentinel, sentinel
						}
						if !p.Im2col(img, c, got, ld, col0) {
							t.Fatalf("%d×%d k%d p%d: Im2col declined", h, w, k, pad)
						}
						refIm2col(h, w, oh, pad, pad, k, taps, img, c, want, ld, col0)
						for i := range got {
							if !same(got[i], want[i]) {
								t.Fatalf("Im2col %d×%d (%d rows out) k%d p%d taps %v ld %d col0 %d: element %d (row %d, column %d) is %v, want %v",
									h, w, oh, k, pad, taps, ld, col0, i, i/ld, i%ld, got[i], want[i])
							}
						}
						cols := make([]float32, n)
						for i := range cols {
							cols[i] = awkward(rng)
						}
						gi, wi := make([]float32, len(img)), make([]float32, len(img))
						for i := range gi {
							gi[i], wi[i] = sentinel, sentinel
						}
						if !p.Col2im(cols, ld, col0, gi, c) {
							t.Fatalf("%d×%d k%d p%d: Col2im declined", h, w, k, pad)
						}
						refCol2im(h, w, oh, pad, pad, k, taps, cols, ld, col0, wi, c)
						for i := range gi {
							if !same(gi[i], wi[i]) {
								t.Fatalf("Col2im %d×%d (%d rows out) k%d p%d taps %v ld %d col0 %d: pixel %d is %v, want %v",
									h, w, oh, k, pad, taps, ld, col0, i, gi[i], wi[i])
							}
						}
						cases++
					}
				}
			}
		}
	}
	if cases < 100 {
		t.Fatalf("only %d cases", cases)
	}
}

// TestShiftPlanDeclines: the kernels decline, writing nothing, when AVX-512 is off or a slice
// is too short for the shapes.
func TestShiftPlanDeclines(t *testing.T) {
	p := NewShiftPlan(4, 4, 4, 1, 1, 3, []int{0, 4, 8})
	img, cols := make([]float32, 2*16), make([]float32, 6*16)
	if p.Im2col(img[:31], 2, cols, 16, 0) || p.Im2col(img, 2, cols[:95], 16, 0) || p.Im2col(img, 2, cols, 15, 0) ||
		p.Col2im(cols, 16, 1, img, 2) || p.Col2im(cols, 16, 0, img[:31], 2) {
		t.Error("a kernel accepted slices too short for the shapes")
	}
	was := UseAVX512(false)
	defer UseAVX512(was)
	if p.Im2col(img, 2, cols, 16, 0) || p.Col2im(cols, 16, 0, img, 2) {
		t.Error("a kernel ran with AVX-512 off")
	}
	if NewShiftPlan(0, 4, 4, 1, 1, 3, nil) != nil {
		t.Error("a plan for an empty map")
	}
}
