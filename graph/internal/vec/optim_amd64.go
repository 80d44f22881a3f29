package vec

// The optimizer kernels: Go does not vectorize the per-element updates of Adam or the
// non-finite scans that guard every step, and on a small model they cost as much as the
// step's matrix products. Each processes the largest multiple of 8 (float32) or 4 (float64)
// elements; callers finish the tail with the scalar loop the kernels reproduce bit for bit
// (no fused multiply-adds; sqrt and division are correctly rounded in both).

// AdamF32 applies m ← m + c[0]·(g′ − m), v ← c[1]·v + (c[2]·g′)·g′,
// p ← p − c[3]·(m / (√v / c[4] + c[5])) with g′ = gr + c[6]·p when wd != 0 (else gr), and
// reports whether any new p is NaN or infinite. With hat != 0 it adds ε to the uncorrected
// √v instead (Keras's and scikit-learn's form): p ← p − (c[3]·m) / (√v + c[5]), c[4] unused.
//
//go:noescape
func AdamF32(p, gr, m, v *float32, n int, c *[7]float32, wd, hat int) bool

// AdamProductF32 is AdamF32 on one row of a weight matrix whose gradient is the product
// Aᵀ·B, computed here rather than read: gr[j] = Σ_{q<k} a[q]·B[q][j] for j < n (a multiple
// of 8), a the row's k entries of A (its column of A), B[q] at b + q·ldb bytes; flags is
// wd | hat<<1. Each sum is the one graph/internal/sgemm's kernels compute for that element of
// the product: for the first seq entries (a multiple of 8, or ≥ n) one fused multiply-add a
// term from zero, q in order (Kern4x24, Kern1x8), for the others the even and the odd terms
// so in two sums, the last term of an odd k with the even ones, then even + odd (Kern4x8). So
// the update is AdamF32's after that product, to the bit. k ≥ 1.
//
//go:noescape
func AdamProductF32(p, m, v *float32, n, seq int, a *float32, k int, b *float32, ldb int, c *[7]float32, flags int) bool

// AdamF64 is AdamF32 in float64 (n a multiple of 4).
//
//go:noescape
func AdamF64(p, gr, m, v *float64, n int, c *[7]float64, wd, hat int) bool

// NonFiniteF32 reports whether any of x[0:n] is NaN or infinite.
//
//go:noescape
func NonFiniteF32(x *float32, n int) bool

// NonFiniteF64 reports whether any of x[0:n] is NaN or infinite (n a multiple of 4).
//
//go:noescape
func NonFiniteF64(x *float64, n int) bool

// AdamZeroStepsF32 applies k steps of AdamF32 with hat != 0, wd == 0 and a zero gradient to
// p[0:n], m and v (n a multiple of 8), keeping each vector of eight weights in registers through
// all k steps, and reports whether any final p is NaN or infinite. Step t's constants are the
// float32s at c + t·stride bytes: 1−β1 at offset 0, β2 at 4, the step size at 12 and ε at 20
// (graph.AdamCoeffs[float32]'s fields). Each step rounds exactly as AdamF32's does:
// m ← m + (1−β1)·(0 − m), v ← β2·v (its (1−β2)·0·0 term adds +0, which changes no v ≥ +0),
// p ← p − (step·m) / (√v + ε).
//
// At the steps where the count of steps left is a multiple of four it looks for still weights (a
// replay of fewer than four steps never looks), and from the step at which every weight of a
// vector is still — |m| ≤ Q·max(still, cvs·√v), where Q = 2^(e−26) for the weight's 2^e ≤ |p| <
// 2^(e+1), Q ≥ qmin, the bound normal, p finite, v ≥ 0 — it takes only the moments through the
// remaining steps: the caller vouches (graph's stillBounds) that then no step's (step·m)/(√v + ε)
// exceeds Q, half of the least distance (2^(e−25)) that takes p − x to another float, so that
// every p − (step·m)/(√v + ε) rounds back to p. A negative or NaN still, with cvs zero, turns
// this off. A block of sixteen whose weights are still waits, its moments in memory, for the next
// such block, and the two blocks' moments are replayed together (four chains of dependent
// operations in flight, not two).
//
//go:noescape
func AdamZeroStepsF32(p, m, v *float32, n int, c *float32, k, stride int, still, cvs, qmin float32) bool
