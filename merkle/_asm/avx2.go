package main

// The AVX2 kernels: eight messages per YMM register (one 32-bit lane each).
//
// What bounds them (measured on the Zen 5 host, bench/results/merkle.md):
// every AVX2 integer operation has a 2-cycle latency there, four issue per
// cycle, and shifts only two per cycle. AVX2 has no rotate, so Σ0 and Σ1 are
// 6 shifts and 5 XORs each, and a round is ≈ 35 operations.
//
//   - One group of 8 messages (sha256d64AVX2) is latency-bound: the round
//     is arranged so that both recurrences (a → a', e → e') are 5 operations
//     deep instead of 6 (e' = ((d+h+K+W) + Ch) + Σ1(e), a' = ((Maj−d) + e') +
//     Σ0(a)), Σ1 and Σ0 are balanced XOR trees issued first, and the
//     schedule is computed inline, 16 rounds ahead, in the registers that
//     are free between rounds.
//   - Two independent groups (sha256d64AVX2x2, 16 messages) interleaved
//     round by round fill the issue slots one chain leaves idle, which
//     makes the kernel throughput-bound (≈ 4 operations per cycle). The
//     state of two groups does not fit 16 registers, so each group keeps a,
//     b, e, f and b^c in registers and reads c, d, g, h from small rings in
//     the frame. Transforms 1 and 3 share one code path and all rounds
//     without schedule work share another, selected by a phase register, so
//     that the code stays small enough for the front end to keep up
//     (bench/results/merkle.md).

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func bigSigma0(x uint32) uint32 { return ror(x, 2) ^ ror(x, 13) ^ ror(x, 22) }
func bigSigma1(x uint32) uint32 { return ror(x, 6) ^ ror(x, 11) ^ ror(x, 25) }

// round0Consts are the constants of round 0 from the IV, broadcast by
// table: e1 = W0 + [0], a1 = W0 + [1]; [2] = IVa^IVb (b^c of round 1),
// [3] = IVb^IVc (b^c of round 0).
func round0Consts() []uint32 {
	a, b, c, d, e, f, g, h := iv[0], iv[1], iv[2], iv[3], iv[4], iv[5], iv[6], iv[7]
	t1 := h + bigSigma1(e) + ((e & f) ^ (^e & g)) + k[0]
	t2 := bigSigma0(a) + ((a & b) ^ (a & c) ^ (b & c))
	return []uint32{d + t1, t1 + t2, a ^ b, b ^ c}
}

// avx2Tables are the broadcast (8-lane) constant tables.
type avx2Tables struct {
	k, padKW, iv Mem
	t3kw, t3c    Mem // transform 3: K+W of rounds 8..15, folded schedule constants
	t3w          Mem // transform 3's constant words W[8..15]
	r0           Mem // round0Consts
}

// sig3 emits ror(x,r1)^ror(x,r2)^ror(x,r3) as a balanced tree (depth 4)
// and returns t[0], which holds it.
func sig3(x Register, t []Register, r1, r2, r3 uint64) Register {
	VPSRLD(U8(r1), x, t[0])
	VPSLLD(U8(32-r1), x, t[1])
	VPSRLD(U8(r2), x, t[2])
	VPSLLD(U8(32-r2), x, t[3])
	VPXOR(t[1], t[0], t[0])
	VPXOR(t[3], t[2], t[2])
	VPSRLD(U8(r3), x, t[1])
	VPSLLD(U8(32-r3), x, t[3])
	VPXOR(t[3], t[1], t[1])
	VPXOR(t[2], t[0], t[0])
	VPXOR(t[1], t[0], t[0])
	return t[0]
}

