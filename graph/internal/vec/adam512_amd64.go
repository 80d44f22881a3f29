package vec

import "golang.org/x/sys/cpu"

// HasAVX512 reports whether the CPU (and the operating system, which must save the 512-bit
// registers) has AVX512F, which AdamF32Z needs.
var HasAVX512 = Available && cpu.X86.HasAVX512F

// AdamF32Z is AdamF32 on n elements, a multiple of 16, with AVX-512 (HasAVX512): the same
// operations in the same order, so the same bits.
//
//go:noescape
func AdamF32Z(p, gr, m, v *float32, n int, c *[7]float32, wd, hat int) bool
