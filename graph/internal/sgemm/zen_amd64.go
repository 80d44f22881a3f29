package sgemm

// ZenDotRows4 adds to t[4i:4i+4], for each of rows rows of w (a multiple of 4; ldw bytes
// apart, kb entries each from w), the four sums Σ_p w[i][p]·dyt[p][b] (b < 4; dyt kb×4,
// row-major), each taken as OpenBLAS 0.3.21's Zen sgemm kernel takes a product's sum over one
// panel of its inner dimension with four rows of A: the even and the odd terms in two chains
// of fused multiply-adds from zero, then even + odd, then t + that. kb is even and at least 2.
// (graph.gemmZenNT computes dY·Wᵀ at a batch of four with it, to OpenBLAS's bits.)
//
//go:noescape
func ZenDotRows4(w *float32, ldw, rows int, dyt *float32, kb int, t *float32)
