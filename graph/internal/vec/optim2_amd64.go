package vec

// The RMSprop and Langevin kernels, under the same contract as AdamF32: the largest multiple
// of 8 (RMSprop float32) or 4 elements, bit for bit the scalar loops callers finish the tail
// with (no fused multiply-adds), and a report of whether any new p is NaN or infinite.

// RMSprop flags.
const (
	RMSWeightDecay = 1 << iota // g′ = g + c[5]·p
	RMSCentered                // keep the mean gradient a
	RMSMomentum                // keep the momentum buffer b
)

// RMSpropF32 applies, with g′ = gr + c[5]·p under RMSWeightDecay (else gr),
// s ← c[0]·s + (c[1]·g′)·g′; under RMSCentered a ← a + c[1]·(g′ − a) and
// r = √max(s − a·a, 0) + c[2], else r = √s + c[2]; under RMSMomentum b ← c[4]·b + g′/r and
// p ← p − c[3]·b, else p ← p − c[3]·(g′/r). a and b are read only under their flags.
//
//go:noescape
func RMSpropF32(p, gr, s, a, b *float32, n int, c *[6]float32, flags int) bool

// RMSpropF64 is RMSpropF32 in float64 (n a multiple of 4).
//
//go:noescape
func RMSpropF64(p, gr, s, a, b *float64, n int, c *[6]float64, flags int) bool

// LangevinF64 applies p ← (p − eta·gr) + std·xi, or p ← p − eta·gr when noise is 0 (xi
// unread), n a multiple of 4.
//
//go:noescape
func LangevinF64(p, gr, xi *float64, n int, eta, std float64, noise int) bool

// LangevinF32 is LangevinF64 on float32 p and gr, computed in float64 and rounded to float32
// (n a multiple of 4).
//
//go:noescape
func LangevinF32(p, gr *float32, xi *float64, n int, eta, std float64, noise int) bool
