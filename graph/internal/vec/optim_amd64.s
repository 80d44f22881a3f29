#include "textflag.h"

// ADAMCONSTS broadcasts AdamF32's constants c (at AX) into Y8–Y14 (1−β1, β2, 1−β2, the step
// size, √(1−β2ᵗ), ε, weight decay), the float32 exponent mask into Y15, and clears Y7, where
// the non-finite lanes of the new weights gather; it clobbers AX.
#define ADAMCONSTS \
	VBROADCASTSS 0(AX), Y8; \
	VBROADCASTSS 4(AX), Y9; \
	VBROADCASTSS 8(AX), Y10; \
	VBROADCASTSS 12(AX), Y11; \
	VBROADCASTSS 16(AX), Y12; \
	VBROADCASTSS 20(AX), Y13; \
	VBROADCASTSS 24(AX), Y14; \
	MOVL $0x7f800000, AX; \
	MOVD AX, X15; \
	VPBROADCASTD X15, Y15; \
	VPXOR Y7, Y7, Y7

// func AdamF32(p, gr, m, v *float32, n int, c *[7]float32, wd, hat int) bool
TEXT ·AdamF32(SB), NOSPLIT, $0-65
	MOVQ p+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	MOVQ wd+48(FP), R9
	MOVQ hat+56(FP), R10
	ADAMCONSTS
AdamF32_loop:
	CMPQ CX, $8
	JLT AdamF32_done
	VMOVUPS (SI), Y0
	VMOVUPS (DI), Y1
	TESTQ R9, R9
	JZ AdamF32_nowd
	VMULPS Y1, Y14, Y2
	VADDPS Y2, Y0, Y0
AdamF32_nowd:
	VMOVUPS (DX), Y2
	VSUBPS Y2, Y0, Y3
	VMULPS Y3, Y8, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, (DX)
	VMOVUPS (R8), Y4
	VMULPS Y4, Y9, Y4
	VMULPS Y0, Y10, Y5
	VMULPS Y0, Y5, Y5
	VADDPS Y5, Y4, Y4
	VMOVUPS Y4, (R8)
	VSQRTPS Y4, Y5
	TESTQ R10, R10
	JNZ AdamF32_hat
	VDIVPS Y12, Y5, Y5
	VADDPS Y13, Y5, Y5
	VDIVPS Y5, Y2, Y5
	VMULPS Y5, Y11, Y5
	JMP AdamF32_step
AdamF32_hat:
	VADDPS Y13, Y5, Y5
	VMULPS Y2, Y11, Y3
	VDIVPS Y5, Y3, Y5
AdamF32_step:
	VSUBPS Y5, Y1, Y1
	VMOVUPS Y1, (DI)
	VANDPS Y15, Y1, Y6
	VPCMPEQD Y15, Y6, Y6
	VPOR Y6, Y7, Y7
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	SUBQ $8, CX
	JMP AdamF32_loop
AdamF32_done:
	VPTEST Y7, Y7
	SETNE ret+64(FP)
	VZEROUPPER
	RET

// ADAMROW is AdamF32's update of the 8 weights at OFF(DI), OFF(DX), OFF(R8) (p, m, v) from
// the gradient in G, with the constants of AdamProductF32 (Y8–Y15, flags R9) and P, M, T, V, S
// as scratch; it ORs the new p's exponent-all-ones lanes into Y7. Every operation and operand
// order is AdamF32's.
#define ADAMROW(OFF, G, P, M, T, V, S, NOWD, HAT, STEP) \
	VMOVUPS OFF(DI), P; \
	TESTQ $1, R9; \
	JZ NOWD; \
	VMULPS P, Y14, M; \
	VADDPS M, G, G; \
NOWD: \
	VMOVUPS OFF(DX), M; \
	VSUBPS M, G, T; \
	VMULPS T, Y8, T; \
	VADDPS T, M, M; \
	VMOVUPS M, OFF(DX); \
	VMOVUPS OFF(R8), V; \
	VMULPS V, Y9, V; \
	VMULPS G, Y10, S; \
	VMULPS G, S, S; \
	VADDPS S, V, V; \
	VMOVUPS V, OFF(R8); \
	VSQRTPS V, S; \
	TESTQ $2, R9; \
	JNZ HAT; \
	VDIVPS Y12, S, S; \
	VADDPS Y13, S, S; \
	VDIVPS S, M, S; \
	VMULPS S, Y11, S; \
	JMP STEP; \
