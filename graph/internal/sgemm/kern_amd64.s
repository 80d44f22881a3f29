#include "textflag.h"

// func Kern4x24(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)
//
// C[0:4, 0:24] (+)= A[0:4, 0:k] · B[0:k, 0:24] in float32, with A element (i, p) at
// a + i·ars + p·acs, B row p at b + p·ldb, C row i at c + i·ldc (all strides in bytes).
// acc ≠ 0 adds to C, else overwrites it. Twelve 8-lane accumulators stay in registers.
TEXT ·Kern4x24(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ars+16(FP), R8
	MOVQ acs+24(FP), R10
	MOVQ b+32(FP), BX
	MOVQ ldb+40(FP), R11
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R12
	LEAQ (R8)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	TESTQ CX, CX
	JEQ store24
loop24:
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	VMOVUPS 64(BX), Y14
	VBROADCASTSS (AX), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VBROADCASTSS (AX)(R8*1), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VBROADCASTSS (AX)(R8*2), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VBROADCASTSS (AX)(R9*1), Y15
	VFMADD231PS Y12, Y15, Y9
	VFMADD231PS Y13, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	ADDQ R10, AX
	ADDQ R11, BX
	DECQ CX
	JNE loop24
store24:
	MOVQ acc+64(FP), CX
	TESTQ CX, CX
	JEQ put24
	VADDPS (DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VADDPS 64(DX), Y2, Y2
	VADDPS (DX)(R12*1), Y3, Y3
	VADDPS 32(DX)(R12*1), Y4, Y4
	VADDPS 64(DX)(R12*1), Y5, Y5
	VADDPS (DX)(R12*2), Y6, Y6
	VADDPS 32(DX)(R12*2), Y7, Y7
	VADDPS 64(DX)(R12*2), Y8, Y8
	LEAQ (R12)(R12*2), R13
	VADDPS (DX)(R13*1), Y9, Y9
	VADDPS 32(DX)(R13*1), Y10, Y10
	VADDPS 64(DX)(R13*1), Y11, Y11
put24:
	LEAQ (R12)(R12*2), R13
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, (DX)(R12*1)
	VMOVUPS Y4, 32(DX)(R12*1)
	VMOVUPS Y5, 64(DX)(R12*1)
	VMOVUPS Y6, (DX)(R12*2)
	VMOVUPS Y7, 32(DX)(R12*2)
	VMOVUPS Y8, 64(DX)(R12*2)
	VMOVUPS Y9, (DX)(R13*1)
	VMOVUPS Y10, 32(DX)(R13*1)
	VMOVUPS Y11, 64(DX)(R13*1)
	VZEROUPPER
	RET

// func Kern4x8(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, ldc int, acc int)
//
// The same for a 4×8 block of C.
TEXT ·Kern4x8(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ars+16(FP), R8
	MOVQ acs+24(FP), R10
	MOVQ b+32(FP), BX
	MOVQ ldb+40(FP), R11
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R12
	LEAQ (R8)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JEQ store8
	// two interleaved accumulator sets halve the FMA dependency chains
	MOVQ CX, R14
	SHRQ $1, R14
	JEQ tail8
loop8:
	VMOVUPS (BX), Y12
	VMOVUPS (BX)(R11*1), Y13
	VBROADCASTSS (AX), Y15
	VFMADD231PS Y12, Y15, Y0
	VBROADCASTSS (AX)(R10*1), Y14
	VFMADD231PS Y13, Y14, Y4
	VBROADCASTSS (AX)(R8*1), Y15
	VFMADD231PS Y12, Y15, Y1
	LEAQ (AX)(R8*1), R13
	VBROADCASTSS (R13)(R10*1), Y14
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS (AX)(R8*2), Y15
	VFMADD231PS Y12, Y15, Y2
	LEAQ (AX)(R8*2), R13
	VBROADCASTSS (R13)(R10*1), Y14
	VFMADD231PS Y13, Y14, Y6
	VBROADCASTSS (AX)(R9*1), Y15
	VFMADD231PS Y12, Y15, Y3
	LEAQ (AX)(R9*1), R13
	VBROADCASTSS (R13)(R10*1), Y14
	VFMADD231PS Y13, Y14, Y7
	LEAQ (AX)(R10*2), AX
	LEAQ (BX)(R11*2), BX
	DECQ R14
	JNE loop8
tail8:
	TESTQ $1, CX
	JEQ sum8
	VMOVUPS (BX), Y12
	VBROADCASTSS (AX), Y15
	VFMADD231PS Y12, Y15, Y0
	VBROADCASTSS (AX)(R8*1), Y15
	VFMADD231PS Y12, Y15, Y1
	VBROADCASTSS (AX)(R8*2), Y15
	VFMADD231PS Y12, Y15, Y2
	VBROADCASTSS (AX)(R9*1), Y15
	VFMADD231PS Y12, Y15, Y3
sum8:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
store8:
	LEAQ (R12)(R12*2), R13
	MOVQ acc+64(FP), CX
	TESTQ CX, CX
	JEQ put8
	VADDPS (DX), Y0, Y0
	VADDPS (DX)(R12*1), Y1, Y1
	VADDPS (DX)(R12*2), Y2, Y2
	VADDPS (DX)(R13*1), Y3, Y3
put8:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, (DX)(R12*1)
	VMOVUPS Y2, (DX)(R12*2)
	VMOVUPS Y3, (DX)(R13*1)
	VZEROUPPER
	RET

// func Kern1x8(k int, a unsafe.Pointer, acs int, b unsafe.Pointer, ldb int, c unsafe.Pointer, acc int)
//
// C[0, 0:8] (+)= A[0, 0:k] · B[0:k, 0:8].
TEXT ·Kern1x8(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ acs+16(FP), R10
	MOVQ b+24(FP), BX
	MOVQ ldb+32(FP), R11
	MOVQ c+40(FP), DX
	VXORPS Y0, Y0, Y0
	TESTQ CX, CX
	JEQ store1
loop1:
	VMOVUPS (BX), Y12
	VBROADCASTSS (AX), Y15
	VFMADD231PS Y12, Y15, Y0
	ADDQ R10, AX
	ADDQ R11, BX
	DECQ CX
	JNE loop1
store1:
	MOVQ acc+48(FP), CX
	TESTQ CX, CX
	JEQ put1
	VADDPS (DX), Y0, Y0
put1:
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// BCAST4 broadcasts A's four rows at AX (rows R8 bytes apart, R9 = 3·R8) into R0–R3.
#define BCAST4(R0, R1, R2, R3) \
	VBROADCASTSS (AX), R0; \
	VBROADCASTSS (AX)(R8*1), R1; \
	VBROADCASTSS (AX)(R8*2), R2; \
	VBROADCASTSS (AX)(R9*1), R3

// ADD2 adds A·Y0 then B·Y1 (two rows of B) to T's chunk at OFF(DI); ADD1 adds A·Y0.
#define ADD2(OFF, T, A, B) \
	VMOVUPS OFF(DI), T; \
	VFMADD231PS Y0, A, T; \
	VFMADD231PS Y1, B, T; \
	VMOVUPS T, OFF(DI)

#define ADD1(OFF, T, A) \
	VMOVUPS OFF(DI), T; \
	VFMADD231PS Y0, A, T; \
	VMOVUPS T, OFF(DI)

// func KernRows4(k int, a unsafe.Pointer, ars, acs int, b unsafe.Pointer, ldb int, t unsafe.Pointer, n int)
//
// T += A[0:4, 0:k] · B[0:k, 0:n] in float32 for n a multiple of 8, walking B row by row (two
// rows at a time) rather than in column strips, so that B streams through memory once. T holds
// the 4×n block in 8-column chunks, the four rows of a chunk side by side (chunk c, row i at
// t + 128·c + 32·i). Each element of T takes its k products in order, one FMA each, as Kern4x24
// does in its registers.
TEXT ·KernRows4(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ars+16(FP), R8
	MOVQ acs+24(FP), R10
	MOVQ b+32(FP), BX
	MOVQ ldb+40(FP), R11
	MOVQ t+48(FP), DX
	MOVQ n+56(FP), R13
	LEAQ (R8)(R8*2), R9
	TESTQ R13, R13
	JEQ rowsdone
rowspair:
	CMPQ CX, $2
	JLT rowsone
	BCAST4(Y8, Y9, Y10, Y11)
	ADDQ R10, AX
	BCAST4(Y12, Y13, Y14, Y15)
	ADDQ R10, AX
	MOVQ BX, SI
	MOVQ DX, DI
	MOVQ R13, R12
rowspairloop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R11*1), Y1
	ADD2(0, Y2, Y8, Y12)
	ADD2(32, Y3, Y9, Y13)
	ADD2(64, Y4, Y10, Y14)
	ADD2(96, Y5, Y11, Y15)
	ADDQ $32, SI
	ADDQ $128, DI
	SUBQ $8, R12
	JNE rowspairloop
	LEAQ (BX)(R11*2), BX
	SUBQ $2, CX
	JMP rowspair
rowsone:
	TESTQ CX, CX
	JEQ rowsdone
	BCAST4(Y8, Y9, Y10, Y11)
	MOVQ BX, SI
	MOVQ DX, DI
	MOVQ R13, R12
rowsoneloop:
	VMOVUPS (SI), Y0
	ADD1(0, Y2, Y8)
	ADD1(32, Y3, Y9)
	ADD1(64, Y4, Y10)
	ADD1(96, Y5, Y11)
	ADDQ $32, SI
	ADDQ $128, DI
	SUBQ $8, R12
	JNE rowsoneloop
rowsdone:
	VZEROUPPER
	RET
