// Command _asm generates merkle/sha256d_amd64.s and its Go stubs with avo:
// SHA-256d of batches of 64-byte messages (merkle node pairs) using AVX2 (8
// lanes), AVX-512 (16 lanes) and SHA-NI (two interleaved streams).
//
// Run it through `go generate ./merkle/...` from the main module.
//
// Layout of every kernel: transform 1 hashes the message from the SHA-256
// IV; transform 2 is the constant padding block of a 64-byte message, whose
// K+W schedule is a precomputed table; transform 3 hashes the 32-byte digest
// with its constant padding words.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

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

var iv = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

func ror(x uint32, n uint) uint32 { return x>>n | x<<(32-n) }

// schedule expands W[16..63] in place.
func schedule(w *[64]uint32) {
	for i := 16; i < 64; i++ {
		s0 := ror(w[i-15], 7) ^ ror(w[i-15], 18) ^ w[i-15]>>3
		s1 := ror(w[i-2], 17) ^ ror(w[i-2], 19) ^ w[i-2]>>10
		w[i] = s1 + w[i-7] + s0 + w[i-16]
	}
}

// padKW is K+W of the constant padding block of a 64-byte message.
func padKW() (kw [64]uint32) {
	var w [64]uint32
	w[0], w[15] = 0x80000000, 512
	schedule(&w)
	for i := range kw {
		kw[i] = k[i] + w[i]
	}
	return kw
}

// table emits a read-only table of 32-bit words, each repeated rep times.
func table(name string, words []uint32, rep int) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	off := 0
	for _, v := range words {
		for r := 0; r < rep; r++ {
			DATA(off, U32(v))
			off += 4
		}
	}
	return m
}

// bswapMask emits a PSHUFB mask reversing the bytes of each 32-bit word.
func bswapMask(name string, bytes int) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < bytes; i += 4 {
		DATA(i, U32(uint32(i+3)|uint32(i+2)<<8|uint32(i+1)<<16|uint32(i)<<24))
	}
	return m
}

// t3KW is K+W for rounds 8..15 of transform 3, whose message words are the
// constant padding of a 32-byte message (0x80000000, zeros, length 256).
func t3KW() []uint32 {
	w := []uint32{0x80000000, 0, 0, 0, 0, 0, 0, 256}
	var kw []uint32
	for i, v := range w {
		kw = append(kw, k[8+i]+v)
	}
	return kw
}

// t3Known holds transform 3's constant message words W[8..15].
var t3Known = map[int]uint32{8: 0x80000000, 9: 0, 10: 0, 11: 0, 12: 0, 13: 0, 14: 0, 15: 256}

func sigma0(x uint32) uint32 { return ror(x, 7) ^ ror(x, 18) ^ x>>3 }
func sigma1(x uint32) uint32 { return ror(x, 17) ^ ror(x, 19) ^ x>>10 }

// schedTerm describes W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]
// given which words are generation-time constants: c is the sum of the
// constant terms, the flags say which terms must be computed.
type schedTerm struct {
	c            uint32
	s1, a, s0, b bool
}

func termsFor(t int, known map[int]uint32) schedTerm {
	var st schedTerm
	if v, ok := known[t-2]; ok {
		st.c += sigma1(v)
	} else {
		st.s1 = true
	}
	if v, ok := known[t-7]; ok {
		st.c += v
	} else {
		st.a = true
	}
	if v, ok := known[t-15]; ok {
		st.c += sigma0(v)
	} else {
		st.s0 = true
	}
	if v, ok := known[t-16]; ok {
		st.c += v
	} else {
		st.b = true
	}
	return st
}

// t3SchedConsts lists, for t = 16..63, the folded constant of transform 3's
// schedule (zero for most t).
func t3SchedConsts() []uint32 {
	var out []uint32
	for t := 16; t < 64; t++ {
		out = append(out, termsFor(t, t3Known).c)
	}
	return out
}

