#include "textflag.h"

// The AVX-512 layout kernels of a stride-1 convolution whose output map is as wide as its input
// (graph's convolutions with "same" width): every live tap's row of the column matrix is the
// input plane shifted by a fixed offset, with the positions whose window reads padding (or wraps
// around a row edge) set to zero. A precomputed 16-bit mask per tap and 16-position chunk says
// which positions read the image; masked loads read only those (so a shifted address before or
// after the plane is never touched) and write zeros elsewhere. Copies and adds only: the
// results are those of graph's scalar im2col and col2im to the bit.

// func Im2colZ(plane, cols unsafe.Pointer, c, hw, l, ld int, offs *int, masks *uint16, chunks, tail int)
//
// For each of c planes (hw bytes apart) and each of the l taps: row ch·l + t of cols (rows ld
// bytes apart, consecutive from cols) gets, in chunk j (16 positions, 64 bytes), the 16 floats
// at plane + offs[t] + 64j where masks[t·chunks + j] has their bit, and zero elsewhere. The last
// chunk writes only the positions set in tail (the map's length mod 16, or all 16).
TEXT ·Im2colZ(SB), NOSPLIT, $0-80
	MOVQ plane+0(FP), SI
	MOVQ cols+8(FP), DI
	MOVQ c+16(FP), CX
	MOVQ hw+24(FP), DX
	MOVQ l+32(FP), R8
	MOVQ ld+40(FP), R9
	MOVQ offs+48(FP), R10
	MOVQ masks+56(FP), R11
	MOVQ chunks+64(FP), R12
	MOVQ tail+72(FP), AX
	KMOVW AX, K2
	TESTQ CX, CX
	JEQ idone
	TESTQ R8, R8
	JEQ idone
	TESTQ R12, R12
	JEQ idone
	LEAQ (R10)(R8*8), R8 // the end of offs
ichan:
	MOVQ R10, AX // the tap's offset
	MOVQ R11, R14 // the tap's masks
itap:
	MOVQ (AX), BX
	ADDQ SI, BX
	XORQ R13, R13
	MOVQ R12, R15
ichunk:
	KMOVW (R14), K1
	VMOVUPS.Z (BX)(R13*1), K1, Z0
	ADDQ $2, R14
	DECQ R15
	JEQ ilast
	VMOVUPS Z0, (DI)(R13*1)
	ADDQ $64, R13
	JMP ichunk
ilast:
	VMOVUPS Z0, K2, (DI)(R13*1)
	ADDQ R9, DI
	ADDQ $8, AX
	CMPQ AX, R8
	JNE itap
	ADDQ DX, SI
	DECQ CX
	JNE ichan
idone:
	VZEROUPPER
	RET

// func Col2imZ(cols, plane unsafe.Pointer, c, hw, l, ld int, offs *int, masks *uint16, chunks, tail int)
//
// The adjoint of Im2colZ: for each of c planes, chunk j of the plane (16 pixels) is set to the
// sum, in tap order from zero, over the l taps of the floats at row_t − offs[t] + 64j, where
// masks[t·chunks + j] has their bit (the pixels tap t's row reads), row_t being row ch·l + t
// of cols. The last chunk writes only the pixels set in tail. Adding a zero for a tap that does
// not read a pixel leaves the sum as it is to the bit (a sum from +0 is never −0), so each pixel
// is the scalar col2im's sum over the taps that read it.
TEXT ·Col2imZ(SB), NOSPLIT, $0-80
	MOVQ cols+0(FP), DI
	MOVQ plane+8(FP), SI
	MOVQ c+16(FP), CX
	MOVQ l+32(FP), R8
	MOVQ ld+40(FP), R9
	MOVQ offs+48(FP), R10
	MOVQ masks+56(FP), R11
	MOVQ chunks+64(FP), R12
	MOVQ tail+72(FP), AX
	KMOVW AX, K2
	TESTQ CX, CX
	JEQ cdone
	TESTQ R8, R8
	JEQ cdone
	TESTQ R12, R12
	JEQ cdone
	MOVQ R8, R13
	IMULQ R9, R13 // l·ld: one plane's rows
	LEAQ (R10)(R8*8), R8 // the end of offs
	SHLQ $1, R12 // chunks in bytes of masks
cchan:
	XORQ R15, R15 // the chunk's byte offset in masks (2 per chunk)
	MOVQ SI, BX // the plane's chunk
cchunk:
	VPXORD Z0, Z0, Z0
	MOVQ R10, AX // the tap's offset
	LEAQ (R11)(R15*1), R14 // the tap's mask for this chunk
	MOVQ R15, DX
	SHLQ $5, DX // 64 bytes of plane a chunk
	ADDQ DI, DX // row_0 + 64j
ctap:
	MOVQ DX, CX
	SUBQ (AX), CX
	KMOVW (R14), K1
	VMOVUPS.Z (CX), K1, Z1
	VADDPS Z1, Z0, Z0
	ADDQ R9, DX
	ADDQ R12, R14
	ADDQ $8, AX
	CMPQ AX, R8
	JNE ctap
	ADDQ $2, R15
	CMPQ R15, R12
	JEQ clast
	VMOVUPS Z0, (BX)
	ADDQ $64, BX
	JMP cchunk
clast:
	VMOVUPS Z0, K2, (BX)
	ADDQ R13, DI
	ADDQ hw+24(FP), SI
	DECQ c+16(FP)
	JNE cchan
cdone:
	VZEROUPPER
	RET