// sigSmall emits ror(x,r1)^ror(x,r2)^(x>>s) and returns t[0], which holds it.
func sigSmall(x Register, t []Register, r1, r2, s uint64) Register {
	VPSRLD(U8(r1), x, t[0])
	VPSLLD(U8(32-r1), x, t[1])
	VPSRLD(U8(r2), x, t[2])
	VPSLLD(U8(32-r2), x, t[3])
	VPXOR(t[1], t[0], t[0])
	VPXOR(t[3], t[2], t[2])
	VPSRLD(U8(s), x, t[1])
	VPXOR(t[2], t[0], t[0])
	VPXOR(t[1], t[0], t[0])
	return t[0]
}

// prologue loads the arguments and reserves a 64-byte-aligned frame of
// size bytes in R8. Goroutine stacks give SP no useful alignment, and 32-byte
// accesses that straddle cache lines are slow (bench/results/merkle.md).
func prologue(name, doc string, size int) (out, in Mem, n, base Register) {
	TEXT(name, 0, "func(out, in *byte, n int)")
	Doc(doc)
	out = Mem{Base: Load(Param("out"), RDI)}
	in = Mem{Base: Load(Param("in"), RSI)}
	n = Load(Param("n"), RCX)
	frame := AllocLocal(size + 64)
	LEAQ(frame, R8)
	ADDQ(U8(63), R8)
	ANDQ(I8(-64), R8)
	return out, in, n, R8
}

// ---------------------------------------------------------------------------
// One group: sha256d64AVX2.

// oneRound emits rounds on a state held entirely in Y0..Y7 with b^c in Y14;
// Y8..Y13 and Y15 are temporaries, free between rounds.
type oneRound struct {
	st []Register // a..h
}

// round emits round t; addKW adds K[t]+W[t] into its register (h).
func (g *oneRound) round(t int, addKW func(t int, h Register)) {
	a, b, c, d, e, f, gg, h := g.st[0], g.st[1], g.st[2], g.st[3], g.st[4], g.st[5], g.st[6], g.st[7]
	bc := Y14
	s1 := sig3(e, []Register{Y8, Y9, Y10, Y11}, 6, 11, 25)
	s0 := sig3(a, []Register{Y12, Y13, Y15, Y9}, 2, 13, 22)
	addKW(t, h)           // h + K + W
	VPAND(c, b, Y13)      // b & c
	VPSUBD(d, Y13, Y13)   // (b & c) - d
	VPADDD(h, d, d)       // d + h + K + W
	VPAND(f, e, Y9)       // e & f
	VPANDN(gg, e, Y10)    // ~e & g
	VPADDD(Y10, Y9, Y9)   // Ch(e, f, g): the two terms share no bit
	VPADDD(Y9, d, d)      //
	VPADDD(s1, d, d)      // e' = d + T1
	VPAND(bc, a, Y10)     // a & (b^c)
	VPXOR(b, a, bc)       // a^b: next round's b^c
	VPADDD(Y10, Y13, Y13) // Maj(a, b, c) - d: the two terms of Maj share no bit
	VPADDD(d, Y13, Y13)   // T1 + Maj
	VPADDD(s0, Y13, h)    // a' = T1 + Σ0 + Maj
	g.st = []Register{h, a, b, c, d, e, f, gg}
}

// oneSched emits W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16] into
// the frame, with the terms of known words folded into consts[t-16]. It
// uses Y8..Y13 and Y15.
func oneSched(w func(int) Mem, t int, known map[int]uint32, consts Mem) {
	tm := termsFor(t, known)
	var acc Register
	if tm.s1 {
		VMOVDQU(w(t-2), Y15)
		acc = sigSmall(Y15, []Register{Y8, Y9, Y10, Y11}, 17, 19, 10)
	}
	if tm.s0 {
		VMOVDQU(w(t-15), Y12)
		s0 := sigSmall(Y12, []Register{Y9, Y10, Y11, Y13}, 7, 18, 3)
		if acc == nil {
			acc = s0
		} else {
			VPADDD(s0, acc, acc)
		}
	}
	if acc == nil {
		panic("schedule step without a variable sigma term")
	}
	if tm.a {
		VPADDD(w(t-7), acc, acc)
	}
	if tm.b {
		VPADDD(w(t-16), acc, acc)
	}
	if tm.c != 0 {
		VPADDD(consts.Offset(32*(t-16)), acc, acc)
	}
	VMOVDQU(acc, w(t))
}

