//go:build !amd64

// Package vec holds hyperflat's float32 elementwise kernels in AVX2 assembly; on other
// architectures it is empty and Available is false.
package vec

const Available = false

func AddF32(y, a, b *float32, n int)                        { panic("vec: no kernels") }
func SubF32(y, a, b *float32, n int)                        { panic("vec: no kernels") }
func MulF32(y, a, b *float32, n int)                        { panic("vec: no kernels") }
func DivF32(y, a, b *float32, n int)                        { panic("vec: no kernels") }
func DivScalarF32(y, x *float32, c float32, n int)          { panic("vec: no kernels") }
func ScalarDivF32(y *float32, c float32, x *float32, n int) { panic("vec: no kernels") }
func AffineF32(y, x *float32, n int, alpha, beta float32)   { panic("vec: no kernels") }
func ReluF32(y, x *float32, n int)                          { panic("vec: no kernels") }
func GateF32(y, x, gr *float32, n int)                      { panic("vec: no kernels") }
func StepF32(y, x *float32, n int)                          { panic("vec: no kernels") }
func SumF32(x *float32, n int) float32                      { panic("vec: no kernels") }

func DotF32(a, b *float32, n int) float32 { panic("vec: no kernels") }

func SumPlanesF32(y, x *float32, c, hw int) { panic("vec: no kernels") }

func FillF32(y *float32, v float32, n int) { panic("vec: no kernels") }

func ArgMax2x2F32(out, r0, r1 *float32, n int, base, width float32, iota *float32) {
	panic("vec: no kernels")
}

func ArgMaxRowF32(out, plane *float32, n, row, rows, width, kw, sw, col0 int) {
	panic("vec: no kernels")
}

func Im2colTapF32(dst, src *float32, rows, n, lo, hi, sw, col0, lds int) { panic("vec: no kernels") }

func Im2colTableF32(dst *float32, ldd int, img *float32, hw int, tab *int32, c, l, np int) {
	panic("vec: no kernels")
}

func AdamF32(p, gr, m, v *float32, n int, c *[7]float32, wd, hat int) bool { panic("vec: no kernels") }
func AdamProductF32(p, m, v *float32, n, seq int, a *float32, k int, b *float32, ldb int, c *[7]float32, flags int) bool {
	panic("vec: no kernels")
}
func AdamF64(p, gr, m, v *float64, n int, c *[7]float64, wd, hat int) bool { panic("vec: no kernels") }
func AdamZeroStepsF32(p, m, v *float32, n int, c *float32, k, stride int, still, cvs, qmin float32) bool {
	panic("vec: no kernels")
}
func NonFiniteF32(x *float32, n int) bool { panic("vec: no kernels") }
func NonFiniteF64(x *float64, n int) bool { panic("vec: no kernels") }
func ClearNT(p *byte, n int)              { panic("vec: no kernels") }

const (
	RMSWeightDecay = 1 << iota
	RMSCentered
	RMSMomentum
)

func RMSpropF32(p, gr, s, a, b *float32, n int, c *[6]float32, flags int) bool {
	panic("vec: no kernels")
}
func RMSpropF64(p, gr, s, a, b *float64, n int, c *[6]float64, flags int) bool {
	panic("vec: no kernels")
}
func LangevinF64(p, gr, xi *float64, n int, eta, std float64, noise int) bool {
	panic("vec: no kernels")
}
func LangevinF32(p, gr *float32, xi *float64, n int, eta, std float64, noise int) bool {
	panic("vec: no kernels")
}

func SpRowF32(c, b *float32, ldb int, idx *int32, val *float32, nnz, n int) {
	panic("vec: no kernels")
}
func SpRowF64(c, b *float64, ldb int, idx *int32, val *float64, nnz, n int) {
	panic("vec: no kernels")
}
func FirstNonzeroF32(x *float32, n int) int { panic("vec: no kernels") }
func FirstNonzeroF64(x *float64, n int) int { panic("vec: no kernels") }
func CountNonzeroF32(x *float32, n int) int { panic("vec: no kernels") }
func CountNonzeroF64(x *float64, n int) int { panic("vec: no kernels") }

const HasAVX512 = false

func AdamF32Z(p, gr, m, v *float32, n int, c *[7]float32, wd, hat int) bool {
	panic("vec: no kernels")
}
