// Command mul3072 generates utxo/mul3072_amd64.s and its Go stub with avo:
// the full 6144-bit product of two 3072-bit numbers with AVX-512 IFMA
// (VPMADD52LUQ/VPMADD52HUQ), the multiplication inside MuHash3072.
//
// Run it through `go generate ./utxo/...` from the main module.
//
// Method, in radix 2^52:
//
//   - Both operands (48 little-endian uint64 words) are cut into 60 limbs of
//     52 bits: VPERMB gathers each limb's 8 bytes into a lane, VPSRLVQ drops
//     the 0 or 4 bits below it and a mask the 12 above. x's limbs go to the
//     frame, to be broadcast one at a time; y's are copied into the frame
//     shifted up by s = 0..7 lanes (b_s[lane] = y[lane−s]), 64-byte aligned.
//   - Column k of the product (the sum of every 52-bit half-product of
//     weight 2^52k) has the fixed home lane k%8 of register k/8: x[i] =
//     x[8q+s] adds lo52(x[i]·b_s) into L[q..] and hi52(x[i]·b_{s+1}) into
//     H[q..] (b_8 being b_0 one register up). So no accumulator is ever
//     shifted; 1002 IFMAs in all, against 960 for a shifted accumulator that
//     also needs 240–480 VALIGNQs on the same ports (measured slower:
//     bench/results/digests.md). Keeping the low and high halves in
//     separate registers (L in Z0..Z14, H in Z15..Z29) halves each
//     register's chain of dependent IFMAs.
//   - A column gets at most 120 addends below 2^52, so it stays below 2^59
//     and no carry is taken until the end.
//   - The 120 columns c_k = L+H are split as c_k = l_k + 2^52·h_k. X =
//     Σ l_k·2^52k and Y = Σ h_k·2^52(k+1) have non-overlapping 52-bit
//     fields, so each is a plain bit repacking into 64-bit words (VPERMB
//     again); both are at most x·y < 2^6144, and one 96-word ADC chain adds
//     them into t.
package main

import (
	"encoding/binary"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	words   = 48 // 64-bit words per operand
	limbs   = 60 // 52-bit limbs per operand: ceil(3072/52)
	vecs    = 8  // ZMM registers per operand (64 lanes)
	columns = 2 * limbs
	groups  = columns / 8 // ZMM registers of product columns
	// packed is the size in bytes of eight 52-bit fields.
	packed = 52
)

var zmm = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
	Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}

// table emits a read-only table of 64 bytes.
func table(name string, b []byte) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < len(b); i += 8 {
		DATA(i, U64(binary.LittleEndian.Uint64(b[i:])))
	}
	return m
}

// unpackIndex gathers the 8 bytes holding 52-bit limb k of a group (bit
// 52k = byte 52k/8, plus 0 or 4 bits) into lane k.
func unpackIndex() []byte {
	var t []byte
	for k := 0; k < 8; k++ {
		for b := 0; b < 8; b++ {
			t = append(t, byte(52*k/8+b))
		}
	}
	return t
}

// unpackShift is the bit offset of limb k within its first byte, per lane.
func unpackShift() []byte {
	t := make([]byte, 64)
	for k := 0; k < 8; k++ {
		t[8*k] = byte(52 * k % 8)
	}
	return t
}

// packIndex compacts four 13-byte lane pairs (bytes 0..12 of each 128-bit
// lane) into 52 consecutive bytes.
func packIndex() []byte {
	t := make([]byte, 64)
	for j := 0; j < packed; j++ {
		t[j] = byte(16*(j/13) + j%13)
	}
	return t
}

// kmask sets opmask k to v.
func kmask(k Register, v uint64) {
	r := GP64()
	MOVQ(U64(v), r)
	KMOVQ(r, k)
}

// aligned64 allocates size bytes of the frame at a 64-byte boundary, so
// that its vectors never straddle cache lines and their offsets fit EVEX's
// compressed 8-bit displacement.
func aligned64(size int) Mem {
	m := AllocLocal(size + 56)
	r := GP64()
	LEAQ(m.Offset(56), r)
	ANDQ(I32(-64), r)
	return Mem{Base: r}
}

