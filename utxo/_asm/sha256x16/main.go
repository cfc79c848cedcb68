// Command sha256x16 generates utxo/sha256x16_amd64.s and its Go stub with
// avo: SHA-256 of 16 short messages at once, one per 32-bit lane of the ZMM
// registers (the MuHash3072 element keys; a serialized coin is one or two
// blocks).
//
// Run it through `go generate ./utxo/...` from the main module.
//
// The caller pads each message into its lane's 128 bytes (one block, or two
// when the lane's bit in two is set). Per block, the 16 lanes' 64 bytes are
// loaded and transposed (zmm.Transpose16) so that Wt is a register holding
// word t of every lane, byte-swapped with VPSHUFB. The state a..h lives in
// Z0..Z7 with the names rotated by the generator (no moves), the schedule
// in a 16-register window Z8..Z23, Σ, σ, Ch and Maj are VPRORD/VPSRLD and
// VPTERNLOGD. The state before a block is kept in the frame for the final
// addition; after the second block, lanes with one block take their first
// block's result back from there (a masked load). The digests are
// byte-swapped and transposed back, and each lane's 32 bytes stored.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"utxod/utxo/_asm/zmm"
)

var iv = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

var k = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

var regs = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
	Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}

// VPTERNLOGD truth tables (A = destination, B, C = the other two).
const (
	xor3 = 0x96 // A ^ B ^ C
	ch   = 0xca // A ? B : C
	maj  = 0xe8 // majority
)

func table(name string, words []uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, v := range words {
		DATA(4*i, U32(v))
	}
	return m
}

// sigma emits dst = (x >>> r0) ^ (x >>> r1) ^ (x >> or >>> r2): shift is
// the third term's shift when r2 is 0 (σ0, σ1), rotation otherwise (Σ0, Σ1).
func sigma(x, dst, t1, t2 VecPhysical, r0, r1, r2 uint64, shift bool) {
	VPRORD(U8(r0), x, dst)
	VPRORD(U8(r1), x, t1)
	if shift {
		VPSRLD(U8(r2), x, t2)
	} else {
		VPRORD(U8(r2), x, t2)
	}
	VPTERNLOGD(U8(xor3), t2, t1, dst)
}

func main() {
	ConstraintExpr("amd64,!purego")
	ivT := table("sha256x16IV", iv[:])
	kT := table("sha256x16K", k[:])
	var bswap []uint32
	for i := 0; i < 16; i++ {
		b := uint32(4 * i)
		bswap = append(bswap, (b+3)|(b+2)<<8|(b+1)<<16|b<<24)
	}
	swapT := table("sha256x16BSwap", bswap)

	TEXT("sha256x16AVX512", 0, "func(digests *[16][32]byte, blocks *[16][128]byte, two uint16)")
	Pragma("noescape")
	Doc("sha256x16AVX512 sets digests[i] to the SHA-256 of lane i's padded message: blocks[i][:64], or all of blocks[i] when bit i of two is set.")
	saved := AllocLocal(8 * 64)
	digests := Mem{Base: Load(Param("digests"), RDI)}
	blocksP := Load(Param("blocks"), RSI)
	blocks := Mem{Base: blocksP}
	Load(Param("two"), RAX)
	iter := RCX

	st := append([]VecPhysical(nil), regs[:8]...) // a..h
	win := regs[8:24]
	t0, t1, t2, t3, s0, s1, s2, s3 := regs[24], regs[25], regs[26], regs[27], regs[28], regs[29], regs[30], regs[31]

	for i := range st {
		VPBROADCASTD(ivT.Offset(4*i), st[i])
	}
	Comment("K2: lanes whose result is their first block's (none after the first).")
	KXORW(K2, K2, K2)
	XORQ(iter, iter)

	Label("sha256x16_block")
	for i := range st {
		VMOVDQU64(st[i], saved.Offset(64*i))
	}
	Comment("W0..W15: word t of every lane, big-endian.")
	for i := range win {
		VMOVDQU64(blocks.Offset(128*i), win[i])
	}
	scratch := append(append([]VecPhysical(nil), regs[:8]...), regs[24:32]...)
	w := zmm.Transpose16(win, scratch)
	for i := range w {
		VPSHUFB(swapT, w[i], w[i])
	}
	for i := range st {
		VMOVDQU64(saved.Offset(64*i), st[i])
	}

	for t := 0; t < 64; t++ {
		if t >= 16 {
			Commentf("W%d = σ1(W%d) + W%d + σ0(W%d) + W%d", t, t-2, t-7, t-15, t-16)
			wt := w[t%16]
			sigma(w[(t-15)%16], s0, s1, s2, 7, 18, 3, true)
			VPADDD(s0, wt, wt)
			VPADDD(w[(t-7)%16], wt, wt)
			sigma(w[(t-2)%16], s3, s1, s2, 17, 19, 10, true)
			VPADDD(s3, wt, wt)
		}
		a, b, c, d, e, f, g, h := st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
		Commentf("Round %d.", t)
		VPADDD_BCST(kT.Offset(4*t), h, h)
		VPADDD(w[t%16], h, h)
		sigma(e, t0, t1, t2, 6, 11, 25, false)
		VPADDD(t0, h, h)
		VMOVDQA32(e, t3)
		VPTERNLOGD(U8(ch), g, f, t3)
		VPADDD(t3, h, h) // h = T1
		VPADDD(h, d, d)  // e' = d + T1
		sigma(a, t0, t1, t2, 2, 13, 22, false)
		VMOVDQA32(a, t3)
		VPTERNLOGD(U8(maj), c, b, t3)
		VPADDD(t0, h, h)
		VPADDD(t3, h, h) // a' = T1 + Σ0(a) + Maj(a, b, c)
		st = []VecPhysical{h, a, b, c, d, e, f, g}
	}
	Comment("Add the state before the block; K2's lanes take it back whole.")
	for i := range st {
		VPADDD(saved.Offset(64*i), st[i], st[i])
		VMOVDQU32(saved.Offset(64*i), K2, st[i])
	}
	TESTQ(iter, iter)
	JNZ(LabelRef("sha256x16_out"))
	TESTW(AX, AX)
	JZ(LabelRef("sha256x16_out"))
	INCQ(iter)
	ADDQ(U8(64), blocksP)
	KMOVW(EAX, K2)
	KNOTW(K2, K2)
	JMP(LabelRef("sha256x16_block"))

	Label("sha256x16_out")
	Comment("Digest words are big-endian; lane i's 8 words go to digests[i].")
	for i := range st {
		VPSHUFB(swapT, st[i], st[i])
	}
	x := append(append([]VecPhysical(nil), st...), regs[8:16]...)
	r := zmm.Transpose16(x, regs[16:32])
	for i := range r {
		VEXTRACTI64X4(U8(0), r[i], digests.Offset(32*i))
	}
	VZEROUPPER()
	RET()
	Generate()
}
