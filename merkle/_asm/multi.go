package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// genMultiAVX512 emits the 16-lane kernel for messages of any length
// (transaction ids): each lane hashes its own message one 64-byte block
// per step, the blocks (already padded by the caller) found through a
// table of pointers, and keeps its state once its blocks run out (opmask
// merge); the 32-byte digests then go through transform 3 as in
// genAVX512. The state between steps and the blocks left per lane live in
// the stack frame, since the schedule window and the rounds use all 32
// registers.
func genMultiAVX512(o *vecOps, k1, t3kw1, t3c, iv1, one, mask Mem) {
	const name = "sha256dMultiAVX512"
	TEXT(name, NOSPLIT, "func(out *byte, ptrs *uintptr, nblocks *uint32, steps int)")
	Doc(name+" sets out[32i:32i+32] = SHA-256d(message i) for 16 messages: at step j < steps, lane i hashes the 64-byte block at ptrs[16j+i] if j < nblocks[i] (the caller supplies the padding blocks, and a readable block for lanes already done). steps must be positive.",
		"Every nblocks[i] must be at most steps.")
	out := Mem{Base: Load(Param("out"), RDI)}
	ptrs := Mem{Base: Load(Param("ptrs"), RSI)}
	nb := Mem{Base: Load(Param("nblocks"), RDX)}
	steps := Load(Param("steps"), RCX)
	saved := AllocLocal(9 * 64) // state a..h, then blocks left per lane
	left := saved.Offset(8 * 64)
	r := o.regs
	wr := r[16:32]
	st0 := r[0:8]
	sa, sb, sc := r[13], r[14], r[15]
	addW := func(t int, h Register) {
		VPADDD_BCST(k1.Offset(4*t), h, h)
		VPADDD(wr[t%16], h, h)
	}
	var known map[int]uint32 // nil for the message blocks, t3Known in transform 3
	sched := avx512Sched(o, wr, sa, sb, sc, t3c, &known)

	Comment("State := IV in every lane; blocks left := nblocks.")
	for i := 0; i < 8; i++ {
		VPBROADCASTD(iv1.Offset(4*i), r[0])
		VMOVDQU32(r[0], saved.Offset(64*i))
	}
	VMOVDQU32(nb, r[0])
	VMOVDQU32(r[0], left)

	Label(name + "_step")
	Comment("Load each lane's block through its pointer, byte-swap and transpose into W[0..15].")
	for i := 0; i < 16; i++ {
		MOVQ(ptrs.Offset(8*i), R8)
		VMOVDQU32(Mem{Base: R8}, r[i])
		VPSHUFB(mask, r[i], r[i])
	}
	avx512TransposeW(r, wr)
	st := append([]Register(nil), st0...)
	for i, x := range st {
		VMOVDQU32(saved.Offset(64*i), x)
	}
	known = nil
	st = roundsPre(o, st, sched, addW)
	Comment("Lanes with a block left add the compressed block to their state; the others keep it.")
	tmp := wr[0]
	VMOVDQU32(left, tmp)
	VPTESTMD(tmp, tmp, K1)
	VPSUBD_BCST(one, tmp, K1, tmp)
	VMOVDQU32(tmp, left)
	for i, x := range st {
		VMOVDQU32(saved.Offset(64*i), tmp)
		VPADDD(x, tmp, K1, tmp)
		VMOVDQU32(tmp, saved.Offset(64*i))
	}
	ADDQ(U32(8*16), ptrs.Base)
	DECQ(steps)
	JNZ(LabelRef(name + "_step"))

	Comment("Transform 3: hash the 32-byte digests; W[8..15] are constants.")
	for i := 0; i < 8; i++ {
		VMOVDQU32(saved.Offset(64*i), wr[i])
	}
	avx512Transform3(o, st0, sched, &known, addW, iv1, t3kw1, out)
	VZEROUPPER()
	RET()
}