func main() {
	ConstraintExpr("amd64,!purego")
	kw := padKW()

	// AVX2 tables: every word broadcast to 8 lanes (32 bytes).
	k8 := table("k8", k[:], 8)
	kw8 := table("padkw8", kw[:], 8)
	iv8 := table("iv8", iv[:], 8)
	mask32 := bswapMask("bswap32", 32)

	// AVX-512 tables: scalar words, broadcast by EVEX embedded broadcast.
	k1 := table("k1", k[:], 1)
	kw1 := table("padkw1", kw[:], 1)
	iv1 := table("iv1", iv[:], 1)
	mask64 := bswapMask("bswap64", 64)

	tb := avx2Tables{k: k8, padKW: kw8, iv: iv8,
		t3kw: table("t3kw8", t3KW(), 8), t3c: table("t3sched8", t3SchedConsts(), 8),
		t3w: table("t3w8", []uint32{0x80000000, 0, 0, 0, 0, 0, 0, 256}, 8), r0: table("r0c8", round0Consts(), 8)}
	genAVX2(avx2Ops(mask32), tb)
	genAVX2x2(avx2Ops(mask32), tb)
	t3kw1 := table("t3kw1", t3KW(), 1)
	t3c1 := table("t3sched1", t3SchedConsts(), 1)
	genAVX512(avx512Ops(k1, kw1, iv1, mask64), k1, kw1, t3kw1, t3c1, iv1, mask64)
	genSHANI(kw)
	Generate()
}

// vecOps abstracts the register-level steps of the vector kernels (the
// AVX2 kernels use only its transposes; avx2.go has their rounds).
type vecOps struct {
	name, doc string
	lanes     int
	width     int // bytes per register
	regs      []Register
	// addK adds K[t] (t < 64), padKW[t] (t >= 64) to x.
	addK func(t int, x Register)
	// iv loads IV word i into x.
	iv          func(i int, x Register)
	sigmaBig    func(x, t0, t1, t2, dst Register, r1, r2, r3 uint64)
	sigmaSmall  func(x, t0, t1, dst Register, r1, r2, s uint64)
	ch          func(e, f, g, dst Register)
	bswap       func(x Register)
	transposeIn func(in Mem, w func(int) Mem)
	storeOut    func(out Mem, s []Register)
}

// avx2Ops holds the AVX2 kernels' load/transpose and transpose/store steps.
func avx2Ops(mask Mem) *vecOps {
	o := &vecOps{lanes: 8, width: 32}
	for _, r := range []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15} {
		o.regs = append(o.regs, r)
	}
	o.bswap = func(x Register) { VPSHUFB(mask, x, x) }
	r := o.regs
	o.transposeIn = func(in Mem, w func(int) Mem) {
		for half := 0; half < 2; half++ {
			for i := 0; i < 8; i++ {
				VMOVDQU(in.Offset(64*i+32*half), r[i])
				VPSHUFB(mask, r[i], r[i])
			}
			rows := transpose8(r[:8], r[8:])
			for j, x := range rows {
				VMOVDQU(x, w(8*half+j))
			}
		}
	}
	o.storeOut = func(out Mem, s []Register) {
		tmp := []Register{}
		used := map[Register]bool{}
		for _, x := range s {
			used[x] = true
		}
		for _, x := range r {
			if !used[x] {
				tmp = append(tmp, x)
			}
		}
		for _, x := range s {
			VPSHUFB(mask, x, x)
		}
		rows := transpose8(s, tmp)
		for i, x := range rows {
			VMOVDQU(x, out.Offset(32*i))
		}
	}
	return o
}

// transpose8 transposes the 8x8 matrix of 32-bit words in rows (row i =
// register i) using the 8 temporaries; it returns the registers holding the
// transposed rows in order (a mix of rows and tmp).
func transpose8(rows, tmp []Register) []Register {
	t := tmp
	for p := 0; p < 4; p++ {
		VPUNPCKLDQ(rows[2*p+1], rows[2*p], t[2*p])
		VPUNPCKHDQ(rows[2*p+1], rows[2*p], t[2*p+1])
	}
	// u[g][k] lane L = word 4L+k of rows 4g..4g+3.
	var u [2][4]Register
	for g := 0; g < 2; g++ {
		u[g][0], u[g][1], u[g][2], u[g][3] = rows[4*g], rows[4*g+1], rows[4*g+2], rows[4*g+3]
		VPUNPCKLQDQ(t[4*g+2], t[4*g], u[g][0])
		VPUNPCKHQDQ(t[4*g+2], t[4*g], u[g][1])
		VPUNPCKLQDQ(t[4*g+3], t[4*g+1], u[g][2])
		VPUNPCKHQDQ(t[4*g+3], t[4*g+1], u[g][3])
	}
	out := make([]Register, 8)
	for kk := 0; kk < 4; kk++ {
		out[kk], out[4+kk] = t[2*kk], t[2*kk+1]
		VPERM2I128(U8(0x20), u[1][kk], u[0][kk], out[kk])
		VPERM2I128(U8(0x31), u[1][kk], u[0][kk], out[4+kk])
	}
	return out
}

