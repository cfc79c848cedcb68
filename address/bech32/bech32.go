// Package bech32 is BIP173's bech32 and BIP350's bech32m encoding (Core's
// src/bech32.cpp): strings of at most 90 characters, one case, a
// human-readable part, the separator '1' and 5-bit data with a 6-character
// checksum.
package bech32

import (
	"errors"
	"strings"
)

// Encoding is the checksum variant.
type Encoding uint8

// The two checksum variants (BIP173, BIP350).
const (
	Invalid Encoding = iota
	Bech32
	Bech32m
)

func (e Encoding) String() string {
	switch e {
	case Bech32:
		return "bech32"
	case Bech32m:
		return "bech32m"
	}
	return "invalid"
}

// Errors returned by Decode. ErrChecksum is the only one a well-formed
// string can give.
var (
	ErrMixedCase  = errors.New("bech32: invalid character or mixed case")
	ErrTooLong    = errors.New("bech32: string too long")
	ErrNoSep      = errors.New("bech32: missing separator")
	ErrSepPos     = errors.New("bech32: invalid separator position")
	ErrInvalidChr = errors.New("bech32: invalid base 32 character")
	ErrChecksum   = errors.New("bech32: invalid checksum")
)

// MaxLength is BIP173's limit on the whole string.
const MaxLength = 90

const charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

var charRev = func() (r [256]int8) {
	for i := range r {
		r[i] = -1
	}
	for i := 0; i < len(charset); i++ {
		c := charset[i]
		r[c] = int8(i)
		if c >= 'a' && c <= 'z' {
			r[c-'a'+'A'] = int8(i)
		}
	}
	return r
}()

// constant is the value the checksum polymod must equal.
func constant(e Encoding) uint32 {
	if e == Bech32m {
		return 0x2bc830a3
	}
	return 1
}

func polymod(v uint32, d byte) uint32 {
	c0 := v >> 25
	v = (v&0x1ffffff)<<5 ^ uint32(d)
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	for i, g := range gen {
		if c0>>i&1 != 0 {
			v ^= g
		}
	}
	return v
}

// hrpPolymod feeds the expanded human-readable part.
func hrpPolymod(hrp string) uint32 {
	c := uint32(1)
	for i := 0; i < len(hrp); i++ {
		c = polymod(c, hrp[i]>>5)
	}
	c = polymod(c, 0)
	for i := 0; i < len(hrp); i++ {
		c = polymod(c, hrp[i]&31)
	}
	return c
}

// Encode returns hrp (lower-cased), '1', the data symbols (values 0..31) and
// the checksum of encoding e. It returns "" for symbols above 31, an
// uppercase or empty hrp, or a result longer than MaxLength.
func Encode(e Encoding, hrp string, data []byte) string {
	if e != Bech32 && e != Bech32m || hrp == "" || len(hrp)+1+len(data)+6 > MaxLength {
		return ""
	}
	for i := 0; i < len(hrp); i++ {
		if hrp[i] < 33 || hrp[i] > 126 || hrp[i] >= 'A' && hrp[i] <= 'Z' {
			return ""
		}
	}
	c := hrpPolymod(hrp)
	var sb strings.Builder
	sb.Grow(len(hrp) + 1 + len(data) + 6)
	sb.WriteString(hrp)
	sb.WriteByte('1')
	for _, d := range data {
		if d > 31 {
			return ""
		}
		c = polymod(c, d)
		sb.WriteByte(charset[d])
	}
	for range 6 {
		c = polymod(c, 0)
	}
	c ^= constant(e)
	for i := range 6 {
		sb.WriteByte(charset[c>>(5*(5-i))&31])
	}
	return sb.String()
}

// Decode parses s, accepting either checksum variant: it returns the
// lower-cased human-readable part, the data symbols without the checksum
// and the variant whose checksum matched.
func Decode(s string) (hrp string, data []byte, e Encoding, err error) {
	if len(s) > MaxLength {
		return "", nil, Invalid, ErrTooLong
	}
	lower, upper := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 33 || c > 126 {
			return "", nil, Invalid, ErrMixedCase
		}
		lower = lower || c >= 'a' && c <= 'z'
		upper = upper || c >= 'A' && c <= 'Z'
	}
	if lower && upper {
		return "", nil, Invalid, ErrMixedCase
	}
	sep := strings.LastIndexByte(s, '1')
	if sep < 0 {
		return "", nil, Invalid, ErrNoSep
	}
	if sep == 0 || sep+7 > len(s) {
		return "", nil, Invalid, ErrSepPos
	}
	hrp = strings.ToLower(s[:sep])
	vals := make([]byte, len(s)-sep-1)
	for i := range vals {
		v := charRev[s[sep+1+i]]
		if v < 0 {
			return "", nil, Invalid, ErrInvalidChr
		}
		vals[i] = byte(v)
	}
	c := hrpPolymod(hrp)
	for _, v := range vals {
		c = polymod(c, v)
	}
	switch c {
	case constant(Bech32):
		e = Bech32
	case constant(Bech32m):
		e = Bech32m
	default:
		return "", nil, Invalid, ErrChecksum
	}
	return hrp, vals[:len(vals)-6], e, nil
}

// ConvertBits regroups data from fromBits-wide to toBits-wide values
// (Core's ConvertBits). With pad the last group is zero-padded; without it,
// leftover bits must be fewer than fromBits and zero, or ok is false.
func ConvertBits(data []byte, fromBits, toBits uint, pad bool) (out []byte, ok bool) {
	acc, bits := uint32(0), uint(0)
	maxv := uint32(1)<<toBits - 1
	for _, v := range data {
		if uint32(v)>>fromBits != 0 {
			return nil, false
		}
		acc = acc<<fromBits | uint32(v)
		bits += fromBits
		for bits >= toBits {
			bits -= toBits
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if pad {
		if bits > 0 {
			out = append(out, byte(acc<<(toBits-bits)&maxv))
		}
	} else if bits >= fromBits || acc<<(toBits-bits)&maxv != 0 {
		return nil, false
	}
	return out, true
}