HAT: \
	VADDPS Y13, S, S; \
	VMULPS M, Y11, T; \
	VDIVPS S, T, S; \
STEP: \
	VSUBPS S, P, P; \
	VMOVUPS P, OFF(DI); \
	VANDPS Y15, P, S; \
	VPCMPEQD Y15, S, S; \
	VPOR S, Y7, Y7

// func AdamProductF32(p, m, v *float32, n, seq int, a *float32, k int, b *float32, ldb int, c *[7]float32, flags int) bool
TEXT ·AdamProductF32(SB), NOSPLIT, $0-89
	MOVQ p+0(FP), DI
	MOVQ m+8(FP), DX
	MOVQ v+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ seq+32(FP), R10
	MOVQ a+40(FP), R11
	MOVQ k+48(FP), R12
	MOVQ b+56(FP), SI
	MOVQ ldb+64(FP), R13
	MOVQ c+72(FP), AX
	MOVQ flags+80(FP), R9
	ADAMCONSTS
AdamProductF32_loop2:
	// two vectors at a time where both take the same sum: their chains overlap
	CMPQ CX, $16
	JLT AdamProductF32_loop
	CMPQ R10, $8
	JEQ AdamProductF32_loop
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ SI, R14
	MOVQ R11, BX
	MOVQ R12, AX
	CMPQ R10, $0
	JLE AdamProductF32_two2
	// g = Σ a[q]·B[q, j:j+8], one FMA a term from zero, q in order (Kern4x24, Kern1x8)
AdamProductF32_g2:
	VBROADCASTSS (BX), Y6
	VFMADD231PS (R14), Y6, Y0
	VFMADD231PS 32(R14), Y6, Y1
	ADDQ R13, R14
	ADDQ $4, BX
	DECQ AX
	JNE AdamProductF32_g2
	JMP AdamProductF32_have2
AdamProductF32_two2:
	// as Kern4x8: even terms and odd terms in two sums (the last of an odd k with the even
	// ones), then their sum
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	SHRQ $1, AX
	JEQ AdamProductF32_odd2
AdamProductF32_pair2:
	VBROADCASTSS (BX), Y6
	VFMADD231PS (R14), Y6, Y0
	VFMADD231PS 32(R14), Y6, Y1
	VBROADCASTSS 4(BX), Y5
	VFMADD231PS (R14)(R13*1), Y5, Y3
	VFMADD231PS 32(R14)(R13*1), Y5, Y4
	LEAQ (R14)(R13*2), R14
	ADDQ $8, BX
	DECQ AX
	JNE AdamProductF32_pair2
AdamProductF32_odd2:
	TESTQ $1, R12
	JEQ AdamProductF32_sum2
	VBROADCASTSS (BX), Y6
	VFMADD231PS (R14), Y6, Y0
	VFMADD231PS 32(R14), Y6, Y1
AdamProductF32_sum2:
	VADDPS Y3, Y0, Y0
	VADDPS Y4, Y1, Y1
AdamProductF32_have2:
	ADAMROW(0, Y0, Y2, Y3, Y4, Y5, Y6, AdamProductF32_nowd2a, AdamProductF32_hat2a, AdamProductF32_step2a)
	ADAMROW(32, Y1, Y2, Y3, Y4, Y5, Y6, AdamProductF32_nowd2b, AdamProductF32_hat2b, AdamProductF32_step2b)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R8
	SUBQ $16, CX
	SUBQ $16, R10
	JMP AdamProductF32_loop2
AdamProductF32_loop:
	CMPQ CX, $8
	JLT AdamProductF32_done
	VXORPS Y0, Y0, Y0
	MOVQ SI, R14
	MOVQ R11, BX
	MOVQ R12, AX
	CMPQ R10, $0
	JLE AdamProductF32_two
AdamProductF32_g:
	VBROADCASTSS (BX), Y6
	VFMADD231PS (R14), Y6, Y0
	ADDQ R13, R14
	ADDQ $4, BX
	DECQ AX
	JNE AdamProductF32_g
	JMP AdamProductF32_have