// genAVX2 emits sha256d64AVX2: one group of 8 messages per step.
func genAVX2(o *vecOps, tb avx2Tables) {
	const name = "sha256d64AVX2"
	out, in, n, base := prologue(name,
		"sha256d64AVX2 sets out[32i:32i+32] = SHA-256d(in[64i:64i+64]) for i < n, 8 messages per step; n must be a positive multiple of 8. out may equal in.",
		72*32)
	w := func(t int) Mem { return Mem{Base: base}.Offset(32 * t) }
	sv := func(i int) Mem { return Mem{Base: base}.Offset(32 * (64 + i)) }
	kp, wp, cnt := R10, R11, R12
	lbl := func(s string) string { return name + "_" + s }

	// loop runs rounds from..to-1 in blocks of 8; with sched, round t is
	// followed by the schedule step for W[t+16].
	loop := func(tag string, g *oneRound, from, to int, kTab Mem, withW, sched bool) {
		LEAQ(kTab.Offset(32*from), kp)
		if withW {
			LEAQ(w(from), wp)
		}
		MOVL(U32((to-from)/8), cnt.As32())
		Label(lbl(tag))
		wrel := func(x int) Mem { return Mem{Base: wp}.Offset(32 * (x - from)) }
		for j := 0; j < 8; j++ {
			g.round(j, func(t int, h Register) {
				VPADDD(Mem{Base: kp}.Offset(32*t), h, h)
				if withW {
					VPADDD(Mem{Base: wp}.Offset(32*t), h, h)
				}
			})
			if sched {
				oneSched(wrel, from+j+16, nil, tb.t3c)
			}
		}
		ADDQ(U32(256), kp)
		if withW {
			ADDQ(U32(256), wp)
		}
		DECL(cnt.As32())
		JNZ(LabelRef(lbl(tag)))
	}
	// start sets the state after round 0 from the IV, which is W[0] plus
	// constants in a and e and IV words elsewhere.
	start := func() *oneRound {
		a, b, c, d, e, f, gg, h := Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7
		VMOVDQU(w(0), a)
		VPADDD(tb.r0, a, e)
		VPADDD(tb.r0.Offset(32), a, a)
		for i, x := range []Register{b, c, d} {
			VMOVDQU(tb.iv.Offset(32*i), x)
		}
		for i, x := range []Register{f, gg, h} {
			VMOVDQU(tb.iv.Offset(32*(4+i)), x)
		}
		VMOVDQU(tb.r0.Offset(64), Y14)
		return &oneRound{st: []Register{a, b, c, d, e, f, gg, h}}
	}

	Label(lbl("loop"))
	Comment("Transform 1: load, byte-swap and transpose the messages into W[0..15].")
	o.transposeIn(in, w)
	oneSched(w, 16, nil, tb.t3c)
	g := start()
	for t := 1; t < 8; t++ {
		oneSched(w, t+16, nil, tb.t3c)
		g.round(t, func(t int, h Register) {
			VPADDD(tb.k.Offset(32*t), h, h)
			VPADDD(w(t), h, h)
		})
	}
	loop("r1a", g, 8, 48, tb.k, true, true)
	loop("r1b", g, 48, 64, tb.k, true, false)
	for i, x := range g.st {
		VPADDD(tb.iv.Offset(32*i), x, x)
		VMOVDQU(x, sv(i))
	}
	VPXOR(g.st[2], g.st[1], Y14)
	Comment("Transform 2: the constant padding block (precomputed K+W).")
	loop("r2", g, 0, 64, tb.padKW, false, false)
	for i, x := range g.st {
		VPADDD(sv(i), x, x)
		VMOVDQU(x, w(i))
	}
	Comment("Transform 3: hash the 32-byte digest; W[8..15] are constants.")
	oneSched(w, 16, t3Known, tb.t3c)
	g = start()
	for t := 1; t < 16; t++ {
		oneSched(w, t+16, t3Known, tb.t3c)
		g.round(t, func(t int, h Register) {
			if t >= 8 {
				VPADDD(tb.t3kw.Offset(32*(t-8)), h, h) // constant words: K+W folded
				return
			}
			VPADDD(tb.k.Offset(32*t), h, h)
			VPADDD(w(t), h, h)
		})
	}
	loop("r3a", g, 16, 48, tb.k, true, true)
	loop("r3b", g, 48, 64, tb.k, true, false)
	for i, x := range g.st {
		VPADDD(tb.iv.Offset(32*i), x, x)
	}
	Comment("Byte-swap, transpose and store the digests.")
	o.storeOut(out, g.st)

	ADDQ(U32(64*8), in.Base)
	ADDQ(U32(32*8), out.Base)
	SUBQ(U32(8), n)
	JNZ(LabelRef(lbl("loop")))
	VZEROUPPER()
	RET()
}

