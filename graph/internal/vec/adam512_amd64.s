#include "textflag.h"

// func AdamF32Z(p, gr, m, v *float32, n int, c *[7]float32, wd, hat int) bool
//
// AdamF32 sixteen lanes at a time: the same operations on the same operands in the same
// order (no fused multiply-adds; sqrt and division correctly rounded), so the same bits. The
// lanes of a new p whose exponent is all ones (NaN or infinite) gather in K2.
TEXT ·AdamF32Z(SB), NOSPLIT, $0-65
	MOVQ p+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	MOVQ wd+48(FP), R9
	MOVQ hat+56(FP), R10
	VBROADCASTSS 0(AX), Z8
	VBROADCASTSS 4(AX), Z9
	VBROADCASTSS 8(AX), Z10
	VBROADCASTSS 12(AX), Z11
	VBROADCASTSS 16(AX), Z12
	VBROADCASTSS 20(AX), Z13
	VBROADCASTSS 24(AX), Z14
	MOVL $0x7f800000, AX
	VPBROADCASTD AX, Z15
	KXORW K2, K2, K2
AdamF32Z_loop:
	CMPQ CX, $16
	JLT AdamF32Z_done
	VMOVUPS (SI), Z0
	VMOVUPS (DI), Z1
	TESTQ R9, R9
	JZ AdamF32Z_nowd
	VMULPS Z1, Z14, Z2
	VADDPS Z2, Z0, Z0
AdamF32Z_nowd:
	VMOVUPS (DX), Z2
	VSUBPS Z2, Z0, Z3
	VMULPS Z3, Z8, Z3
	VADDPS Z3, Z2, Z2
	VMOVUPS Z2, (DX)
	VMOVUPS (R8), Z4
	VMULPS Z4, Z9, Z4
	VMULPS Z0, Z10, Z5
	VMULPS Z0, Z5, Z5
	VADDPS Z5, Z4, Z4
	VMOVUPS Z4, (R8)
	VSQRTPS Z4, Z5
	TESTQ R10, R10
	JNZ AdamF32Z_hat
	VDIVPS Z12, Z5, Z5
	VADDPS Z13, Z5, Z5
	VDIVPS Z5, Z2, Z5
	VMULPS Z5, Z11, Z5
	JMP AdamF32Z_step
AdamF32Z_hat:
	VADDPS Z13, Z5, Z5
	VMULPS Z2, Z11, Z3
	VDIVPS Z5, Z3, Z5
AdamF32Z_step:
	VSUBPS Z5, Z1, Z1
	VMOVUPS Z1, (DI)
	VPANDD Z15, Z1, Z6
	VPCMPEQD Z15, Z6, K1
	KORW K1, K2, K2
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R8
	SUBQ $16, CX
	JMP AdamF32Z_loop
AdamF32Z_done:
	KORTESTW K2, K2
	SETNE ret+64(FP)
	VZEROUPPER
	RET