AdamProductF32_two:
	VXORPS Y3, Y3, Y3
	SHRQ $1, AX
	JEQ AdamProductF32_odd
AdamProductF32_pair:
	VBROADCASTSS (BX), Y6
	VFMADD231PS (R14), Y6, Y0
	VBROADCASTSS 4(BX), Y5
	VFMADD231PS (R14)(R13*1), Y5, Y3
	LEAQ (R14)(R13*2), R14
	ADDQ $8, BX
	DECQ AX
	JNE AdamProductF32_pair
AdamProductF32_odd:
	TESTQ $1, R12
	JEQ AdamProductF32_sum
	VBROADCASTSS (BX), Y6
	VFMADD231PS (R14), Y6, Y0
AdamProductF32_sum:
	VADDPS Y3, Y0, Y0
AdamProductF32_have:
	ADAMROW(0, Y0, Y1, Y2, Y3, Y4, Y5, AdamProductF32_nowd, AdamProductF32_hat, AdamProductF32_step)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	SUBQ $8, CX
	SUBQ $8, R10
	JMP AdamProductF32_loop2
AdamProductF32_done:
	VPTEST Y7, Y7
	SETNE ret+88(FP)
	VZEROUPPER
	RET

// func AdamF64(p, gr, m, v *float64, n int, c *[7]float64, wd, hat int) bool
TEXT ·AdamF64(SB), NOSPLIT, $0-65
	MOVQ p+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	MOVQ wd+48(FP), R9
	MOVQ hat+56(FP), R10
	VBROADCASTSD 0(AX), Y8
	VBROADCASTSD 8(AX), Y9
	VBROADCASTSD 16(AX), Y10
	VBROADCASTSD 24(AX), Y11
	VBROADCASTSD 32(AX), Y12
	VBROADCASTSD 40(AX), Y13
	VBROADCASTSD 48(AX), Y14
	MOVQ $0x7ff0000000000000, AX
	MOVQ AX, X15
	VPBROADCASTQ X15, Y15
	VPXOR Y7, Y7, Y7
AdamF64_loop:
	CMPQ CX, $4
	JLT AdamF64_done
	VMOVUPD (SI), Y0
	VMOVUPD (DI), Y1
	TESTQ R9, R9
	JZ AdamF64_nowd
	VMULPD Y1, Y14, Y2
	VADDPD Y2, Y0, Y0
AdamF64_nowd:
	VMOVUPD (DX), Y2
	VSUBPD Y2, Y0, Y3
	VMULPD Y3, Y8, Y3
	VADDPD Y3, Y2, Y2
	VMOVUPD Y2, (DX)
	VMOVUPD (R8), Y4
	VMULPD Y4, Y9, Y4
	VMULPD Y0, Y10, Y5
	VMULPD Y0, Y5, Y5
	VADDPD Y5, Y4, Y4
	VMOVUPD Y4, (R8)
	VSQRTPD Y4, Y5
	TESTQ R10, R10
	JNZ AdamF64_hat
	VDIVPD Y12, Y5, Y5
	VADDPD Y13, Y5, Y5
	VDIVPD Y5, Y2, Y5
	VMULPD Y5, Y11, Y5
	JMP AdamF64_step
AdamF64_hat:
	VADDPD Y13, Y5, Y5
	VMULPD Y2, Y11, Y3
	VDIVPD Y5, Y3, Y5
AdamF64_step:
	VSUBPD Y5, Y1, Y1
	VMOVUPD Y1, (DI)
	VANDPD Y15, Y1, Y6
	VPCMPEQQ Y15, Y6, Y6
	VPOR Y6, Y7, Y7
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	SUBQ $4, CX
	JMP AdamF64_loop
AdamF64_done:
	VPTEST Y7, Y7
	SETNE ret+64(FP)
	VZEROUPPER
	RET

