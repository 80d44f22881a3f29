//go:build !amd64

package sgemm

// Available is false: the kernels are amd64 assembly.
const Available = false

// HasAVX512 is false: the kernels are amd64 assembly.
const HasAVX512 = false

// UseAVX512 does nothing and reports false: there are no kernels on this architecture.
func UseAVX512(on bool) (was bool) { return false }

// Extension reports "none": graph falls back to its BLAS.
func Extension() string { return "none" }

// Gemm reports false: there are no kernels on this architecture.
func Gemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	return false
}

// DGemm reports false: there are no kernels on this architecture.
func DGemm(ta, tb bool, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) bool {
	return false
}

// ZenDotRows4 panics: there are no kernels on this architecture (graph.gemmZenNT, its only
// caller, declines where Available is false).
func ZenDotRows4(w *float32, ldw, rows int, dyt *float32, kb int, t *float32) {
	panic("sgemm: no kernels")
}

// Im2col reports false: there are no kernels on this architecture.
func (p *ShiftPlan) Im2col(img []float32, c int, cols []float32, ld, col0 int) bool { return false }

// Col2im reports false: there are no kernels on this architecture.
func (p *ShiftPlan) Col2im(cols []float32, ld, col0 int, img []float32, c int) bool { return false }