func avx512Ops(k1, kw1, iv1, mask Mem) *vecOps {
	o := &vecOps{name: "sha256d64AVX512", lanes: 16, width: 64}
	o.doc = "sha256d64AVX512 sets out[32i:32i+32] = SHA-256d(in[64i:64i+64]) for i < n, 16 messages per step; n must be a positive multiple of 16. out may equal in."
	for i := 0; i < 32; i++ {
		o.regs = append(o.regs, zreg(i))
	}
	o.addK = func(t int, x Register) {
		if t < 64 {
			VPADDD_BCST(k1.Offset(4*t), x, x)
		} else {
			VPADDD_BCST(kw1.Offset(4*(t-64)), x, x)
		}
	}
	o.iv = func(i int, x Register) { VPBROADCASTD(iv1.Offset(4*i), x) }
	o.sigmaBig = func(x, t0, t1, t2, dst Register, r1, r2, r3 uint64) {
		VPRORD(U8(r1), x, dst)
		VPRORD(U8(r2), x, t0)
		VPRORD(U8(r3), x, t1)
		VPTERNLOGD(U8(0x96), t1, t0, dst)
	}
	o.sigmaSmall = func(x, t0, t1, dst Register, r1, r2, s uint64) {
		VPRORD(U8(r1), x, dst)
		VPRORD(U8(r2), x, t0)
		VPSRLD(U8(s), x, t1)
		VPTERNLOGD(U8(0x96), t1, t0, dst)
	}
	o.ch = func(e, f, g, dst Register) {
		VMOVDQA32(e, dst)
		VPTERNLOGD(U8(0xCA), g, f, dst)
	}
	o.bswap = func(x Register) { VPSHUFB(mask, x, x) }
	r := o.regs
	o.transposeIn = func(in Mem, w func(int) Mem) {
		for i := 0; i < 16; i++ {
			VMOVDQU32(in.Offset(64*i), r[i])
			VPSHUFB(mask, r[i], r[i])
		}
		t := r[16:]
		for p := 0; p < 8; p++ {
			VPUNPCKLDQ(r[2*p+1], r[2*p], t[2*p])
			VPUNPCKHDQ(r[2*p+1], r[2*p], t[2*p+1])
		}
		// u[g][k] (register r[4g+k]) lane L = word 4L+k of messages 4g..4g+3.
		var u [4][4]Register
		for g := 0; g < 4; g++ {
			for kk := 0; kk < 4; kk++ {
				u[g][kk] = r[4*g+kk]
			}
			VPUNPCKLQDQ(t[4*g+2], t[4*g], u[g][0])
			VPUNPCKHQDQ(t[4*g+2], t[4*g], u[g][1])
			VPUNPCKLQDQ(t[4*g+3], t[4*g+1], u[g][2])
			VPUNPCKHQDQ(t[4*g+3], t[4*g+1], u[g][3])
		}
		for kk := 0; kk < 4; kk++ {
			p0, p1, q0, q1 := t[0], t[1], t[2], t[3]
			VSHUFI32X4(U8(0x44), u[1][kk], u[0][kk], p0)
			VSHUFI32X4(U8(0xEE), u[1][kk], u[0][kk], p1)
			VSHUFI32X4(U8(0x44), u[3][kk], u[2][kk], q0)
			VSHUFI32X4(U8(0xEE), u[3][kk], u[2][kk], q1)
			o0, o1, o2, o3 := t[4], t[5], t[6], t[7]
			VSHUFI32X4(U8(0x88), q0, p0, o0)
			VSHUFI32X4(U8(0xDD), q0, p0, o1)
			VSHUFI32X4(U8(0x88), q1, p1, o2)
			VSHUFI32X4(U8(0xDD), q1, p1, o3)
			VMOVDQU32(o0, w(kk))
			VMOVDQU32(o1, w(4+kk))
			VMOVDQU32(o2, w(8+kk))
			VMOVDQU32(o3, w(12+kk))
		}
	}
	o.storeOut = func(out Mem, s []Register) {
		for _, x := range s {
			VPSHUFB(mask, x, x)
		}
		t := r[16:24]
		for p := 0; p < 4; p++ {
			VPUNPCKLDQ(s[2*p+1], s[2*p], t[2*p])
			VPUNPCKHDQ(s[2*p+1], s[2*p], t[2*p+1])
		}
		// u[k] lane L = words 0-3 of message 4L+k; u[4+k] = words 4-7.
		u := r[24:32]
		for g := 0; g < 2; g++ {
			VPUNPCKLQDQ(t[4*g+2], t[4*g], u[4*g+0])
			VPUNPCKHQDQ(t[4*g+2], t[4*g], u[4*g+1])
			VPUNPCKLQDQ(t[4*g+3], t[4*g+1], u[4*g+2])
			VPUNPCKHQDQ(t[4*g+3], t[4*g+1], u[4*g+3])
		}
		a, b := t[0:4], t[4:8]
		for kk := 0; kk < 4; kk++ {
			VSHUFI32X4(U8(0x44), u[4+kk], u[kk], a[kk])
			VSHUFI32X4(U8(0xEE), u[4+kk], u[kk], b[kk])
		}
		o := s
		for kk := 0; kk < 4; kk += 2 {
			VSHUFI32X4(U8(0x88), a[kk+1], a[kk], o[0])
			VSHUFI32X4(U8(0xDD), a[kk+1], a[kk], o[1])
			VSHUFI32X4(U8(0x88), b[kk+1], b[kk], o[2])
			VSHUFI32X4(U8(0xDD), b[kk+1], b[kk], o[3])
			VMOVDQU32(o[0], out.Offset(32*kk))
			VMOVDQU32(o[1], out.Offset(32*(4+kk)))
			VMOVDQU32(o[2], out.Offset(32*(8+kk)))
			VMOVDQU32(o[3], out.Offset(32*(12+kk)))
		}
	}
	return o
}