// ---------------------------------------------------------------------------
// Two groups: sha256d64AVX2x2.

// x2body is the number of rounds per loop body, and the size of the rings.
const x2body = 4

// x2T are the temporaries shared by both groups; free between rounds.
var x2T = []Register{Y10, Y11, Y12, Y13, Y14, Y15}

// group is one group of 8 messages of the two-group kernel: a, b, e, f and
// b^c live in registers, c, d, g, h in rings in the frame, A[i mod 4] = a_i
// and E[i mod 4] = e_i, a_i being a at the start of round i.
type group struct {
	a, b, e, f, bc Register
	w              func(t int) Mem // W[t]
	A, E           func(i int) Mem // ring slots
	sv             func(i int) Mem // transform-1 output, then the final digest
}

func slot(i int) int { return ((i % x2body) + x2body) % x2body }

// round emits round t, the 35-operation form (its chains are 6 deep, but
// the other group fills the gaps): T1 = h + K + W + Ch + Σ1, e' = d + T1,
// a' = T1 + Σ0 + Maj, with d, g, h read from the rings and a', e' written
// back to them.
func (g *group) round(t int, addKW func(t int, x Register)) {
	T := x2T
	dM, gM, hM := g.A(slot(t-3)), g.E(slot(t-2)), g.E(slot(t-3))
	s1 := sig3(g.e, T[:4], 6, 11, 25)
	VMOVDQU(hM, T[4])
	addKW(t, T[4])
	VPXOR(gM, g.f, T[5])
	VPAND(g.e, T[5], T[5])
	VPXOR(gM, T[5], T[5]) // Ch(e, f, g)
	VPADDD(T[5], T[4], T[4])
	VPADDD(s1, T[4], T[4]) // T1
	VPADDD(dM, T[4], g.f)  // e' = d + T1, in f's register
	VMOVDQU(g.f, g.E(slot(t+1)))
	s0 := sig3(g.a, T[:4], 2, 13, 22)
	VPADDD(s0, T[4], T[4])
	VPXOR(g.b, g.a, T[5])   // a^b: next round's b^c
	VPAND(g.bc, T[5], T[1]) // (a^b) & (b^c)
	VPXOR(g.b, T[1], T[1])  // Maj(a, b, c)
	VMOVDQA(T[5], g.bc)
	VPADDD(T[1], T[4], g.b) // a' = T1 + T2, in b's register
	VMOVDQU(g.b, g.A(slot(t+1)))
	g.a, g.b = g.b, g.a
	g.e, g.f = g.f, g.e
}

// sched emits W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16].
func (g *group) sched(w func(int) Mem, t int) {
	T := x2T
	VMOVDQU(w(t-15), T[0])
	acc := sigSmall(T[0], T[1:5], 7, 18, 3)
	VPADDD(w(t-16), acc, acc)
	VPADDD(w(t-7), acc, acc)
	VMOVDQU(w(t-2), T[0])
	s1 := sigSmall(T[0], T[2:6], 17, 19, 10)
	VPADDD(s1, acc, acc)
	VMOVDQU(acc, w(t))
}