// nvec is the number of vectors of y shifted up by s lanes that are not
// all zero.
func nvec(s int) int { return (limbs + s + 7) / 8 }

func main() {
	ConstraintExpr("amd64,!purego")
	unpackIdx := table("mul3072UnpackIdx", unpackIndex())
	unpackShf := table("mul3072UnpackShift", unpackShift())
	packIdx := table("mul3072PackIdx", packIndex())

	TEXT("mul3072IFMA", 0, "func(t *[96]uint64, x, y *[48]uint64)")
	Pragma("noescape")
	Doc("mul3072IFMA sets t = x·y (AVX-512F/BW/VBMI/IFMA).")

	xl := AllocLocal(8 * 64)              // x's 52-bit limbs
	ypk := AllocLocal(packed*groups + 12) // Y packed
	bs := aligned64(64 * 9 * 8)           // b_s vector g at 64(9s+g)
	bop := func(s, g int) Mem { return bs.Offset(64 * (9*s + g)) }

	t := Mem{Base: Load(Param("t"), RDI)}
	x := Mem{Base: Load(Param("x"), RSI)}
	y := Mem{Base: Load(Param("y"), RDX)}

	b := zmm[0:8]
	ones, m52, idx, shift, tmp, zero := Z24, Z25, Z26, Z27, Z28, Z29

	Comment("K1: the 20 bytes of the operands' last 52-byte group; K2: 52 bytes.")
	kmask(K1, 1<<(8*words-7*packed)-1)
	kmask(K2, 1<<packed-1)
	VPTERNLOGQ(U8(0xff), ones, ones, ones)
	VPSRLQ(U8(12), ones, m52)
	VMOVDQU64(unpackIdx, idx)
	VMOVDQU64(unpackShf, shift)

	// unpack sets dst to 52-bit limbs 8g..8g+7 of the operand at src.
	unpack := func(src Mem, g int, dst VecPhysical) {
		if g < vecs-1 {
			// 52g+64 ≤ 384: the whole vector is inside the operand.
			VPERMB(src.Offset(packed*g), idx, dst)
		} else {
			VMOVDQU8_Z(src.Offset(packed*g), K1, dst)
			VPERMB(dst, idx, dst)
		}
		VPSRLVQ(shift, dst, dst)
		VPANDQ(m52, dst, dst)
	}
	Comment("x's limbs to the frame, y's to Z0..Z7.")
	for g := 0; g < vecs; g++ {
		unpack(x, g, tmp)
		VMOVDQU64(tmp, xl.Offset(64*g))
		unpack(y, g, b[g])
	}

	Comment("b_s[lane] = y[lane-s] for s = 0..7.")
	VPXORQ(zero, zero, zero)
	for s := 0; s < 8; s++ {
		for g := 0; g < nvec(s); g++ {
			if s == 0 {
				VMOVDQU64(b[g], bop(s, g))
				continue
			}
			lo, hi := zero, zero
			if g > 0 {
				lo = b[g-1]
			}
			if g < vecs {
				hi = b[g]
			}
			VALIGNQ(U8(8-s), lo, hi, tmp)
			VMOVDQU64(tmp, bop(s, g))
		}
	}

	L, H := zmm[0:groups], zmm[groups:2*groups]
	for _, r := range zmm[:2*groups] {
		VPXORQ(r, r, r)
	}
	Comment("Column k of the product accumulates in lane k%8 of L[k/8] + H[k/8].")
	for i := 0; i < limbs; i++ {
		q, s := i/8, i%8
		xi := Z30
		if i%2 == 1 {
			xi = Z31
		}
		VPBROADCASTQ(xl.Offset(8*i), xi)
		for g := 0; g < nvec(s); g++ {
			VPMADD52LUQ(bop(s, g), xi, L[q+g])
		}
		sh, qh := s+1, q
		if sh == 8 {
			sh, qh = 0, q+1
		}
		for g := 0; g < nvec(sh); g++ {
			VPMADD52HUQ(bop(sh, g), xi, H[qh+g])
		}
	}
	for g := range L {
		VPADDQ(H[g], L[g], L[g])
	}

	Comment("X = the columns' low 52 bits to t, Y = the rest, one column up, to the frame.")
	tr := H // free once added into L
	ones, m52 = tr[0], tr[1]
	VPTERNLOGQ(U8(0xff), ones, ones, ones)
	VPSRLQ(U8(12), ones, m52)
	packIdxR, odd := tr[2], K3
	VMOVDQU64(packIdx, packIdxR)
	kmask(odd, 0xaa)
	// pack stores the eight 52-bit fields of v as 52 consecutive bytes.
	pack := func(v VecPhysical, dst Mem, k Register) {
		sl, sr := tr[3], tr[4]
		// Per lane pair: low word v0 | v1<<52, high word v1>>12.
		VPSLLQ(U8(52), v, sl)
		VPSRLQ(U8(12), v, sr)
		VPSRLDQ(U8(8), sl, sl)
		VPORQ(v, sl, sl)
		VPBLENDMQ(sr, sl, odd, sl)
		VPERMB(sl, packIdxR, sl)
		VMOVDQU8(sl, k, dst)
	}
	hPrev, hCur, l, hs := tr[5], tr[6], tr[7], tr[8]
	VPXORQ(hPrev, hPrev, hPrev)
	for g := 0; g < groups; g++ {
		c := L[g]
		VPANDQ(m52, c, l)
		VPSRLQ(U8(52), c, hCur)
		VALIGNQ(U8(7), hPrev, hCur, hs)
		kx := K2
		if g == groups-1 {
			// Only 40 of the last 52 bytes are below 2^6144, where X
			// ends; Y's last field (column 120) is zero for the same
			// reason and is not stored.
			kx = K4
			kmask(kx, 1<<(8*2*words-packed*g)-1)
		}
		pack(l, t.Offset(packed*g), kx)
		pack(hs, ypk.Offset(packed*g), K2)
		hPrev, hCur = hCur, hPrev
	}

	Comment("t = X + Y.")
	r := GP64()
	for w := 0; w < 2*words; w++ {
		MOVQ(t.Offset(8*w), r)
		if w == 0 {
			ADDQ(ypk.Offset(8*w), r)
		} else {
			ADCQ(ypk.Offset(8*w), r)
		}
		MOVQ(r, t.Offset(8*w))
	}
	VZEROUPPER()
	RET()

	reduceStep()
	Generate()
}