func zreg(i int) VecPhysical {
	return []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
		Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}[i]
}

// rounds emits 64 AVX-512 rounds over state st (a..h) and returns the
// registers holding the new a..h. addKW adds K[t]+W[t] into its register.
func rounds(o *vecOps, st []Register, addKW func(t int, h Register)) []Register {
	return roundsPre(o, st, nil, addKW)
}

// roundsPre is rounds with a hook run at the start of each round (the
// AVX-512 kernel computes its register-resident schedule there).
func roundsPre(o *vecOps, st []Register, pre func(t int), addKW func(t int, h Register)) []Register {
	r := o.regs
	a, b, c, d, e, f, g, h := st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
	t0, t1, t2, t3, ab := r[8], r[9], r[10], r[11], r[13]
	for t := 0; t < 64; t++ {
		if pre != nil {
			pre(t)
		}
		addKW(t, h)
		o.ch(e, f, g, t3)
		o.sigmaBig(e, t0, t1, t2, ab, 6, 11, 25)
		VPADDD(t3, h, h)
		VPADDD(ab, h, h) // h = T1
		VPADDD(h, d, d)  // e' = d + T1
		o.sigmaBig(a, t0, t1, t2, t3, 2, 13, 22)
		VPADDD(t3, h, h)
		// Maj via ternary logic (majority truth table 0xE8).
		VMOVDQA32(a, t3)
		VPTERNLOGD(U8(0xE8), c, b, t3)
		VPADDD(t3, h, h) // a' = T1 + T2
		a, b, c, d, e, f, g, h = h, a, b, c, d, e, f, g
	}
	return []Register{a, b, c, d, e, f, g, h}
}

