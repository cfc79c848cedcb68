// Command _asm generates utxo/chacha_amd64.s and its Go stub with avo: the
// ChaCha20 keystreams of MuHash3072 elements, computed in ZMM registers.
//
// Run it through `go generate ./utxo/...` from the main module.
//
// An element is the first 384 bytes of ChaCha20's keystream (nonce 0), i.e.
// blocks 0..5. The kernel lays the blocks of a group of elements out flat,
// lane by lane: global block g of the group is block g%B of element g/B,
// and each pass computes 16 of them (lane i = block 16p+i). With B = 6 a
// group of 8 elements is exactly 3 passes and no lane is wasted; B = 8 (two
// elements of 8 blocks per pass, blocks 6 and 7 thrown away) was measured
// against it (bench/results/digests.md) and is kept as a generator option
// only.
//
// Within a pass Zi holds state word i of the 16 blocks, so a quarter round
// is 12 instructions with VPROLD for the rotations. The lanes' key words
// are picked out of the group's keys (loaded two keys per register, under
// a mask so that nothing past the last key is read) with VPERMI2D. After
// the final addition a 16×16 dword transpose (zmm.Transpose16) turns each
// register into one 64-byte block, stored where it belongs in the elements'
// num3072 limbs (the limbs are the keystream bytes read little-endian, so
// the layout is the bytes').
package main

import (
	"flag"
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"utxod/utxo/_asm/zmm"
)

// sigma is "expand 32-byte k", ChaCha20's constant words 0..3.
var sigma = [4]uint32{0x61707865, 0x3320646e, 0x79622d32, 0x6b206574}

const (
	lanes        = 16  // 32-bit lanes of a ZMM register
	elemBlocks   = 6   // 384-byte element = 6 ChaCha20 blocks
	elemBytes    = 384 // one num3072
	blockBytes   = 64
	keyBytes     = 32
	doubleRounds = 10
)

var regs = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
	Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}

// layout is a way of assigning blocks to lanes: groups of elems elements,
// blocks ChaCha20 blocks computed per element (≥ elemBlocks).
type layout struct {
	name   string
	elems  int
	blocks int
}

func (l layout) passes() int { return (l.elems*l.blocks + lanes - 1) / lanes }

// lane returns the element (within the group) and block counter of lane i
// of pass p.
func (l layout) lane(p, i int) (elem, block int) {
	g := lanes*p + i
	return g / l.blocks, g % l.blocks
}

// window returns the first key of the four that pass p's lanes may use:
// the even key at or below its first element.
func (l layout) window(p int) int {
	e, _ := l.lane(p, 0)
	return e &^ 1
}

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

