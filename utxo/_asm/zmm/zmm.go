// Package zmm holds code generators shared by the AVX-512 kernels of utxo.
package zmm

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Transpose16 emits a 16×16 transpose of 32-bit words: it returns
// registers r with r[i] lane j = x[j] lane i, all of them among x's, using
// the 16 registers t as scratch; x and t are both clobbered. 64 shuffles:
// VPUNPCK[LH]DQ, VPUNPCK[LH]QDQ, then two rounds of VSHUFI32X4.
func Transpose16(x, t []VecPhysical) []VecPhysical {
	Comment("Transpose: 32-bit, then 64-bit interleaves within 128-bit lanes.")
	for j := 0; j < 8; j++ {
		VPUNPCKLDQ(x[2*j+1], x[2*j], t[2*j])
		VPUNPCKHDQ(x[2*j+1], x[2*j], t[2*j+1])
	}
	// u[4k+c], 128-bit lane l: x[4k..4k+3] at lane 4l+c.
	u := x
	for k := 0; k < 4; k++ {
		a, b, c, d := t[4*k], t[4*k+1], t[4*k+2], t[4*k+3]
		VPUNPCKLQDQ(c, a, u[4*k])
		VPUNPCKHQDQ(c, a, u[4*k+1])
		VPUNPCKLQDQ(d, b, u[4*k+2])
		VPUNPCKHQDQ(d, b, u[4*k+3])
	}
	Comment("Then a 4×4 transpose of 128-bit lanes for each offset c.")
	e := t
	for c := 0; c < 4; c++ {
		a, b, cc, d := u[c], u[4+c], u[8+c], u[12+c]
		VSHUFI32X4(U8(0x44), b, a, e[4*c])
		VSHUFI32X4(U8(0xee), b, a, e[4*c+1])
		VSHUFI32X4(U8(0x44), d, cc, e[4*c+2])
		VSHUFI32X4(U8(0xee), d, cc, e[4*c+3])
	}
	r := make([]VecPhysical, 16)
	f := x
	for c := 0; c < 4; c++ {
		e0, e1, e2, e3 := e[4*c], e[4*c+1], e[4*c+2], e[4*c+3]
		VSHUFI32X4(U8(0x88), e2, e0, f[4*c])
		VSHUFI32X4(U8(0xdd), e2, e0, f[4*c+1])
		VSHUFI32X4(U8(0x88), e3, e1, f[4*c+2])
		VSHUFI32X4(U8(0xdd), e3, e1, f[4*c+3])
		for l := 0; l < 4; l++ {
			r[4*l+c] = f[4*c+l]
		}
	}
	return r
}
