#include "textflag.h"

// The float64 kernels: the float32 ones (kern_amd64.s) with 4-lane vectors, so a block is
// 4×12 (twelve accumulators), 4×4 or 1×4.

// func DKern4x12(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)
//
// C[0:4, 0:12] (+)= A[0:4, 0:k] · B[0:k, 0:12] in float64, with A element (i, p) at
// a + i·ars + p·acs, B row p at b + p·ldb, C row i at c + i·ldc (all strides in bytes).
// acc ≠ 0 adds to C, else overwrites it.
TEXT ·DKern4x12(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ars+16(FP), R8
	MOVQ acs+24(FP), R10
	MOVQ b+32(FP), BX
	MOVQ ldb+40(FP), R11
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R12
	LEAQ (R8)(R8*2), R9
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	TESTQ CX, CX
	JEQ dstore12
dloop12:
	VMOVUPD (BX), Y12
	VMOVUPD 32(BX), Y13
	VMOVUPD 64(BX), Y14
	VBROADCASTSD (AX), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VBROADCASTSD (AX)(R8*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VBROADCASTSD (AX)(R8*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VBROADCASTSD (AX)(R9*1), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	ADDQ R10, AX
	ADDQ R11, BX
	DECQ CX
	JNE dloop12
dstore12:
	LEAQ (R12)(R12*2), R13
	MOVQ acc+64(FP), CX
	TESTQ CX, CX
	JEQ dput12
	VADDPD (DX), Y0, Y0
	VADDPD 32(DX), Y1, Y1
	VADDPD 64(DX), Y2, Y2
	VADDPD (DX)(R12*1), Y3, Y3
	VADDPD 32(DX)(R12*1), Y4, Y4
	VADDPD 64(DX)(R12*1), Y5, Y5
	VADDPD (DX)(R12*2), Y6, Y6
	VADDPD 32(DX)(R12*2), Y7, Y7
	VADDPD 64(DX)(R12*2), Y8, Y8
	VADDPD (DX)(R13*1), Y9, Y9
	VADDPD 32(DX)(R13*1), Y10, Y10
	VADDPD 64(DX)(R13*1), Y11, Y11
dput12:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, (DX)(R12*1)
	VMOVUPD Y4, 32(DX)(R12*1)
	VMOVUPD Y5, 64(DX)(R12*1)
	VMOVUPD Y6, (DX)(R12*2)
	VMOVUPD Y7, 32(DX)(R12*2)
	VMOVUPD Y8, 64(DX)(R12*2)
	VMOVUPD Y9, (DX)(R13*1)
	VMOVUPD Y10, 32(DX)(R13*1)
	VMOVUPD Y11, 64(DX)(R13*1)
	VZEROUPPER
	RET

// func DKern4x4(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)
//
// The same for a 4×4 block of C.
TEXT ·DKern4x4(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ars+16(FP), R8
	MOVQ acs+24(FP), R10
	MOVQ b+32(FP), BX
	MOVQ ldb+40(FP), R11
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R12
	LEAQ (R8)(R8*2), R9
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	TESTQ CX, CX
	JEQ dstore4
dloop4:
	VMOVUPD (BX), Y12
	VBROADCASTSD (AX), Y15
	VFMADD231PD Y12, Y15, Y0
	VBROADCASTSD (AX)(R8*1), Y14
	VFMADD231PD Y12, Y14, Y1
	VBROADCASTSD (AX)(R8*2), Y13
	VFMADD231PD Y12, Y13, Y2
	VBROADCASTSD (AX)(R9*1), Y15
	VFMADD231PD Y12, Y15, Y3
	ADDQ R10, AX
	ADDQ R11, BX
	DECQ CX
	JNE dloop4
dstore4:
	LEAQ (R12)(R12*2), R13
	MOVQ acc+64(FP), CX
	TESTQ CX, CX
	JEQ dput4
	VADDPD (DX), Y0, Y0
	VADDPD (DX)(R12*1), Y1, Y1
	VADDPD (DX)(R12*2), Y2, Y2
	VADDPD (DX)(R13*1), Y3, Y3
dput4:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, (DX)(R12*1)
	VMOVUPD Y2, (DX)(R12*2)
	VMOVUPD Y3, (DX)(R13*1)
	VZEROUPPER
	RET

// func DKern1x4(k int, a unsafe.Pointer, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, acc int)
//
// C[0, 0:4] (+)= A[0, 0:k] · B[0:k, 0:4].
TEXT ·DKern1x4(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ acs+16(FP), R10
	MOVQ b+24(FP), BX
	MOVQ ldb+32(FP), R11
	MOVQ c+40(FP), DX
	VXORPD Y0, Y0, Y0
	TESTQ CX, CX
	JEQ dstore1
dloop1:
	VMOVUPD (BX), Y12
	VBROADCASTSD (AX), Y15
	VFMADD231PD Y12, Y15, Y0
	ADDQ R10, AX
	ADDQ R11, BX
	DECQ CX
	JNE dloop1
dstore1:
	MOVQ acc+48(FP), CX
	TESTQ CX, CX
	JEQ dput1
	VADDPD (DX), Y0, Y0
dput1:
	VMOVUPD Y0, (DX)
	VZEROUPPER
	RET
