package main

import "golang.org/x/sys/cpu"

//go:noescape
func fmaLoop(n int)

//go:noescape
func fmaLoop512(n int)

// fmaFlopsPerIter is the float32 FLOPs of one fmaLoop iteration: 12 FMAs of 8 lanes, 2 each.
const fmaFlopsPerIter = 12 * 8 * 2

func haveFMA() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }

// peakLoop is the FMA loop of the widest registers the CPU has, and its FLOPs an iteration:
// on AVX-512 the peak is twice AVX2's where the core has full-width FMA units (Zen 5, most
// Xeons), and a fraction of peak must be one of the machine's.
func peakLoop() (func(int), float64, string) {
	if cpu.X86.HasAVX512F {
		return fmaLoop512, 2 * fmaFlopsPerIter, "avx512"
	}
	return fmaLoop, fmaFlopsPerIter, "avx2"
}

// cpuFeatures lists the vector extensions of the CPU that matter here.
func cpuFeatures() string {
	f := "sse2"
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		f = "avx2 fma"
	}
	if cpu.X86.HasAVX512F {
		f += " avx512f"
	}
	return f
}