// muPrimeDiff is c in MuHash's prime p = 2^3072 − c.
const muPrimeDiff = 1103717

// reduceStep emits reduce3072ADX: z + 2^3072·carry = t_lo + c·t_hi, the
// main loop of the Go reduce with two carry chains, ADCX for t_lo + lo(c·t_hi[i])
// and ADOX for the hi(c·t_hi[i−1]) of the word before.
func reduceStep() {
	TEXT("reduce3072ADX", NOSPLIT, "func(z *[48]uint64, t *[96]uint64) (carry uint64)")
	Pragma("noescape")
	Doc("reduce3072ADX sets z + 2^3072·carry = (t mod 2^3072) + c·(t div 2^3072), for",
		"c = 1103717: the reduction modulo 2^3072 − c before its last fold (BMI2, ADX).")
	z := Mem{Base: Load(Param("z"), RDI)}
	t := Mem{Base: Load(Param("t"), RSI)}
	MOVQ(U32(muPrimeDiff), RDX)
	XORQ(R11, R11) // zero; clears CF and OF
	hiPrev, hiCur := R8, R9
	for i := 0; i < words; i++ {
		MULXQ(t.Offset(8*(words+i)), R10, hiCur)
		MOVQ(t.Offset(8*i), RAX)
		ADCXQ(R10, RAX)
		if i > 0 {
			ADOXQ(hiPrev, RAX)
		}
		MOVQ(RAX, z.Offset(8*i))
		hiPrev, hiCur = hiCur, hiPrev
	}
	Comment("hi(c·t[95]) < c, so adding both carries cannot overflow.")
	ADCXQ(R11, hiPrev)
	ADOXQ(R11, hiPrev)
	Store(hiPrev, ReturnIndex(0))
	RET()
}
