// Command _asm generates utxo/chacha_amd64.s and its Go stub with avo: the
// ChaCha20 keystream of a MuHash3072 element, 8 blocks at once.
//
// Run it through `go generate ./utxo/...` from the main module.
//
// Layout: AVX-512F+VL on YMM registers. Yi holds state word i of the 8
// blocks (lane j = block j), so a quarter round is 12 instructions with
// VPROLD for the rotations; Y16..Y28 keep the input words for the final
// addition (words 13..15, nonce 0, start at zero and need none). The final
// state is stored as out[word][block].
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// sigma is "expand 32-byte k", ChaCha20's constant words 0..3.
var sigma = [4]uint32{0x61707865, 0x3320646e, 0x79622d32, 0x6b206574}

// blocks is the number of ChaCha20 blocks per call: 8 x 64 = 512 bytes, of
// which the element uses 384.
const blocks = 8

var ymm = []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15,
	Y16, Y17, Y18, Y19, Y20, Y21, Y22, Y23, Y24, Y25, Y26, Y27, Y28, Y29, Y30, Y31}

// table emits a read-only table of 32-bit words.
func table(name string, words []uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, v := range words {
		DATA(4*i, U32(v))
	}
	return m
}

// quarterRound emits ChaCha20's quarter round on the lanes of a, b, c, d.
func quarterRound(a, b, c, d Register) {
	for _, s := range []struct {
		x, y, z Register
		rot     uint64
	}{{a, b, d, 16}, {c, d, b, 12}, {a, b, d, 8}, {c, d, b, 7}} {
		// x += y; z ^= x; z <<<= rot
		VPADDD(s.y, s.x, s.x)
		VPXORD(s.x, s.z, s.z)
		VPROLD(U8(s.rot), s.z, s.z)
	}
}

func main() {
	ConstraintExpr("amd64,!purego")
	sig := table("chachaSigma", sigma[:])
	var counters []uint32
	for i := uint32(0); i < blocks; i++ {
		counters = append(counters, i)
	}
	ctr := table("chachaCounters", counters)

	TEXT("chacha8AVX512", NOSPLIT, "func(out *[16][8]uint32, key *[8]uint32)")
	Pragma("noescape")
	Doc("chacha8AVX512 sets out[w][b] to word w of ChaCha20 block b (b < 8) for key, nonce 0 and block counter b: the final state, input added.")
	out := Mem{Base: Load(Param("out"), RDI)}
	key := Mem{Base: Load(Param("key"), RSI)}
	x := ymm[:16]
	for i := 0; i < 4; i++ {
		VPBROADCASTD(sig.Offset(4*i), x[i])
	}
	for i := 0; i < 8; i++ {
		VPBROADCASTD(key.Offset(4*i), x[4+i])
	}
	VMOVDQU(ctr, x[12])
	for i := 13; i < 16; i++ {
		VPXOR(x[i], x[i], x[i])
	}
	Comment("Keep the input for the final addition in Y16..Y28.")
	in := ymm[16:29]
	for i, r := range in {
		VMOVDQA32(x[i], r)
	}
	n := RCX
	MOVQ(U32(10), n)

	Label("chacha8AVX512_loop")
	Comment("Column round, then diagonal round.")
	for i := 0; i < 4; i++ {
		quarterRound(x[i], x[4+i], x[8+i], x[12+i])
	}
	for i := 0; i < 4; i++ {
		quarterRound(x[i], x[4+(i+1)%4], x[8+(i+2)%4], x[12+(i+3)%4])
	}
	DECQ(n)
	JNZ(LabelRef("chacha8AVX512_loop"))

	for i, r := range in {
		VPADDD(r, x[i], x[i])
	}
	Comment("Words 13..15 started at zero.")
	for i, r := range x {
		VMOVDQU(r, out.Offset(32*i))
	}
	VZEROUPPER()
	RET()
	Generate()
}