// ring lists the memory of state words a, b, c, d, e, f, g, h at the
// start of round 0 (a, b, e, f are also in registers).
func (g *group) ring() []Mem {
	return []Mem{g.A(slot(0)), g.A(slot(-1)), g.A(slot(-2)), g.A(slot(-3)),
		g.E(slot(0)), g.E(slot(-1)), g.E(slot(-2)), g.E(slot(-3))}
}

// word is where state word i is after a multiple of x2body rounds.
func (g *group) word(i int) Op {
	if r := []Register{g.a, g.b, nil, nil, g.e, g.f, nil, nil}[i]; r != nil {
		return r
	}
	return g.ring()[i]
}

// feed adds src(i) to every state word and calls store with the register
// holding the sum.
func (g *group) feed(src func(i int) Mem, store func(i int, r Register)) {
	for i := 0; i < 8; i++ {
		switch op := g.word(i).(type) {
		case Register:
			VPADDD(src(i), op, op)
			store(i, op)
		case Mem:
			VMOVDQU(op, x2T[0])
			VPADDD(src(i), x2T[0], x2T[0])
			store(i, x2T[0])
		}
	}
}

// initIV sets the state of g to the IV.
func (g *group) initIV(tb avx2Tables, a, b, e, f Register) {
	g.a, g.b, g.e, g.f = a, b, e, f
	VMOVDQU(tb.iv.Offset(0), g.a)
	VMOVDQU(tb.iv.Offset(32), g.b)
	VMOVDQU(tb.iv.Offset(128), g.e)
	VMOVDQU(tb.iv.Offset(160), g.f)
	VMOVDQU(tb.r0.Offset(96), g.bc)
	for i, m := range g.ring() {
		VMOVDQU(tb.iv.Offset(32*i), x2T[0])
		VMOVDQU(x2T[0], m)
	}
}

