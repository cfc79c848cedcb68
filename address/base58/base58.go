// Package base58 is Bitcoin's base58 and base58check encoding (Core's
// src/base58.cpp), strict on input: no whitespace, no characters outside the
// alphabet.
package base58

import (
	"crypto/sha256"
	"errors"
)

// Errors returned by Decode and CheckDecode.
var (
	// ErrInvalidChar reports a character outside the base58 alphabet.
	ErrInvalidChar = errors.New("base58: invalid character")
	// ErrTooLong reports a string that decodes to more bytes than allowed.
	ErrTooLong = errors.New("base58: too long")
	// ErrChecksum reports a base58check string whose checksum does not match.
	ErrChecksum = errors.New("base58: bad checksum")
	// ErrShort reports a base58check string shorter than its 4-byte checksum.
	ErrShort = errors.New("base58: too short for a checksum")
)

const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var digit = func() (d [256]int8) {
	for i := range d {
		d[i] = -1
	}
	for i := 0; i < len(alphabet); i++ {
		d[alphabet[i]] = int8(i)
	}
	return d
}()

// Encode is Core's EncodeBase58.
func Encode(b []byte) string {
	zeroes := 0
	for zeroes < len(b) && b[zeroes] == 0 {
		zeroes++
	}
	b = b[zeroes:]
	size := len(b)*138/100 + 1 // log(256)/log(58), rounded up
	b58 := make([]byte, size)
	length := 0
	for _, c := range b {
		carry := int(c)
		i := 0
		for j := size - 1; (carry != 0 || i < length) && j >= 0; j-- {
			carry += 256 * int(b58[j])
			b58[j] = byte(carry % 58)
			carry /= 58
			i++
		}
		length = i
	}
	j := size - length
	for j < size && b58[j] == 0 {
		j++
	}
	out := make([]byte, zeroes, zeroes+size-j)
	for i := range out {
		out[i] = '1'
	}
	for ; j < size; j++ {
		out = append(out, alphabet[b58[j]])
	}
	return string(out)
}

// Decode is Core's DecodeBase58 without its whitespace tolerance: it fails
// with ErrInvalidChar on any character outside the alphabet and with
// ErrTooLong when the result would exceed maxLen bytes.
func Decode(s string, maxLen int) ([]byte, error) {
	zeroes := 0
	for zeroes < len(s) && s[zeroes] == '1' {
		zeroes++
		if zeroes > maxLen {
			return nil, ErrTooLong
		}
	}
	rest := s[zeroes:]
	size := len(rest)*733/1000 + 1 // log(58)/log(256), rounded up
	b256 := make([]byte, size)
	length := 0
	for k := 0; k < len(rest); k++ {
		carry := int(digit[rest[k]])
		if carry < 0 {
			return nil, ErrInvalidChar
		}
		i := 0
		for j := size - 1; (carry != 0 || i < length) && j >= 0; j-- {
			carry += 58 * int(b256[j])
			b256[j] = byte(carry % 256)
			carry /= 256
			i++
		}
		length = i
		if length+zeroes > maxLen {
			return nil, ErrTooLong
		}
	}
	out := make([]byte, zeroes, zeroes+length)
	return append(out, b256[size-length:]...), nil
}

// checksum is the first four bytes of SHA-256d(b).
func checksum(b []byte) [4]byte {
	h := sha256.Sum256(b)
	h = sha256.Sum256(h[:])
	return [4]byte{h[0], h[1], h[2], h[3]}
}

// CheckEncode is Core's EncodeBase58Check: b followed by its checksum.
func CheckEncode(b []byte) string {
	c := checksum(b)
	return Encode(append(append(make([]byte, 0, len(b)+4), b...), c[:]...))
}

// CheckDecode is Core's DecodeBase58Check: the payload (at most maxLen
// bytes) without its checksum.
func CheckDecode(s string, maxLen int) ([]byte, error) {
	b, err := Decode(s, maxLen+4)
	if err != nil {
		return nil, err
	}
	if len(b) < 4 {
		return nil, ErrShort
	}
	payload := b[:len(b)-4]
	if c := checksum(payload); [4]byte(b[len(b)-4:]) != c {
		return nil, ErrChecksum
	}
	return payload, nil
}