func kernel(l layout) {
	sig := table("chachaSigma"+l.name, sigma[:])
	var idx, ctr []uint32
	for p := 0; p < l.passes(); p++ {
		w0 := l.window(p)
		for w := 0; w < 8; w++ {
			for i := 0; i < lanes; i++ {
				e, _ := l.lane(p, i)
				rel := min(e-w0, 3) // lanes past the group read a valid (masked) key
				idx = append(idx, uint32(8*rel+w))
			}
		}
		for i := 0; i < lanes; i++ {
			_, b := l.lane(p, i)
			ctr = append(ctr, uint32(b))
		}
	}
	idxT := table("chachaKeyIndex"+l.name, idx)
	ctrT := table("chachaCounter"+l.name, ctr)

	name := "chachaMuHash" + l.name
	TEXT(name, NOSPLIT, "func(out *[48]uint64, keys *[32]byte, n int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets out[i] (i < n) to the first %d keystream bytes of ChaCha20 with key keys[i], nonce 0, counter 0, read as little-endian limbs; out and keys point at n consecutive values.", name, elemBytes))
	outP := Load(Param("out"), RDI)
	keysP := Load(Param("keys"), RSI)
	n := Load(Param("n"), RDX)
	out, keys := Mem{Base: outP}, Mem{Base: keysP}
	m, t, cnt, rounds := R8, R9, R10, RCX

	x := regs[:16]
	saved := regs[16:24] // key words 4..11, for the final addition
	klo, khi := Z24, Z25

	Label(name + "_group")
	TESTQ(n, n)
	JLE(LabelRef(name + "_done"))
	Comment(fmt.Sprintf("m = min(n, %d): the elements of this group.", l.elems))
	MOVQ(U32(l.elems), m)
	CMPQ(n, m)
	CMOVQLT(n, m)

	for p := 0; p < l.passes(); p++ {
		first, _ := l.lane(p, 0)
		w0 := l.window(p)
		pass := fmt.Sprintf("%s_pass%d", name, p)
		Comment(fmt.Sprintf("Pass %d: lanes are blocks %d..%d of the group, keys %d..%d.", p, lanes*p, lanes*p+lanes-1, w0, w0+3))
		if first > 0 {
			CMPQ(m, U32(first))
			JLE(LabelRef(name + "_next"))
		}
		Comment("Load keys w0..w0+3 that exist (m−w0 of them, at most 4), zeroing the rest.")
		MOVQ(m, cnt)
		if w0 > 0 {
			SUBQ(U32(w0), cnt)
		}
		MOVQ(U32(4), t)
		CMPQ(cnt, t)
		CMOVQGT(t, cnt)
		SHLQ(U8(3), cnt)
		MOVQ(I32(-1), t)
		SHLXQ(cnt, t, t)
		NOTQ(t)
		KMOVW(t.As32(), K1)
		SHRQ(U8(16), t)
		KMOVW(t.As32(), K2)
		VMOVDQU32_Z(keys.Offset(keyBytes*w0), K1, klo)
		VMOVDQU32_Z(keys.Offset(keyBytes*w0+64), K2, khi)

		for i := 0; i < 4; i++ {
			VPBROADCASTD(sig.Offset(4*i), x[i])
		}
		for w := 0; w < 8; w++ {
			VMOVDQU32(idxT.Offset(4*lanes*(8*p+w)), saved[w])
			VPERMI2D(khi, klo, saved[w])
			VMOVDQA32(saved[w], x[4+w])
		}
		VMOVDQU32(ctrT.Offset(4*lanes*p), x[12])
		for i := 13; i < 16; i++ {
			VPXORD(x[i], x[i], x[i])
		}
		MOVQ(U32(doubleRounds), rounds)
		Label(pass + "_rounds")
		Comment("Column round, then diagonal round.")
		for i := 0; i < 4; i++ {
			quarterRound(x[i], x[4+i], x[8+i], x[12+i])
		}
		for i := 0; i < 4; i++ {
			quarterRound(x[i], x[4+(i+1)%4], x[8+(i+2)%4], x[12+(i+3)%4])
		}
		DECQ(rounds)
		JNZ(LabelRef(pass + "_rounds"))

		Comment("Add the input; words 13..15 started at zero.")
		for i := 0; i < 4; i++ {
			VPADDD_BCST(sig.Offset(4*i), x[i], x[i])
		}
		for w := 0; w < 8; w++ {
			VPADDD(saved[w], x[4+w], x[4+w])
		}
		VPADDD(ctrT.Offset(4*lanes*p), x[12], x[12])

		blk := zmm.Transpose16(x, regs[16:32])
		Comment("Store the blocks of the group's elements (element e only if e < m).")
		prev := first
		for i := 0; i < lanes; i++ {
			e, b := l.lane(p, i)
			if b >= elemBlocks || e >= l.elems {
				continue
			}
			if e != prev {
				CMPQ(m, U32(e))
				JLE(LabelRef(name + "_next"))
				prev = e
			}
			VMOVDQU64(blk[i], out.Offset(elemBytes*e+blockBytes*b))
		}
	}
	Label(name + "_next")
	ADDQ(U32(elemBytes*l.elems), outP)
	ADDQ(U32(keyBytes*l.elems), keysP)
	SUBQ(U32(l.elems), n)
	JMP(LabelRef(name + "_group"))

	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func main() {
	alt := flag.Bool("layout8", false, "also emit chachaMuHash8 (2 elements × 8 blocks per pass), for measurements")
	flag.Parse()
	ConstraintExpr("amd64,!purego")
	kernel(layout{name: "AVX512", elems: 8, blocks: elemBlocks})
	if *alt {
		kernel(layout{name: "8AVX512", elems: 2, blocks: 8})
	}
	Generate()
}