// genAVX2x2 emits sha256d64AVX2x2: two groups of 8 messages per step,
// interleaved round by round.
//
// Frame (bytes from the aligned base): W of both groups interleaved, X's
// W[t] at 64t and Y's at 64t+32 (4096 bytes); 4 zero rows read as W by
// transform 2 (256); then per group the transform-1 output (256) and the
// rings A and E (128 each).
func genAVX2x2(o *vecOps, tb avx2Tables) {
	const name = "sha256d64AVX2x2"
	const zero, sv, rings = 4096, 4096 + 64*x2body, 4096 + 64*x2body + 512
	out, in, n, base := prologue(name,
		"sha256d64AVX2x2 sets out[32i:32i+32] = SHA-256d(in[64i:64i+64]) for i < n, 16 messages per step as two interleaved groups of 8; n must be a positive multiple of 16. out may equal in.",
		rings+4*32*x2body)
	at := func(off, stride int) func(int) Mem {
		return func(i int) Mem { return Mem{Base: base}.Offset(off + stride*i) }
	}
	X := &group{bc: Y4, w: at(0, 64), sv: at(sv, 32),
		A: at(rings, 32), E: at(rings+32*x2body, 32)}
	Y := &group{bc: Y9, w: at(32, 64), sv: at(sv+256, 32),
		A: at(rings+64*x2body, 32), E: at(rings+96*x2body, 32)}
	gs := []*group{X, Y}
	kp, wp, cnt, phase, stride := R10, R11, R12, R13, R14
	lbl := func(s string) string { return name + "_" + s }

	VPXOR(Y0, Y0, Y0)
	for i := 0; i < 2*x2body; i++ {
		VMOVDQU(Y0, Mem{Base: base}.Offset(zero+32*i))
	}
	// body emits x2body rounds of both groups, K at kp and W at wp; with
	// sched, round t is followed by the schedule steps for W[t+16].
	body := func(sched bool) {
		for j := 0; j < x2body; j++ {
			for gi, g := range gs {
				g.round(j, func(t int, h Register) {
					VPADDD(Mem{Base: kp}.Offset(32*t), h, h)
					VPADDD(Mem{Base: wp}.Offset(64*t+32*gi), h, h)
				})
			}
			if sched {
				for gi, g := range gs {
					g.sched(func(t int) Mem { return Mem{Base: wp}.Offset(64*t + 32*gi) }, j+16)
				}
			}
		}
	}

	Label(lbl("loop"))
	Comment("Load, byte-swap and transpose both groups' messages into W[0..15].")
	o.transposeIn(in, X.w)
	o.transposeIn(in.Offset(512), Y.w)
	XORL(phase.As32(), phase.As32())

	Label(lbl("t13"))
	Comment("Transforms 1 and 3 (phase 0 and 2): rounds 0..47, each followed by the schedule steps for W[t+16].")
	X.initIV(tb, Y0, Y1, Y2, Y3)
	Y.initIV(tb, Y5, Y6, Y7, Y8)
	LEAQ(tb.k, kp)
	MOVQ(base, wp)
	MOVL(U32(48/x2body), cnt.As32())
	Label(lbl("sched"))
	body(true)
	ADDQ(U32(32*x2body), kp)
	ADDQ(U32(64*x2body), wp)
	DECL(cnt.As32())
	JNZ(LabelRef(lbl("sched")))
	MOVL(U32(16/x2body), cnt.As32())
	MOVL(U32(64*x2body), stride.As32())

	Label(lbl("rounds"))
	Comment("Rounds 48..63 of transforms 1 and 3, and transform 2 (K+W precomputed, W read as zero).")
	body(false)
	ADDQ(U32(32*x2body), kp)
	ADDQ(stride, wp)
	DECL(cnt.As32())
	JNZ(LabelRef(lbl("rounds")))
	CMPL(phase.As32(), U8(1))
	JEQ(LabelRef(lbl("after2")))
	JA(LabelRef(lbl("after3")))

	Comment("After transform 1: feed-forward, keep the result for transform 2, run transform 2.")
	for _, g := range gs {
		ring := g.ring()
		g.feed(func(i int) Mem { return tb.iv.Offset(32 * i) }, func(i int, r Register) {
			VMOVDQU(r, g.sv(i))
			VMOVDQU(r, ring[i])
		})
		VPXOR(ring[2], g.b, g.bc)
	}
	LEAQ(tb.padKW, kp)
	LEAQ(Mem{Base: base}.Offset(zero), wp)
	MOVL(U32(64/x2body), cnt.As32())
	XORL(stride.As32(), stride.As32())
	MOVL(U32(1), phase.As32())
	JMP(LabelRef(lbl("rounds")))

	Label(lbl("after2"))
	Comment("After transform 2: the digests and the constant padding words are transform 3's W[0..15].")
	for _, g := range gs {
		g.feed(g.sv, func(i int, r Register) { VMOVDQU(r, g.w(i)) })
		for i := 8; i < 16; i++ {
			VMOVDQU(tb.t3w.Offset(32*(i-8)), x2T[0])
			VMOVDQU(x2T[0], g.w(i))
		}
	}
	MOVL(U32(2), phase.As32())
	JMP(LabelRef(lbl("t13")))

	Label(lbl("after3"))
	Comment("After transform 3: feed-forward, byte-swap, transpose and store the digests.")
	for _, g := range gs {
		g.feed(func(i int) Mem { return tb.iv.Offset(32 * i) }, func(i int, r Register) { VMOVDQU(r, g.sv(i)) })
	}
	for gi, g := range gs {
		st := []Register{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7}
		for i, r := range st {
			VMOVDQU(g.sv(i), r)
		}
		o.storeOut(out.Offset(256*gi), st)
	}
	ADDQ(U32(64*16), in.Base)
	ADDQ(U32(32*16), out.Base)
	SUBQ(U32(16), n)
	JNZ(LabelRef(lbl("loop")))
	VZEROUPPER()
	RET()
}
