package descriptor

import "strings"

// The descriptor checksum (Core's DescriptorChecksum in
// src/script/descriptor.cpp, doc/descriptors.md): a BCH code over GF(32)
// of the descriptor's characters, 8 symbols written in the bech32 charset.

const (
	inputCharset    = "0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#\"\\ "
	checksumCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
)

// charPos maps a byte to its position in inputCharset, -1 if absent.
var charPos = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(inputCharset); i++ {
		t[inputCharset[i]] = int8(i)
	}
	return t
}()

func polyMod(c uint64, val int) uint64 {
	c0 := c >> 35
	c = (c&0x7ffffffff)<<5 ^ uint64(val)
	if c0&1 != 0 {
		c ^= 0xf5dee51989
	}
	if c0&2 != 0 {
		c ^= 0xa9fdca3312
	}
	if c0&4 != 0 {
		c ^= 0x1bab10e32d
	}
	if c0&8 != 0 {
		c ^= 0x3706b1677a
	}
	if c0&16 != 0 {
		c ^= 0x644d626ffd
	}
	return c
}

// Checksum returns the 8-character checksum of desc (without '#'), or
// false if desc holds a character the checksum cannot encode.
func Checksum(desc string) (string, bool) {
	c := uint64(1)
	cls, clscount := 0, 0
	for i := 0; i < len(desc); i++ {
		pos := int(charPos[desc[i]])
		if pos < 0 {
			return "", false
		}
		c = polyMod(c, pos&31)
		cls = cls*3 + pos>>5
		if clscount++; clscount == 3 {
			c = polyMod(c, cls)
			cls, clscount = 0, 0
		}
	}
	if clscount > 0 {
		c = polyMod(c, cls)
	}
	for range 8 {
		c = polyMod(c, 0)
	}
	c ^= 1
	var sum [8]byte
	for j := range sum {
		sum[j] = checksumCharset[c>>(5*(7-j))&31]
	}
	return string(sum[:]), true
}

// AddChecksum is Core's AddChecksum: desc + "#" + Checksum(desc). desc must
// consist of checksum characters (every descriptor this package writes does).
func AddChecksum(desc string) string {
	sum, _ := Checksum(desc)
	return desc + "#" + sum
}

// splitChecksum is Core's CheckChecksum with require_checksum false: it
// returns desc without its "#checksum" after verifying the checksum if
// there is one. Error texts are Core's.
func splitChecksum(s string) (string, error) {
	parts := strings.Split(s, "#")
	if len(parts) > 2 {
		return "", parseErrorf("Multiple '#' symbols")
	}
	if len(parts) == 2 && len(parts[1]) != 8 {
		return "", parseErrorf("Expected 8 character checksum, not %d characters", len(parts[1]))
	}
	sum, ok := Checksum(parts[0])
	if !ok {
		return "", parseErrorf("Invalid characters in payload")
	}
	if len(parts) == 2 && parts[1] != sum {
		return "", checksumErrorf("Provided checksum '%s' does not match computed checksum '%s'", parts[1], sum)
	}
	return parts[0], nil
}