// genSHANI emits the SHA-NI kernel: two interleaved streams per step and a
// single stream for an odd last message, after Core's sha256_x86_shani.cpp.
func genSHANI(kw [64]uint32) {
	// K, the padding block's K+W, and transform 3's K+W for its constant
	// words W[8..15] (0x80000000, zeros, 256), all as 16-byte quads.
	quads := table("shani_k", k[:], 1)
	padq := table("shani_padkw", kw[:], 1)
	t3w := []uint32{0x80000000, 0, 0, 0, 0, 0, 0, 256}
	var t3kw []uint32
	for i, v := range t3w {
		t3kw = append(t3kw, k[8+i]+v)
	}
	t3q := table("shani_t3kw", t3kw, 1)
	t3m := table("shani_t3w", t3w, 1)
	// The IV in the ABEF/CDGH order SHA256RNDS2 uses.
	init := table("shani_init", []uint32{iv[5], iv[4], iv[1], iv[0], iv[7], iv[6], iv[3], iv[2]}, 1)
	mask := bswapMask("shani_bswap", 16)

	TEXT("sha256d64SHANI", NOSPLIT, "func(out, in *byte, n int)")
	Doc("sha256d64SHANI sets out[32i:32i+32] = SHA-256d(in[64i:64i+64]) for i < n, two interleaved messages per step and one for an odd last message; n must be positive. out may equal in.")
	out := Mem{Base: Load(Param("out"), RDI)}
	in := Mem{Base: Load(Param("in"), RSI)}
	n := Load(Param("n"), RCX)
	streams := []shaStream{
		{s0: X1, s1: X2, m: [4]Register{X3, X4, X5, X6}, off: 0},
		{s0: X7, s1: X8, m: [4]Register{X9, X10, X11, X12}, off: 1},
	}
	// Legacy-SSE memory operands must be 16-byte aligned, which Go's DATA
	// symbols do not promise: constants always go through MOVOU.
	g := &shaGen{msg: X0, tmp: X13, mask: X14, cst: X15,
		k: quads, pad: padq, t3: t3q, t3w: t3m, init: init, in: in, out: out}
	MOVOU(mask, g.mask)

	CMPQ(n, U8(2))
	JB(LabelRef("shani_one"))
	Label("shani_loop")
	g.body(streams)
	ADDQ(U8(128), in.Base)
	ADDQ(U8(64), out.Base)
	SUBQ(U8(2), n)
	CMPQ(n, U8(2))
	JAE(LabelRef("shani_loop"))
	TESTQ(n, n)
	JZ(LabelRef("shani_done"))
	Label("shani_one")
	g.body(streams[:1])
	Label("shani_done")
	RET()
}

type shaStream struct {
	s0, s1 Register // ABEF, CDGH
	m      [4]Register
	off    int // message index within the step
}

type shaGen struct {
	msg, tmp, mask, cst   Register
	k, pad, t3, t3w, init Mem
	in, out               Mem
}

// quad runs four rounds; msg already holds W+K for them.
func (g *shaGen) quad(s *shaStream) {
	SHA256RNDS2(g.msg, s.s0, s.s1)
	PSHUFD(U8(0x0e), g.msg, g.msg)
	SHA256RNDS2(g.msg, s.s1, s.s0)
}

// msgC is Core's ShiftMessageC: m2 = msg2(m2 + alignr(m1, m0, 4), m1).
func (g *shaGen) msgC(m0, m1, m2 Register) {
	MOVOU(m1, g.tmp)
	PALIGNR(U8(4), m0, g.tmp)
	PADDD(g.tmp, m2)
	SHA256MSG2(m1, m2)
}

// unshuffle turns ABEF/CDGH into state words 0..3 / 4..7.
func (g *shaGen) unshuffle(s *shaStream) {
	PSHUFD(U8(0x1B), s.s0, g.tmp)
	PSHUFD(U8(0xB1), s.s1, s.s1)
	MOVOU(g.tmp, s.s0)
	PBLENDW(U8(0xF0), s.s1, s.s0)
	PALIGNR(U8(8), g.tmp, s.s1)
}

