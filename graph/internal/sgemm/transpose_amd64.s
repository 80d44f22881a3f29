#include "textflag.h"

// func Transpose8x8(src unsafe.Pointer, lds int, dst unsafe.Pointer, ldd int)
//
// dst[j][i] = src[i][j] for an 8×8 block of float32: row i of src at src + i·lds, row j of dst
// at dst + j·ldd (bytes). In registers: unpack pairs of rows, shuffle them into 4×4 blocks
// within each 128-bit lane, then swap the lanes.
TEXT ·Transpose8x8(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ lds+8(FP), AX
	MOVQ dst+16(FP), DI
	MOVQ ldd+24(FP), BX
	LEAQ (AX)(AX*2), CX
	LEAQ (SI)(AX*4), DX
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(AX*1), Y1
	VMOVUPS (SI)(AX*2), Y2
	VMOVUPS (SI)(CX*1), Y3
	VMOVUPS (DX), Y4
	VMOVUPS (DX)(AX*1), Y5
	VMOVUPS (DX)(AX*2), Y6
	VMOVUPS (DX)(CX*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	LEAQ (BX)(BX*2), CX
	LEAQ (DI)(BX*4), DX
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(BX*1)
	VMOVUPS Y10, (DI)(BX*2)
	VMOVUPS Y11, (DI)(CX*1)
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, (DX)(BX*1)
	VMOVUPS Y14, (DX)(BX*2)
	VMOVUPS Y15, (DX)(CX*1)
	VZEROUPPER
	RET
