#include "textflag.h"

DATA ·one+0(SB)/4, $0x3f800000
GLOBL ·one(SB), RODATA|NOPTR, $4

// func AddF32(y, a, b *float32, n int): y[i] = a[i] + b[i] for i < n (n a multiple of 8).
TEXT ·AddF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
AddF32_32:
	CMPQ CX, $32
	JLT AddF32_8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VADDPS (DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VADDPS 64(DX), Y2, Y2
	VADDPS 96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP AddF32_32
AddF32_8:
	CMPQ CX, $8
	JLT AddF32_done
	VMOVUPS (SI), Y0
	VADDPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP AddF32_8
AddF32_done:
	VZEROUPPER
	RET

// func SubF32(y, a, b *float32, n int): y[i] = a[i] − b[i] for i < n (n a multiple of 8).
TEXT ·SubF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
SubF32_32:
	CMPQ CX, $32
	JLT SubF32_8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VSUBPS (DX), Y0, Y0
	VSUBPS 32(DX), Y1, Y1
	VSUBPS 64(DX), Y2, Y2
	VSUBPS 96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP SubF32_32
SubF32_8:
	CMPQ CX, $8
	JLT SubF32_done
	VMOVUPS (SI), Y0
	VSUBPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP SubF32_8
SubF32_done:
	VZEROUPPER
	RET

// func MulF32(y, a, b *float32, n int): y[i] = a[i] · b[i] for i < n (n a multiple of 8).
TEXT ·MulF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
MulF32_32:
	CMPQ CX, $32
	JLT MulF32_8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMULPS (DX), Y0, Y0
	VMULPS 32(DX), Y1, Y1
	VMULPS 64(DX), Y2, Y2
	VMULPS 96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP MulF32_32
MulF32_8:
	CMPQ CX, $8
	JLT MulF32_done
	VMOVUPS (SI), Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP MulF32_8
MulF32_done:
	VZEROUPPER
	RET

// func DivF32(y, a, b *float32, n int): y[i] = a[i] / b[i] for i < n (n a multiple of 8).
TEXT ·DivF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
DivF32_32:
	CMPQ CX, $32
	JLT DivF32_8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VDIVPS (DX), Y0, Y0
	VDIVPS 32(DX), Y1, Y1
	VDIVPS 64(DX), Y2, Y2
	VDIVPS 96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP DivF32_32
DivF32_8:
	CMPQ CX, $8
	JLT DivF32_done
	VMOVUPS (SI), Y0
	VDIVPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP DivF32_8
DivF32_done:
	VZEROUPPER
	RET

// func AffineF32(y, x *float32, n int, alpha, beta float32): y[i] = alpha·x[i] + beta (n a multiple of 8)
TEXT ·AffineF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ x+8(FP), DX
	MOVQ n+16(FP), CX
	VBROADCASTSS alpha+24(FP), Y14
	VBROADCASTSS beta+28(FP), Y15
AffineF32_32:
	CMPQ CX, $32
	JLT AffineF32_8
	VMOVUPS 0(SI), Y0
	VFMADD213PS Y15, Y14, Y0
	VMOVUPS 32(SI), Y1
	VFMADD213PS Y15, Y14, Y1
	VMOVUPS 64(SI), Y2
	VFMADD213PS Y15, Y14, Y2
	VMOVUPS 96(SI), Y3
	VFMADD213PS Y15, Y14, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP AffineF32_32
AffineF32_8:
	CMPQ CX, $8
	JLT AffineF32_done
	VMOVUPS 0(SI), Y0
	VFMADD213PS Y15, Y14, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP AffineF32_8
AffineF32_done:
	VZEROUPPER
	RET

// func ReluF32(y, x *float32, n int): y[i] = max(0, x[i]), NaN kept (n a multiple of 8)
TEXT ·ReluF32(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ x+8(FP), DX
	MOVQ n+16(FP), CX
	VXORPS Y15, Y15, Y15
ReluF32_32:
	CMPQ CX, $32
	JLT ReluF32_8
	VMAXPS 0(SI), Y15, Y0
	VMAXPS 32(SI), Y15, Y1
	VMAXPS 64(SI), Y15, Y2
	VMAXPS 96(SI), Y15, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP ReluF32_32
ReluF32_8:
	CMPQ CX, $8
	JLT ReluF32_done
	VMAXPS 0(SI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP ReluF32_8
ReluF32_done:
	VZEROUPPER
	RET

// func GateF32(y, x, gr *float32, n int): y[i] = gr[i] where x[i] > 0, else 0 (n a multiple of 8)
TEXT ·GateF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gr+16(FP), DX
	MOVQ n+24(FP), CX
	VXORPS Y15, Y15, Y15
GateF32_32:
	CMPQ CX, $32
	JLT GateF32_8
	VMOVUPS 0(SI), Y0
	VCMPPS $14, Y15, Y0, Y0
	VANDPS 0(DX), Y0, Y0
	VMOVUPS 32(SI), Y1
	VCMPPS $14, Y15, Y1, Y1
	VANDPS 32(DX), Y1, Y1
	VMOVUPS 64(SI), Y2
	VCMPPS $14, Y15, Y2, Y2
	VANDPS 64(DX), Y2, Y2
	VMOVUPS 96(SI), Y3
	VCMPPS $14, Y15, Y3, Y3
	VANDPS 96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP GateF32_32
GateF32_8:
	CMPQ CX, $8
	JLT GateF32_done
	VMOVUPS 0(SI), Y0
	VCMPPS $14, Y15, Y0, Y0
	VANDPS 0(DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP GateF32_8
GateF32_done:
	VZEROUPPER
	RET

// func StepF32(y, x *float32, n int): y[i] = 1 where x[i] > 0, else 0 (n a multiple of 8)
TEXT ·StepF32(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ x+8(FP), DX
	MOVQ n+16(FP), CX
	VXORPS Y15, Y15, Y15
	VBROADCASTSS ·one(SB), Y14
StepF32_32:
	CMPQ CX, $32
	JLT StepF32_8
	VMOVUPS 0(SI), Y0
	VCMPPS $14, Y15, Y0, Y0
	VANDPS Y14, Y0, Y0
	VMOVUPS 32(SI), Y1
	VCMPPS $14, Y15, Y1, Y1
	VANDPS Y14, Y1, Y1
	VMOVUPS 64(SI), Y2
	VCMPPS $14, Y15, Y2, Y2
	VANDPS Y14, Y2, Y2
	VMOVUPS 96(SI), Y3
	VCMPPS $14, Y15, Y3, Y3
	VANDPS Y14, Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP StepF32_32
StepF32_8:
	CMPQ CX, $8
	JLT StepF32_done
	VMOVUPS 0(SI), Y0
	VCMPPS $14, Y15, Y0, Y0
	VANDPS Y14, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP StepF32_8
StepF32_done:
	VZEROUPPER
	RET

// func SumF32(x *float32, n int) float32: Σ x[i] for i < n (n a multiple of 8), in 32 lanes.
TEXT ·SumF32(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
sum_32:
	CMPQ CX, $32
	JLT sum_8
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ $128, SI
	SUBQ $32, CX
	JMP sum_32
sum_8:
	CMPQ CX, $8
	JLT sum_done
	VADDPS (SI), Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP sum_8
sum_done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func DotF32(a, b *float32, n int) float32: Σ a[i]·b[i] for i < n (n a multiple of 8), in 32 lanes.
TEXT ·DotF32(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
dot_32:
	CMPQ CX, $32
	JLT dot_8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DX), Y4, Y0
	VFMADD231PS 32(DX), Y5, Y1
	VFMADD231PS 64(DX), Y6, Y2
	VFMADD231PS 96(DX), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DX
	SUBQ $32, CX
	JMP dot_32
dot_8:
	CMPQ CX, $8
	JLT dot_done
	VMOVUPS (SI), Y4
	VFMADD231PS (DX), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DX
	SUBQ $8, CX
	JMP dot_8
dot_done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func ArgMax2x2F32(out, r0, r1 *float32, n int, base, width float32, iota *float32)
// (iota: 0, 2, …, 14, then 1 and 16)
//
// For the 2×2, stride-2 max-pool windows w < n (n a multiple of 8) over rows r0 and r1 of a
// plane of the given width whose row r0 starts at plane index base: out[w] is the plane index
// of the window's first largest element, as a float32 (iota holds 0, 2, …, 14).
TEXT ·ArgMax2x2F32(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ iota+40(FP), AX
	VBROADCASTSS base+32(FP), Y13
	VADDPS (AX), Y13, Y13
	VBROADCASTSS width+36(FP), Y12
	VADDPS Y13, Y12, Y12
	VBROADCASTSS 32(AX), Y14
	VBROADCASTSS 36(AX), Y11
am_8:
	CMPQ CX, $8
	JLT am_done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VSHUFPS $0xDD, Y1, Y0, Y3
	VPERMPD $0xD8, Y2, Y2
	VPERMPD $0xD8, Y3, Y3
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VSHUFPS $0x88, Y1, Y0, Y4
	VSHUFPS $0xDD, Y1, Y0, Y5
	VPERMPD $0xD8, Y4, Y4
	VPERMPD $0xD8, Y5, Y5
	VCMPPS $14, Y2, Y3, Y6
	VBLENDVPS Y6, Y3, Y2, Y7
	VCMPPS $14, Y4, Y5, Y8
	VBLENDVPS Y8, Y5, Y4, Y9
	VCMPPS $14, Y7, Y9, Y10
	VANDPS Y14, Y6, Y6
	VANDPS Y14, Y8, Y8
	VADDPS Y13, Y6, Y6
	VADDPS Y12, Y8, Y8
	VBLENDVPS Y10, Y8, Y6, Y6
	VMOVUPS Y6, (DI)
	VADDPS Y11, Y13, Y13
	VADDPS Y11, Y12, Y12
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP am_8
am_done:
	VZEROUPPER
	RET

// func DivScalarF32(y, x *float32, c float32, n int)
// y[i] = x[i] / c for the first n elements (n a multiple of 8).
TEXT ·DivScalarF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	VBROADCASTSS c+16(FP), Y4
	MOVQ n+24(FP), CX
DivScalarF32_32:
	CMPQ CX, $32
	JLT DivScalarF32_8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VDIVPS Y4, Y0, Y0
	VDIVPS Y4, Y1, Y1
	VDIVPS Y4, Y2, Y2
	VDIVPS Y4, Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP DivScalarF32_32
DivScalarF32_8:
	CMPQ CX, $8
	JLT DivScalarF32_done
	VMOVUPS (SI), Y0
	VDIVPS Y4, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP DivScalarF32_8
DivScalarF32_done:
	VZEROUPPER
	RET

// func ScalarDivF32(y *float32, c float32, x *float32, n int)
// y[i] = c / x[i] for the first n elements (n a multiple of 8).
TEXT ·ScalarDivF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	VBROADCASTSS c+8(FP), Y4
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
ScalarDivF32_8:
	CMPQ CX, $8
	JLT ScalarDivF32_done
	VDIVPS (SI), Y4, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP ScalarDivF32_8
ScalarDivF32_done:
	VZEROUPPER
	RET

DATA ·argLanes+0(SB)/4, $0
DATA ·argLanes+4(SB)/4, $1
DATA ·argLanes+8(SB)/4, $2
DATA ·argLanes+12(SB)/4, $3
DATA ·argLanes+16(SB)/4, $4
DATA ·argLanes+20(SB)/4, $5
DATA ·argLanes+24(SB)/4, $6
DATA ·argLanes+28(SB)/4, $7
GLOBL ·argLanes(SB), RODATA|NOPTR, $32

// func ArgMaxRowF32(out, plane *float32, n, row, rows, width, kw, sw, col0 int)
//
// One row of max-pool windows, eight at a time: out[o] (o < n) is the plane index of the
// first largest element, in row-major order, of the window whose rows are row … row+rows−1 of
// the plane (all inside it) and whose columns are col0 + o·sw + k for k < kw, those outside
// 0 … width−1 being padding, as a float32. The first in-plane element of a window is its
// initial maximum and a later one replaces it only if greater (an ordered comparison: a NaN
// never replaces, and an initial NaN is never replaced), as the scalar loop does. Elements are
// read by masked gathers, so padding is never read.
TEXT ·ArgMaxRowF32(SB), NOSPLIT, $0-72
	MOVQ out+0(FP), DI
	MOVQ plane+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ row+24(FP), AX
	MOVQ rows+32(FP), R8
	MOVQ width+40(FP), R9
	MOVQ kw+48(FP), R10
	MOVQ sw+56(FP), R11
	MOVQ col0+64(FP), R12
	IMULQ R9, AX                 // the first row's offset in the plane
	VMOVDQU ·argLanes(SB), Y15   // lane numbers
	VMOVQ R11, X14               // (X14 and Y14 are scratch; Y0 holds the maxima)
	VPBROADCASTD X14, Y14
	VPMULLD Y14, Y15, Y13        // lane·sw
	VMOVQ R9, X14
	VPBROADCASTD X14, Y12        // width
	VPCMPEQD Y11, Y11, Y11       // −1 in every lane
	MOVQ R11, BX
	SHLQ $3, BX                  // 8·sw: the next eight windows' first column
amr_chunk:
	CMPQ CX, $0
	JLE amr_done
	VMOVQ CX, X14
	VPBROADCASTD X14, Y10
	VPCMPGTD Y15, Y10, Y10       // active: lane < windows left
	VMOVQ R12, X14
	VPBROADCASTD X14, Y9
	VPADDD Y13, Y9, Y9           // each window's first column
	VXORPS Y0, Y0, Y0            // best
	VPXOR Y1, Y1, Y1             // at
	VPXOR Y2, Y2, Y2             // have: some in-plane element seen
	MOVQ AX, R13
	MOVQ R8, R14
amr_row:
	TESTQ R14, R14
	JEQ amr_store
	VMOVQ R13, X14
	VPBROADCASTD X14, Y8          // the row's offset
	VMOVDQA Y9, Y3               // column of tap 0
	MOVQ R10, DX
amr_tap:
	VPCMPGTD Y11, Y3, Y4         // col > −1
	VPCMPGTD Y3, Y12, Y5         // width > col
	VPAND Y5, Y4, Y4
	VPAND Y10, Y4, Y4            // valid
	VPADDD Y8, Y3, Y5            // plane index
	VMOVDQA Y4, Y6
	VXORPS Y7, Y7, Y7
	VGATHERDPS Y6, (SI)(Y5*4), Y7
	VCMPPS $14, Y0, Y7, Y6       // e > best
	VPAND Y4, Y6, Y6
	VPANDN Y4, Y2, Y14           // valid and nothing seen yet
	VPOR Y14, Y6, Y6             // take
	VBLENDVPS Y6, Y7, Y0, Y0
	VBLENDVPS Y6, Y5, Y1, Y1
	VPOR Y4, Y2, Y2
	VPSUBD Y11, Y3, Y3           // next column
	DECQ DX
	JNZ amr_tap
	ADDQ R9, R13
	DECQ R14
	JMP amr_row
amr_store:
	VCVTDQ2PS Y1, Y1
	VMASKMOVPS Y1, Y10, (DI)
	ADDQ $32, DI
	SUBQ $8, CX
	ADDQ BX, R12
	JMP amr_chunk
amr_done:
	VZEROUPPER
	RET

// func Im2colTapF32(dst, src *float32, rows, n, lo, hi, sw, col0, lds int)
//
// One kernel tap of a strided convolution's im2col, eight columns at a time by masked
// gathers: dst[r·n + c] = src[r·lds + c·sw + col0] for lo ≤ c < hi and +0 for the other c < n
// (padding, never read), for r < rows. Indices must fit in 32 bits.
TEXT ·Im2colTapF32(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ n+24(FP), R9
	MOVQ lo+32(FP), R10
	MOVQ hi+40(FP), R11
	MOVQ sw+48(FP), R12
	MOVQ col0+56(FP), R13
	MOVQ lds+64(FP), R14
	VMOVDQU ·argLanes(SB), Y15   // lane numbers
	VMOVQ R12, X14
	VPBROADCASTD X14, Y14
	VPMULLD Y14, Y15, Y13        // lane·sw
	VPSLLD $3, Y14, Y6           // 8·sw
	DECQ R10
	VMOVQ R10, X14
	VPBROADCASTD X14, Y12        // lo − 1
	VMOVQ R11, X14
	VPBROADCASTD X14, Y11        // hi
	MOVL $8, AX
	VMOVQ AX, X14
	VPBROADCASTD X14, Y7         // 8
	XORQ AX, AX                  // r·lds
imt_row:
	TESTQ R8, R8
	JEQ imt_done
	LEAQ (AX)(R13*1), DX
	VMOVQ DX, X14
	VPBROADCASTD X14, Y9
	VPADDD Y13, Y9, Y9           // source index of column c (lane c)
	VMOVDQA Y15, Y8              // c
	MOVQ R9, CX                  // columns left
imt_chunk:
	CMPQ CX, $0
	JLE imt_next
	VPCMPGTD Y12, Y8, Y4         // c ≥ lo
	VPCMPGTD Y8, Y11, Y5         // c < hi
	VPAND Y5, Y4, Y4
	VXORPS Y0, Y0, Y0
	VGATHERDPS Y4, (SI)(Y9*4), Y0
	CMPQ CX, $8
	JLT imt_tail
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	SUBQ $8, CX
	VPADDD Y7, Y8, Y8
	VPADDD Y6, Y9, Y9
	JMP imt_chunk
imt_tail:
	VMOVQ CX, X14
	VPBROADCASTD X14, Y5
	VPCMPGTD Y15, Y5, Y5         // lane < columns left
	VMASKMOVPS Y0, Y5, (DI)
	LEAQ (DI)(CX*4), DI
imt_next:
	ADDQ R14, AX
	DECQ R8
	JMP imt_row
imt_done:
	VZEROUPPER
	RET

// func Im2colTableF32(dst *float32, ldd int, img *float32, hw int, tab *int32, c, l, np int)
//
// im2col through a gather table, eight positions at a time by masked gathers: for channel
// ch < c, tap t < l and position p < np, dst[(ch·l + t)·ldd + p] = img[ch·hw + e] where
// e = tab[t·np + p] ≥ 0, and +0 (padding, never read) where e < 0.
TEXT ·Im2colTableF32(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	SHLQ $2, R8
	MOVQ img+16(FP), SI
	MOVQ hw+24(FP), R9
	SHLQ $2, R9
	MOVQ tab+32(FP), R10
	MOVQ c+40(FP), R11
	MOVQ l+48(FP), R12
	MOVQ np+56(FP), R13
	VMOVDQU ·argLanes(SB), Y15   // lane numbers
	VPCMPEQD Y14, Y14, Y14       // −1
itab_ch:
	TESTQ R11, R11
	JEQ itab_done
	MOVQ R10, R14                // the tap's table row
	MOVQ R12, CX                 // taps left
itab_tap:
	TESTQ CX, CX
	JEQ itab_nextch
	MOVQ DI, AX
	MOVQ R14, BX
	MOVQ R13, DX                 // positions left
itab_chunk:
	CMPQ DX, $0
	JLE itab_nexttap
	VMOVQ DX, X13
	VPBROADCASTD X13, Y13
	VPCMPGTD Y15, Y13, Y13       // active: lane < positions left
	VPMASKMOVD (BX), Y13, Y1     // table entries
	VPCMPGTD Y14, Y1, Y2         // entry > −1
	VPAND Y13, Y2, Y2
	VXORPS Y0, Y0, Y0
	VGATHERDPS Y2, (SI)(Y1*4), Y0
	CMPQ DX, $8
	JLT itab_tail
	VMOVUPS Y0, (AX)
	ADDQ $32, AX
	ADDQ $32, BX
	SUBQ $8, DX
	JMP itab_chunk
itab_tail:
	VMASKMOVPS Y0, Y13, (AX)
itab_nexttap:
	ADDQ R8, DI
	LEAQ (R14)(R13*4), R14
	DECQ CX
	JMP itab_tap
itab_nextch:
	ADDQ R9, SI
	DECQ R11
	JMP itab_ch
itab_done:
	VZEROUPPER
	RET

// func FillF32(y *float32, v float32, n int): y[i] = v for i < n (n a multiple of 8).
TEXT ·FillF32(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	VBROADCASTSS v+8(FP), Y0
	MOVQ n+16(FP), CX
fill_32:
	CMPQ CX, $32
	JLT fill_8
	VMOVUPS Y0, (DI)
	VMOVUPS Y0, 32(DI)
	VMOVUPS Y0, 64(DI)
	VMOVUPS Y0, 96(DI)
	ADDQ $128, DI
	SUBQ $32, CX
	JMP fill_32
fill_8:
	CMPQ CX, $8
	JLT fill_done
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	SUBQ $8, CX
	JMP fill_8
fill_done:
	VZEROUPPER
	RET

// func SumPlanesF32(y, x *float32, c, hw int): y[i] += Σ x[i·hw … i·hw+hw−1] for i < c, each
// plane summed in SumF32's lanes and order (hw a multiple of 8): a channel's map at a time of
// an image, without a call per plane.
TEXT ·SumPlanesF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ c+16(FP), R8
	MOVQ hw+24(FP), R9
planes_loop:
	TESTQ R8, R8
	JZ planes_done
	MOVQ R9, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
planes_32:
	CMPQ CX, $32
	JLT planes_8
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ $128, SI
	SUBQ $32, CX
	JMP planes_32
planes_8:
	CMPQ CX, $8
	JLT planes_sum
	VADDPS (SI), Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP planes_8
planes_sum:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS (DI), X5
	// s + y: the operand order Go compiles y += s to, so that NaN payloads match too
	VADDSS X5, X0, X5
	VMOVSS X5, (DI)
	ADDQ $4, DI
	DECQ R8
	JMP planes_loop
planes_done:
	VZEROUPPER
	RET