func (g *shaGen) addInit(s *shaStream) {
	MOVOU(g.init, g.cst)
	PADDD(g.cst, s.s0)
	MOVOU(g.init.Offset(16), g.cst)
	PADDD(g.cst, s.s1)
}

// body emits the three transforms for the given streams, interleaved. All
// input is loaded before any output is stored, so out may equal in.
func (g *shaGen) body(ss []shaStream) {
	each := func(f func(s *shaStream)) {
		for i := range ss {
			f(&ss[i])
		}
	}
	Comment("Transform 1.")
	each(func(s *shaStream) {
		MOVOU(g.init, s.s0)
		MOVOU(g.init.Offset(16), s.s1)
		for i := 0; i < 4; i++ {
			MOVOU(g.in.Offset(64*s.off+16*i), s.m[i])
			PSHUFB(g.mask, s.m[i])
		}
	})
	g.messageRounds(ss, false)
	each(g.addInit)
	Comment("Transform 2: constant padding block.")
	each(func(s *shaStream) {
		MOVOU(s.s0, s.m[0])
		MOVOU(s.s1, s.m[1])
	})
	for q := 0; q < 16; q++ {
		each(func(s *shaStream) {
			MOVOU(g.pad.Offset(16*q), g.msg)
			g.quad(s)
		})
	}
	each(func(s *shaStream) {
		PADDD(s.m[0], s.s0)
		PADDD(s.m[1], s.s1)
		g.unshuffle(s)
	})
	Comment("Transform 3: the digest plus constant padding words.")
	each(func(s *shaStream) {
		MOVOU(s.s0, s.m[0])
		MOVOU(s.s1, s.m[1])
		MOVOU(g.t3w, s.m[2])
		MOVOU(g.t3w.Offset(16), s.m[3])
		MOVOU(g.init, s.s0)
		MOVOU(g.init.Offset(16), s.s1)
	})
	g.messageRounds(ss, true)
	each(func(s *shaStream) {
		g.addInit(s)
		g.unshuffle(s)
		PSHUFB(g.mask, s.s0)
		PSHUFB(g.mask, s.s1)
		MOVOU(s.s0, g.out.Offset(32*s.off))
		MOVOU(s.s1, g.out.Offset(32*s.off+16))
	})
}

// messageRounds emits the 64 rounds of a transform whose message words are in
// m[0..3] of each stream, with the schedule of Core's ShiftMessageA/B/C. For
// transform 3 (t3), quads 2 and 3 use precomputed K+W of the constant words.
func (g *shaGen) messageRounds(ss []shaStream, t3 bool) {
	for q := 0; q < 16; q++ {
		for i := range ss {
			s := &ss[i]
			m := s.m
			if t3 && (q == 2 || q == 3) {
				MOVOU(g.t3.Offset(16*(q-2)), g.msg)
			} else {
				MOVOU(g.k.Offset(16*q), g.msg)
				PADDD(m[q%4], g.msg)
			}
			g.quad(s)
			m0, m1, m2 := m[(q+3)%4], m[q%4], m[(q+1)%4]
			switch {
			case q == 1 || q == 2:
				SHA256MSG1(m1, m0) // ShiftMessageA(m[q-1], m[q])
			case q >= 3 && q <= 12:
				g.msgC(m0, m1, m2)
				SHA256MSG1(m1, m0)
			case q == 13 || q == 14:
				g.msgC(m0, m1, m2)
			}
		}
	}
}

