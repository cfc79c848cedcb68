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
	var known map[int]uint32
	sched := func(t int) {
		if t < 16 {
			return
		}
		tm := termsFor(t, known)
		dst := wr[t%16]
		have := tm.b
		if tm.s1 {
			if have {
				o.sigmaSmall(wr[(t-2)%16], sb, sc, sa, 17, 19, 10)
				VPADDD(sa, dst, dst)
			} else {
				o.sigmaSmall(wr[(t-2)%16], sb, sc, dst, 17, 19, 10)
			}
			have = true
		}
		if tm.s0 {
			if have {
				o.sigmaSmall(wr[(t-15)%16], sb, sc, sa, 7, 18, 3)
				VPADDD(sa, dst, dst)
			} else {
				o.sigmaSmall(wr[(t-15)%16], sb, sc, dst, 7, 18, 3)
			}
			have = true
		}
		if tm.a {
			VPADDD(wr[(t-7)%16], dst, dst)
		}
		if tm.c != 0 {
			VPADDD_BCST(t3c.Offset(4*(t-16)), dst, dst)
		}
	}

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
	for p := 0; p < 8; p++ {
		VPUNPCKLDQ(r[2*p+1], r[2*p], wr[2*p])
		VPUNPCKHDQ(r[2*p+1], r[2*p], wr[2*p+1])
	}
	t := wr
	for g := 0; g < 4; g++ {
		VPUNPCKLQDQ(t[4*g+2], t[4*g], r[4*g+0])
		VPUNPCKHQDQ(t[4*g+2], t[4*g], r[4*g+1])
		VPUNPCKLQDQ(t[4*g+3], t[4*g+1], r[4*g+2])
		VPUNPCKHQDQ(t[4*g+3], t[4*g+1], r[4*g+3])
	}
	for kk := 0; kk < 4; kk++ {
		var p0, p1, q0, q1 Register
		if kk == 0 {
			p0, p1, q0, q1 = wr[1], wr[2], wr[3], wr[5]
		} else {
			p0, p1, q0, q1 = r[kk-1], r[4+kk-1], r[8+kk-1], r[12+kk-1]
		}
		u0, u1, u2, u3 := r[kk], r[4+kk], r[8+kk], r[12+kk]
		VSHUFI32X4(U8(0x44), u1, u0, p0)
		VSHUFI32X4(U8(0xEE), u1, u0, p1)
		VSHUFI32X4(U8(0x44), u3, u2, q0)
		VSHUFI32X4(U8(0xEE), u3, u2, q1)
		VSHUFI32X4(U8(0x88), q0, p0, wr[kk])
		VSHUFI32X4(U8(0xDD), q0, p0, wr[4+kk])
		VSHUFI32X4(U8(0x88), q1, p1, wr[8+kk])
		VSHUFI32X4(U8(0xDD), q1, p1, wr[12+kk])
	}
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
	known = t3Known
	st = append(st[:0], st0...)
	for i, x := range st {
		VPBROADCASTD(iv1.Offset(4*i), x)
	}
	st = roundsPre(o, st, sched, func(t int, h Register) {
		if t >= 8 && t < 16 {
			VPADDD_BCST(t3kw1.Offset(4*(t-8)), h, h)
			return
		}
		addW(t, h)
	})
	for i, x := range st {
		VPADDD_BCST(iv1.Offset(4*i), x, x)
	}
	Comment("Byte-swap, transpose and store the digests.")
	o.storeOut(out, st)
	VZEROUPPER()
	RET()
}
