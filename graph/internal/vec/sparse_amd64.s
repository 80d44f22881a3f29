#include "textflag.h"

// The row kernels of a product whose left operand is mostly zeros (graph's gemmSparse): one
// row of C, held in registers 32 (or 16) elements at a time, accumulates val[t]·B[idx[t], :]
// for t = 0, 1, …, nnz−1 in that order, each term one fused multiply-add.

// func SpRowF32(c, b *float32, ldb int, idx *int32, val *float32, nnz, n int)
TEXT ·SpRowF32(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ ldb+16(FP), R8
	SHLQ $2, R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ nnz+40(FP), R11
	MOVQ n+48(FP), CX
SpRowF32_32:
	CMPQ CX, $32
	JLT SpRowF32_8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	XORQ BX, BX
SpRowF32_32t:
	CMPQ BX, R11
	JGE SpRowF32_32s
	MOVLQSX (R9)(BX*4), AX
	IMULQ R8, AX
	ADDQ SI, AX
	VBROADCASTSS (R10)(BX*4), Y4
	VFMADD231PS (AX), Y4, Y0
	VFMADD231PS 32(AX), Y4, Y1
	VFMADD231PS 64(AX), Y4, Y2
	VFMADD231PS 96(AX), Y4, Y3
	INCQ BX
	JMP SpRowF32_32t
SpRowF32_32s:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	SUBQ $32, CX
	JMP SpRowF32_32
SpRowF32_8:
	CMPQ CX, $8
	JLT SpRowF32_done
	VMOVUPS (DI), Y0
	XORQ BX, BX
SpRowF32_8t:
	CMPQ BX, R11
	JGE SpRowF32_8s
	MOVLQSX (R9)(BX*4), AX
	IMULQ R8, AX
	ADDQ SI, AX
	VBROADCASTSS (R10)(BX*4), Y4
	VFMADD231PS (AX), Y4, Y0
	INCQ BX
	JMP SpRowF32_8t
SpRowF32_8s:
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, CX
	JMP SpRowF32_8
SpRowF32_done:
	VZEROUPPER
	RET

// func SpRowF64(c, b *float64, ldb int, idx *int32, val *float64, nnz, n int)
TEXT ·SpRowF64(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ ldb+16(FP), R8
	SHLQ $3, R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ nnz+40(FP), R11
	MOVQ n+48(FP), CX
SpRowF64_16:
	CMPQ CX, $16
	JLT SpRowF64_4
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	XORQ BX, BX
SpRowF64_16t:
	CMPQ BX, R11
	JGE SpRowF64_16s
	MOVLQSX (R9)(BX*4), AX
	IMULQ R8, AX
	ADDQ SI, AX
	VBROADCASTSD (R10)(BX*8), Y4
	VFMADD231PD (AX), Y4, Y0
	VFMADD231PD 32(AX), Y4, Y1
	VFMADD231PD 64(AX), Y4, Y2
	VFMADD231PD 96(AX), Y4, Y3
	INCQ BX
	JMP SpRowF64_16t
SpRowF64_16s:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	SUBQ $16, CX
	JMP SpRowF64_16
SpRowF64_4:
	CMPQ CX, $4
	JLT SpRowF64_done
	VMOVUPD (DI), Y0
	XORQ BX, BX
SpRowF64_4t:
	CMPQ BX, R11
	JGE SpRowF64_4s
	MOVLQSX (R9)(BX*4), AX
	IMULQ R8, AX
	ADDQ SI, AX
	VBROADCASTSD (R10)(BX*8), Y4
	VFMADD231PD (AX), Y4, Y0
	INCQ BX
	JMP SpRowF64_4t
SpRowF64_4s:
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $4, CX
	JMP SpRowF64_4
SpRowF64_done:
	VZEROUPPER
	RET

// func FirstNonzeroF32(x *float32, n int) int: the least i < n with x[i] ≠ 0 (NaN counts as
// nonzero, −0 as zero), or n; 32 elements per compare while they are all zero.
TEXT ·FirstNonzeroF32(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	XORQ AX, AX
	VXORPS Y15, Y15, Y15
FNZF32_32:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $32
	JLT FNZF32_8
	VCMPPS $4, (SI)(AX*4), Y15, Y0
	VCMPPS $4, 32(SI)(AX*4), Y15, Y1
	VCMPPS $4, 64(SI)(AX*4), Y15, Y2
	VCMPPS $4, 96(SI)(AX*4), Y15, Y3
	VORPS Y0, Y1, Y4
	VORPS Y2, Y3, Y5
	VORPS Y4, Y5, Y4
	VPTEST Y4, Y4
	JNZ FNZF32_8
	ADDQ $32, AX
	JMP FNZF32_32
FNZF32_8:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $8
	JLT FNZF32_1
	VCMPPS $4, (SI)(AX*4), Y15, Y0
	VMOVMSKPS Y0, BX
	TESTQ BX, BX
	JNZ FNZF32_found
	ADDQ $8, AX
	JMP FNZF32_8
FNZF32_found:
	BSFQ BX, BX
	ADDQ BX, AX
	JMP FNZF32_done
FNZF32_1:
	CMPQ AX, CX
	JGE FNZF32_done
	VMOVSS (SI)(AX*4), X0
	VUCOMISS X15, X0
	JNE FNZF32_done
	JPS FNZF32_done
	INCQ AX
	JMP FNZF32_1
FNZF32_done:
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET

// func FirstNonzeroF64(x *float64, n int) int: FirstNonzeroF32 in float64.
TEXT ·FirstNonzeroF64(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	XORQ AX, AX
	VXORPD Y15, Y15, Y15
FNZF64_16:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $16
	JLT FNZF64_4
	VCMPPD $4, (SI)(AX*8), Y15, Y0
	VCMPPD $4, 32(SI)(AX*8), Y15, Y1
	VCMPPD $4, 64(SI)(AX*8), Y15, Y2
	VCMPPD $4, 96(SI)(AX*8), Y15, Y3
	VORPD Y0, Y1, Y4
	VORPD Y2, Y3, Y5
	VORPD Y4, Y5, Y4
	VPTEST Y4, Y4
	JNZ FNZF64_4
	ADDQ $16, AX
	JMP FNZF64_16
FNZF64_4:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $4
	JLT FNZF64_1
	VCMPPD $4, (SI)(AX*8), Y15, Y0
	VMOVMSKPD Y0, BX
	TESTQ BX, BX
	JNZ FNZF64_found
	ADDQ $4, AX
	JMP FNZF64_4
FNZF64_found:
	BSFQ BX, BX
	ADDQ BX, AX
	JMP FNZF64_done
FNZF64_1:
	CMPQ AX, CX
	JGE FNZF64_done
	VMOVSD (SI)(AX*8), X0
	VUCOMISD X15, X0
	JNE FNZF64_done
	JPS FNZF64_done
	INCQ AX
	JMP FNZF64_1
FNZF64_done:
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET

// func NarrowF64(dst *float32, src *float64, n int): dst[i] = float32(src[i]) for i < n (n a
// multiple of 16), rounded to nearest as Go's conversion is.
TEXT ·NarrowF64(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
NarrowF64_16:
	CMPQ CX, $16
	JLT NarrowF64_done
	VCVTPD2PSY (SI), X0
	VCVTPD2PSY 32(SI), X1
	VCVTPD2PSY 64(SI), X2
	VCVTPD2PSY 96(SI), X3
	VMOVUPS X0, (DI)
	VMOVUPS X1, 16(DI)
	VMOVUPS X2, 32(DI)
	VMOVUPS X3, 48(DI)
	ADDQ $128, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP NarrowF64_16
NarrowF64_done:
	VZEROUPPER
	RET

// func CountNonzeroF32(x *float32, n int) int: how many of x[:n] are ≠ 0 (NaN counts, −0 does
// not), n a multiple of 8.
TEXT ·CountNonzeroF32(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	XORQ AX, AX
	VXORPS Y15, Y15, Y15
CNZF32_8:
	CMPQ CX, $8
	JLT CNZF32_done
	VCMPPS $4, (SI), Y15, Y0
	VMOVMSKPS Y0, BX
	POPCNTL BX, BX
	ADDQ BX, AX
	ADDQ $32, SI
	SUBQ $8, CX
	JMP CNZF32_8
CNZF32_done:
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET

// func CountNonzeroF64(x *float64, n int) int: CountNonzeroF32 in float64, n a multiple of 4.
TEXT ·CountNonzeroF64(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	XORQ AX, AX
	VXORPD Y15, Y15, Y15
CNZF64_4:
	CMPQ CX, $4
	JLT CNZF64_done
	VCMPPD $4, (SI), Y15, Y0
	VMOVMSKPD Y0, BX
	POPCNTL BX, BX
	ADDQ BX, AX
	ADDQ $32, SI
	SUBQ $4, CX
	JMP CNZF64_4
CNZF64_done:
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET
