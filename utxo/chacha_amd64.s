//go:build amd64 && !purego

#include "textflag.h"

// ChaCha20 keystream, 8 blocks at once, for MuHash3072 elements: key from
// the caller, 96-bit nonce 0, block counters 0..7. AVX-512F+VL on YMM
// registers: Yi holds state word i of the 8 blocks (lane j = block j), so a
// quarter round is 12 instructions with VPROLD for the rotations. The
// final state (input added) is stored as out[word][block].

DATA chachaSigma<>+0(SB)/4, $0x61707865
DATA chachaSigma<>+4(SB)/4, $0x3320646e
DATA chachaSigma<>+8(SB)/4, $0x79622d32
DATA chachaSigma<>+12(SB)/4, $0x6b206574
GLOBL chachaSigma<>(SB), RODATA|NOPTR, $16

DATA chachaCounters<>+0(SB)/4, $0
DATA chachaCounters<>+4(SB)/4, $1
DATA chachaCounters<>+8(SB)/4, $2
DATA chachaCounters<>+12(SB)/4, $3
DATA chachaCounters<>+16(SB)/4, $4
DATA chachaCounters<>+20(SB)/4, $5
DATA chachaCounters<>+24(SB)/4, $6
DATA chachaCounters<>+28(SB)/4, $7
GLOBL chachaCounters<>(SB), RODATA|NOPTR, $32

#define QR(a, b, c, d) \
	VPADDD b, a, a; VPXORD a, d, d; VPROLD $16, d, d; \
	VPADDD d, c, c; VPXORD c, b, b; VPROLD $12, b, b; \
	VPADDD b, a, a; VPXORD a, d, d; VPROLD $8, d, d; \
	VPADDD d, c, c; VPXORD c, b, b; VPROLD $7, b, b

#define INIT \
	VPBROADCASTD chachaSigma<>+0(SB), Y0; \
	VPBROADCASTD chachaSigma<>+4(SB), Y1; \
	VPBROADCASTD chachaSigma<>+8(SB), Y2; \
	VPBROADCASTD chachaSigma<>+12(SB), Y3; \
	VPBROADCASTD 0(SI), Y4; \
	VPBROADCASTD 4(SI), Y5; \
	VPBROADCASTD 8(SI), Y6; \
	VPBROADCASTD 12(SI), Y7; \
	VPBROADCASTD 16(SI), Y8; \
	VPBROADCASTD 20(SI), Y9; \
	VPBROADCASTD 24(SI), Y10; \
	VPBROADCASTD 28(SI), Y11; \
	VMOVDQU chachaCounters<>(SB), Y12; \
	VPXOR Y13, Y13, Y13; \
	VPXOR Y14, Y14, Y14; \
	VPXOR Y15, Y15, Y15

// func chacha8AVX512(out *[16][8]uint32, key *[8]uint32)
TEXT ·chacha8AVX512(SB), NOSPLIT, $0-16
	MOVQ out+0(FP), DI
	MOVQ key+8(FP), SI
	INIT
	// Keep the input for the final addition in Y16..Y31.
	VMOVDQA32 Y0, Y16
	VMOVDQA32 Y1, Y17
	VMOVDQA32 Y2, Y18
	VMOVDQA32 Y3, Y19
	VMOVDQA32 Y4, Y20
	VMOVDQA32 Y5, Y21
	VMOVDQA32 Y6, Y22
	VMOVDQA32 Y7, Y23
	VMOVDQA32 Y8, Y24
	VMOVDQA32 Y9, Y25
	VMOVDQA32 Y10, Y26
	VMOVDQA32 Y11, Y27
	VMOVDQA32 Y12, Y28
	MOVQ $10, CX

loop:
	QR(Y0, Y4, Y8, Y12)
	QR(Y1, Y5, Y9, Y13)
	QR(Y2, Y6, Y10, Y14)
	QR(Y3, Y7, Y11, Y15)
	QR(Y0, Y5, Y10, Y15)
	QR(Y1, Y6, Y11, Y12)
	QR(Y2, Y7, Y8, Y13)
	QR(Y3, Y4, Y9, Y14)
	DECQ CX
	JNZ  loop

	VPADDD Y16, Y0, Y0
	VPADDD Y17, Y1, Y1
	VPADDD Y18, Y2, Y2
	VPADDD Y19, Y3, Y3
	VPADDD Y20, Y4, Y4
	VPADDD Y21, Y5, Y5
	VPADDD Y22, Y6, Y6
	VPADDD Y23, Y7, Y7
	VPADDD Y24, Y8, Y8
	VPADDD Y25, Y9, Y9
	VPADDD Y26, Y10, Y10
	VPADDD Y27, Y11, Y11
	VPADDD Y28, Y12, Y12
	// Words 13..15 started at zero.
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y3, 96(DI)
	VMOVDQU Y4, 128(DI)
	VMOVDQU Y5, 160(DI)
	VMOVDQU Y6, 192(DI)
	VMOVDQU Y7, 224(DI)
	VMOVDQU Y8, 256(DI)
	VMOVDQU Y9, 288(DI)
	VMOVDQU Y10, 320(DI)
	VMOVDQU Y11, 352(DI)
	VMOVDQU Y12, 384(DI)
	VMOVDQU Y13, 416(DI)
	VMOVDQU Y14, 448(DI)
	VMOVDQU Y15, 480(DI)
	VZEROUPPER
	RET