// genAVX512 emits the 16-lane kernel. With 32 ZMM registers the 16-word
// message schedule window lives in Z16..Z31 and is expanded inside the
// rounds, so the kernel touches no stack memory.
func genAVX512(o *vecOps, k1, kw1, t3kw1, t3c, iv1, mask Mem) {
	TEXT(o.name, NOSPLIT, "func(out, in *byte, n int)")
	Doc(o.doc)
	out := Mem{Base: Load(Param("out"), RDI)}
	in := Mem{Base: Load(Param("in"), RSI)}
	n := Load(Param("n"), RCX)
	r := o.regs
	wr := r[16:32]
	st0 := r[0:8]
	sa, sb, sc := r[13], r[14], r[15] // schedule temporaries
	addW := func(t int, h Register) {
		VPADDD_BCST(k1.Offset(4*t), h, h)
		VPADDD(wr[t%16], h, h)
	}
	var known map[int]uint32 // nil in transform 1, t3Known in transform 3
	sched := avx512Sched(o, wr, sa, sb, sc, t3c, &known)

	Label(o.name + "_loop")
	Comment("Transform 1: load, byte-swap and transpose the messages into W[0..15].")
	for i := 0; i < 16; i++ {
		VMOVDQU32(in.Offset(64*i), r[i])
		VPSHUFB(mask, r[i], r[i])
	}
	avx512TransposeW(r, wr)
	st := append([]Register(nil), st0...)
	for i, x := range st {
		VPBROADCASTD(iv1.Offset(4*i), x)
	}
	st = roundsPre(o, st, sched, addW)
	saved := wr[0:8]
	for i, x := range st {
		VPADDD_BCST(iv1.Offset(4*i), x, x)
		VMOVDQA32(x, saved[i])
	}
	Comment("Transform 2: the constant padding block (precomputed K+W).")
	st = rounds(o, st, func(t int, h Register) { VPADDD_BCST(kw1.Offset(4*t), h, h) })
	Comment("Transform 3: hash the 32-byte digest; W[8..15] are constants.")
	for i, x := range st {
		VPADDD(x, saved[i], wr[i])
	}
	avx512Transform3(o, st0, sched, &known, addW, iv1, t3kw1, out)

	ADDQ(U32(64*o.lanes), in.Base)
	ADDQ(U32(32*o.lanes), out.Base)
	SUBQ(U32(o.lanes), n)
	JNZ(LabelRef(o.name + "_loop"))
	VZEROUPPER()
	RET()
}

// avx512Sched returns the AVX-512 kernels' in-round message schedule step:
// W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16] into W[t-16]'s slot of
// the window wr, folding the words *known says are constants (see
// termsFor; t3c holds transform 3's folded constants).
func avx512Sched(o *vecOps, wr []Register, sa, sb, sc Register, t3c Mem, known *map[int]uint32) func(int) {
	return func(t int) {
		if t < 16 {
			return
		}
		tm := termsFor(t, *known)
		dst := wr[t%16]
		have := tm.b // dst already holds W[t-16]
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
		if !have {
			panic(fmt.Sprintf("schedule step %d has no variable term", t))
		}
		if tm.a {
			VPADDD(wr[(t-7)%16], dst, dst)
		}
		if tm.c != 0 {
			VPADDD_BCST(t3c.Offset(4*(t-16)), dst, dst)
		}
	}
}

// avx512TransposeW transposes 16 byte-swapped message blocks, block i in
// r[i], into the schedule window: wr[w] lane L = word w of block L. r is
// clobbered.
func avx512TransposeW(r, wr []Register) {
	for p := 0; p < 8; p++ {
		VPUNPCKLDQ(r[2*p+1], r[2*p], wr[2*p])
		VPUNPCKHDQ(r[2*p+1], r[2*p], wr[2*p+1])
	}
	// u[g][kk] (register r[4g+kk]) lane L = word 4L+kk of messages 4g..4g+3.
	t := wr
	for g := 0; g < 4; g++ {
		VPUNPCKLQDQ(t[4*g+2], t[4*g], r[4*g+0])
		VPUNPCKHQDQ(t[4*g+2], t[4*g], r[4*g+1])
		VPUNPCKLQDQ(t[4*g+3], t[4*g+1], r[4*g+2])
		VPUNPCKHQDQ(t[4*g+3], t[4*g+1], r[4*g+3])
	}
	for kk := 0; kk < 4; kk++ {
		// Temporaries: for kk = 0 window slots written later; afterwards the
		// u registers of the previous kk.
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
}

// avx512Transform3 hashes the 32-byte digests whose words are in W[0..7]
// (W[8..15] are the constant padding, *known switches the schedule to fold
// them), adds the IV and stores the byte-swapped, transposed results at out.
func avx512Transform3(o *vecOps, st0 []Register, sched func(int), known *map[int]uint32, addW func(int, Register), iv1, t3kw1, out Mem) {
	*known = t3Known
	st := append([]Register(nil), st0...)
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
}