// func NonFiniteF32(x *float32, n int) bool
TEXT ·NonFiniteF32(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL $0x7f800000, AX
	MOVD AX, X15
	VPBROADCASTD X15, Y15
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
NonFiniteF32_32:
	CMPQ CX, $32
	JLT NonFiniteF32_8
	VANDPS (SI), Y15, Y0
	VANDPS 32(SI), Y15, Y1
	VANDPS 64(SI), Y15, Y2
	VANDPS 96(SI), Y15, Y3
	VPCMPEQD Y15, Y0, Y0
	VPCMPEQD Y15, Y1, Y1
	VPCMPEQD Y15, Y2, Y2
	VPCMPEQD Y15, Y3, Y3
	VPOR Y0, Y1, Y1
	VPOR Y2, Y3, Y3
	VPOR Y1, Y6, Y6
	VPOR Y3, Y7, Y7
	ADDQ $128, SI
	SUBQ $32, CX
	JMP NonFiniteF32_32
NonFiniteF32_8:
	CMPQ CX, $8
	JLT NonFiniteF32_done
	VANDPS (SI), Y15, Y0
	VPCMPEQD Y15, Y0, Y0
	VPOR Y0, Y6, Y6
	ADDQ $32, SI
	SUBQ $8, CX
	JMP NonFiniteF32_8
NonFiniteF32_done:
	VPOR Y6, Y7, Y7
	VPTEST Y7, Y7
	SETNE ret+16(FP)
	VZEROUPPER
	RET

// func NonFiniteF64(x *float64, n int) bool
TEXT ·NonFiniteF64(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ $0x7ff0000000000000, AX
	MOVQ AX, X15
	VPBROADCASTQ X15, Y15
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
NonFiniteF64_16:
	CMPQ CX, $16
	JLT NonFiniteF64_4
	VANDPD (SI), Y15, Y0
	VANDPD 32(SI), Y15, Y1
	VANDPD 64(SI), Y15, Y2
	VANDPD 96(SI), Y15, Y3
	VPCMPEQQ Y15, Y0, Y0
	VPCMPEQQ Y15, Y1, Y1
	VPCMPEQQ Y15, Y2, Y2
	VPCMPEQQ Y15, Y3, Y3
	VPOR Y0, Y1, Y1
	VPOR Y2, Y3, Y3
	VPOR Y1, Y6, Y6
	VPOR Y3, Y7, Y7
	ADDQ $128, SI
	SUBQ $16, CX
	JMP NonFiniteF64_16
NonFiniteF64_4:
	CMPQ CX, $4
	JLT NonFiniteF64_done
	VANDPD (SI), Y15, Y0
	VPCMPEQQ Y15, Y0, Y0
	VPOR Y0, Y6, Y6
	ADDQ $32, SI
	SUBQ $4, CX
	JMP NonFiniteF64_4
NonFiniteF64_done:
	VPOR Y6, Y7, Y7
	VPTEST Y7, Y7
	SETNE ret+16(FP)
	VZEROUPPER
	RET

// MVSTEP takes the moments of eight weights in M, V through one zero-gradient step of
// AdamF32's ε̂ form, with 1−β1 in Y10 and β2 in Y11, T as scratch: v ← β2·v and
// m ← m − (1−β1)·m, which is AdamF32's m + (1−β1)·(0 − m) to the bit (0 − m is −m exactly, a
// product's rounding is symmetric in sign, and m + (−y) is m − y), in two dependent operations
// rather than three.
#define MVSTEP(M, V, T) MVSTEPK(M, V, T, Y10, Y11)

// MVSTEPK is MVSTEP with 1−β1 in K1 and β2 in K2.
#define MVSTEPK(M, V, T, K1, K2) \
	VMULPS K1, M, T; \
	VSUBPS T, M, M; \
	VMULPS K2, V, V

// PSTEP is the weights' part of that step, after MVSTEP: p ← p − (step·m) / (√v + ε), with
// the step size in Y12 and ε in Y13, T and U as scratch.
#define PSTEP(P, M, V, T, U) \
	VSQRTPS V, U; \
	VADDPS Y13, U, U; \
	VMULPS Y12, M, T; \
	VDIVPS U, T, U; \
	VSUBPS U, P, P

// STEPCONSTS broadcasts step SI's constants (graph.AdamCoeffs[float32] fields) into Y10–Y13.
#define STEPCONSTS \
	VBROADCASTSS 0(SI), Y10; \
	VBROADCASTSS 4(SI), Y11; \
	VBROADCASTSS 12(SI), Y12; \
	VBROADCASTSS 20(SI), Y13

// NONFINITE ORs into Y14 the lanes of P that are NaN or infinite (Y15: the exponent mask).
#define NONFINITE(P) \
	VANDPS Y15, P, Y6; \
	VPCMPEQD Y15, Y6, Y6; \
	VPOR Y6, Y14, Y14

// STILLAT stores at DST, for each of the eight weights in P with second moments in V, the
// bound on |m| under which no step changes the weight (see AdamZeroStepsF32):
// Q·max(still, cvs·√v), Q = 2^(e−26) for 2^e ≤ |p| < 2^(e+1), where Q ≥ qmin, the bound is
// normal and p finite; elsewhere all ones, a NaN, which no |m| is under. Y6–Y8 scratch.
#define STILLAT(P, V, DST) \
	VPAND Y15, P, Y6; \
	VPCMPEQD Y15, Y6, Y7; \
	VPSUBD e26-192(SP), Y6, Y6; \
	VCMPPS $0x0D, qminv-160(SP), Y6, Y8; \
	VPANDN Y8, Y7, Y7; \
	VSQRTPS V, Y8; \
	VMULPS cvsv-256(SP), Y8, Y8; \
	VMAXPS stillv-128(SP), Y8, Y8; \
	VMULPS Y8, Y6, Y6; \
	VCMPPS $0x0D, minnorm-224(SP), Y6, Y8; \
	VPAND Y8, Y7, Y7; \
	VCMPPS $0x01, Y15, Y6, Y8; \
	VPAND Y8, Y7, Y7; \
	VPAND Y7, Y6, Y6; \
	VPCMPEQD Y8, Y8, Y8; \
	VPANDN Y8, Y7, Y7; \
	VPOR Y7, Y6, Y6; \
	VMOVUPS Y6, DST

// UNDER sets T's lanes where |M| is at most the bound stored at AT.
#define UNDER(M, AT, T) \
	VANDPS absv-96(SP), M, T; \
	VCMPPS $0x02, AT, T, T

// func AdamZeroStepsF32(p, m, v *float32, n int, c *float32, k, stride int, still, cvs, qmin float32) bool
TEXT ·AdamZeroStepsF32(SB), NOSPLIT, $288-73

// WAITLOAD loads the waiting still block's moments into Y6–Y9 (m, v, m, v) and its next
// step's address into R12 (see zs16moments); WAITSTORE stores Y6–Y9 back (R12 scratch).
#define WAITLOAD \
	MOVQ pdx-264(SP), R12; \
	VMOVUPS (R12), Y6; \
	VMOVUPS 32(R12), Y8; \
	MOVQ pr8-272(SP), R12; \
	VMOVUPS (R12), Y7; \
	VMOVUPS 32(R12), Y9; \
	MOVQ psi-280(SP), R12

#define WAITSTORE \
	MOVQ pdx-264(SP), R12; \
	VMOVUPS Y6, (R12); \
	VMOVUPS Y8, 32(R12); \
	MOVQ pr8-272(SP), R12; \
	VMOVUPS Y7, (R12); \
	VMOVUPS Y9, 32(R12)

// STILLCONSTS stores the constants STILLAT and UNDER read (once a call, when R10 is 0: a
// replay of a few steps, which looks for no still weights, does without them) and sets R10.
// Y6 and R12 scratch.
#define STILLCONSTS \
	VBROADCASTSS still+56(FP), Y6; \
	VMOVUPS Y6, stillv-128(SP); \
	VBROADCASTSS cvs+60(FP), Y6; \
	VMOVUPS Y6, cvsv-256(SP); \
	VBROADCASTSS qmin+64(FP), Y6; \
	VMOVUPS Y6, qminv-160(SP); \
	MOVL $0x0d000000, R12; \
	MOVD R12, X6; \
	VPBROADCASTD X6, Y6; \
	VMOVUPS Y6, e26-192(SP); \
	MOVL $0x00800000, R12; \
	MOVD R12, X6; \
	VPBROADCASTD X6, Y6; \
	VMOVUPS Y6, minnorm-224(SP); \
	VPCMPEQD Y6, Y6, Y6; \
	VPSRLD $1, Y6, Y6; \
	VMOVUPS Y6, absv-96(SP); \
	MOVL $1, R10

	MOVQ p+0(FP), DI
	MOVQ m+8(FP), DX
	MOVQ v+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ c+32(FP), AX
	MOVQ k+40(FP), R9
	MOVQ stride+48(FP), R11
	MOVL $0x7f800000, R10
	MOVD R10, X15
	VPBROADCASTD X15, Y15
	VPXOR Y14, Y14, Y14
	XORL R10, R10 // STILLCONSTS not yet stored
	MOVQ $0, pbx-288(SP) // no still block waits (see zs16moments)
	TESTQ R9, R9
	JEQ zsdone
zs16:
	CMPQ CX, $16
	JLT zs16flush
	VMOVUPS (DI), Y0
	VMOVUPS (DX), Y1
	VMOVUPS (R8), Y2
	VMOVUPS 32(DI), Y3
	VMOVUPS 32(DX), Y4
	VMOVUPS 32(R8), Y5
	XORL R13, R13
	MOVQ AX, SI
	MOVQ R9, BX
zs16step:
	STEPCONSTS
	MVSTEP(Y1, Y2, Y6)
	MVSTEP(Y4, Y5, Y8)
	// look for still weights at every fourth step only, and take their bounds (STILLAT's
	// square roots) at the first look: a replay of a few steps, where no weight stops, then
	// costs what it did without the looks
	TESTQ $3, BX
	JNE zs16p
	TESTQ R13, R13
	JNE zs16under
	TESTL R10, R10
	JNE zs16consts
	STILLCONSTS
zs16consts:
	STILLAT(Y0, Y2, stilla-32(SP))
	STILLAT(Y3, Y5, stillb-64(SP))
	MOVL $1, R13
zs16under:
	UNDER(Y1, stilla-32(SP), Y6)
	UNDER(Y4, stillb-64(SP), Y7)
	VANDPS Y6, Y7, Y6
	VMOVMSKPS Y6, R12
	CMPL R12, $0xff
	JEQ zs16still
zs16p:
	PSTEP(Y0, Y1, Y2, Y6, Y7)
	PSTEP(Y3, Y4, Y5, Y8, Y9)
	ADDQ R11, SI
	DECQ BX
	JNE zs16step
	JMP zs16store
zs16still:
	// every |m| is under the bound its weight had when last looked at: look again, at
	// the weights as they are now; if every |m| is under its bound and no v is NaN or
	// negative, no weight moves at this step or any later one (|m| only shrinks), and only
	// the moments go on
	STILLAT(Y0, Y2, stilla-32(SP))
	STILLAT(Y3, Y5, stillb-64(SP))
	UNDER(Y1, stilla-32(SP), Y6)
	UNDER(Y4, stillb-64(SP), Y7)
	VANDPS Y6, Y7, Y6
	VXORPS Y8, Y8, Y8
	VCMPPS $0x0D, Y8, Y2, Y9
	VANDPS Y9, Y6, Y6
	VCMPPS $0x0D, Y8, Y5, Y9
	VANDPS Y9, Y6, Y6
	VMOVMSKPS Y6, R12
	CMPL R12, $0xff
	JNE zs16p
zs16moments:
	// the block's weights are still: they are final; its moments go on, replayed together
	// with another still block's when one waits (four chains of dependent operations in
	// flight rather than two), or else it waits for the next still block, its moments in
	// memory at pdx, pr8, its next step at psi and the count of steps left in pbx
	VMOVUPS Y0, (DI)
	VMOVUPS Y3, 32(DI)
	NONFINITE(Y0)
	NONFINITE(Y3)
	ADDQ R11, SI
	DECQ BX
	JEQ zs16mvstore
	MOVQ pbx-288(SP), R13
	TESTQ R13, R13
	JNE zs16pair
zs16park:
	VMOVUPS Y1, (DX)
	VMOVUPS Y2, (R8)
	VMOVUPS Y4, 32(DX)
	VMOVUPS Y5, 32(R8)
	MOVQ DX, pdx-264(SP)
	MOVQ R8, pr8-272(SP)
	MOVQ SI, psi-280(SP)
	MOVQ BX, pbx-288(SP)
	JMP zs16next
zs16pair:
	// the waiting block's moments into Y6–Y9, its next step in R12 and steps left in R13;
	// Y0 and Y3 (the weights, stored) are the scratch
	WAITLOAD
zs16pairstep:
	VBROADCASTSS 0(SI), Y10
	VBROADCASTSS 4(SI), Y11
	VBROADCASTSS 0(R12), Y12
	VBROADCASTSS 4(R12), Y13
	MVSTEP(Y1, Y2, Y0)
	MVSTEP(Y4, Y5, Y3)
	MVSTEPK(Y6, Y7, Y0, Y12, Y13)
	MVSTEPK(Y8, Y9, Y3, Y12, Y13)
	ADDQ R11, SI
	ADDQ R11, R12
	DECQ BX
	DECQ R13
	JEQ zs16waitdone
	TESTQ BX, BX
	JNE zs16pairstep
	// this block is done and the waiting one is not: it goes on waiting
	VMOVUPS Y1, (DX)
	VMOVUPS Y2, (R8)
	VMOVUPS Y4, 32(DX)
	VMOVUPS Y5, 32(R8)
	MOVQ R12, psi-280(SP)
	MOVQ R13, pbx-288(SP)
	WAITSTORE
	JMP zs16next
zs16waitdone:
	// the waiting block is done: its moments go to memory, and this block, if it has
	// steps left, waits in its place
	WAITSTORE
	MOVQ $0, pbx-288(SP)
	TESTQ BX, BX
	JNE zs16park
	JMP zs16mvstore
zs16store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y3, 32(DI)
	NONFINITE(Y0)
	NONFINITE(Y3)
zs16mvstore:
	VMOVUPS Y1, (DX)
	VMOVUPS Y2, (R8)
	VMOVUPS Y4, 32(DX)
	VMOVUPS Y5, 32(R8)
zs16next:
	ADDQ $64, DI
	ADDQ $64, DX
	ADDQ $64, R8
	SUBQ $16, CX
	JMP zs16
zs16flush:
	// a still block that waits when no more blocks of 16 come takes its steps alone
	MOVQ pbx-288(SP), R13
	TESTQ R13, R13
	JEQ zs8
	WAITLOAD
zs16flushstep:
	VBROADCASTSS 0(R12), Y12
	VBROADCASTSS 4(R12), Y13
	MVSTEPK(Y6, Y7, Y0, Y12, Y13)
	MVSTEPK(Y8, Y9, Y3, Y12, Y13)
	ADDQ R11, R12
	DECQ R13
	JNE zs16flushstep
	WAITSTORE
	MOVQ $0, pbx-288(SP)
zs8:
	CMPQ CX, $8
	JLT zsdone
	VMOVUPS (DI), Y0
	VMOVUPS (DX), Y1
	VMOVUPS (R8), Y2
	XORL R13, R13
	MOVQ AX, SI
	MOVQ R9, BX
zs8step:
	STEPCONSTS
	MVSTEP(Y1, Y2, Y6)
	TESTQ $3, BX
	JNE zs8p
	TESTQ R13, R13
	JNE zs8under
	TESTL R10, R10
	JNE zs8consts
	STILLCONSTS
zs8consts:
	STILLAT(Y0, Y2, stilla-32(SP))
	MOVL $1, R13
zs8under:
	UNDER(Y1, stilla-32(SP), Y7)
	VMOVMSKPS Y7, R12
	CMPL R12, $0xff
	JEQ zs8still
zs8p:
	PSTEP(Y0, Y1, Y2, Y6, Y7)
	ADDQ R11, SI
	DECQ BX
	JNE zs8step
	JMP zs8store
zs8still:
	STILLAT(Y0, Y2, stilla-32(SP))
	UNDER(Y1, stilla-32(SP), Y6)
	VXORPS Y8, Y8, Y8
	VCMPPS $0x0D, Y8, Y2, Y9
	VANDPS Y9, Y6, Y6
	VMOVMSKPS Y6, R12
	CMPL R12, $0xff
	JNE zs8p
zs8moments:
	ADDQ R11, SI
	DECQ BX
	JEQ zs8store
	VBROADCASTSS 0(SI), Y10
	VBROADCASTSS 4(SI), Y11
	MVSTEP(Y1, Y2, Y6)
	JMP zs8moments
zs8store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DX)
	VMOVUPS Y2, (R8)
	NONFINITE(Y0)
zsdone:
	VPTEST Y14, Y14
	SETNE ret+72(FP)
	VZEROUPPER
	RET
