package mainnetgen

import (
	"crypto/sha256"
	"math/big"

	"golang.org/x/crypto/chacha20"
)

// muhashBytes is the size of a MuHash3072 number.
const muhashBytes = 384

// muhashPrime is 2^3072 − 1103717, MuHash3072's modulus.
var muhashPrime = func() *big.Int {
	p := new(big.Int).Lsh(big.NewInt(1), 3072)
	return p.Sub(p, big.NewInt(1103717))
}()

var (
	muhashC    = big.NewInt(1103717)
	muhashMask = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 3072), big.NewInt(1))
)

// MuHash is Core's MuHash3072 (src/crypto/muhash.cpp) over math/big: a set
// of byte strings as the product, modulo 2^3072 − 1103717, of each one's
// ChaCha20 keystream (key SHA-256 of the string, nonce and counter zero) read
// as a little-endian 3072-bit number; Finalize divides numerator by
// denominator and hashes the little-endian result with SHA-256. The zero
// value is not ready: use NewMuHash.
type MuHash struct {
	num, den *big.Int
	// Scratch space, reused by Insert.
	t, hi, lo, x *big.Int
	ks, be       [muhashBytes]byte
}

// NewMuHash returns the MuHash of the empty set.
func NewMuHash() *MuHash {
	return &MuHash{num: big.NewInt(1), den: big.NewInt(1), t: new(big.Int), hi: new(big.Int), lo: new(big.Int), x: new(big.Int)}
}

// toNum sets m.x to ToNum3072(data).
func (m *MuHash) toNum(data []byte) *big.Int {
	key := sha256.Sum256(data)
	var nonce [12]byte
	c, err := chacha20.NewUnauthenticatedCipher(key[:], nonce[:])
	if err != nil {
		panic(err) // fixed sizes: cannot happen
	}
	clear(m.ks[:])
	c.XORKeyStream(m.ks[:], m.ks[:])
	m.x.SetBytes(reverse(m.be[:], m.ks[:]))
	return m.x
}

// reverse writes src reversed into dst (same length) and returns dst.
func reverse(dst, src []byte) []byte {
	for i, b := range src {
		dst[len(src)-1-i] = b
	}
	return dst
}

// mulMod sets acc to acc·x mod p, folding with 2^3072 ≡ 1103717.
func (m *MuHash) mulMod(acc, x *big.Int) {
	m.t.Mul(acc, x)
	for m.t.BitLen() > 3072 {
		m.hi.Rsh(m.t, 3072)
		m.lo.And(m.t, muhashMask)
		m.hi.Mul(m.hi, muhashC)
		m.t.Add(m.lo, m.hi)
	}
	if m.t.Cmp(muhashPrime) >= 0 {
		m.t.Sub(m.t, muhashPrime)
	}
	acc.Set(m.t)
}

// Insert adds data to the set.
func (m *MuHash) Insert(data []byte) { m.mulMod(m.num, m.toNum(data)) }

// Remove takes data out of the set.
func (m *MuHash) Remove(data []byte) { m.mulMod(m.den, m.toNum(data)) }

// Combine multiplies o's numerator and denominator into m's (the union of
// two disjoint sets).
func (m *MuHash) Combine(o *MuHash) {
	m.mulMod(m.num, o.num)
	m.mulMod(m.den, o.den)
}

// SetState sets the numerator and denominator from Core's serialization of
// a MuHash3072 (two little-endian 3072-bit numbers), unreduced as Core keeps
// them.
func (m *MuHash) SetState(b []byte) {
	var be [muhashBytes]byte
	m.num.SetBytes(reverse(be[:], b[:muhashBytes]))
	m.den.SetBytes(reverse(be[:], b[muhashBytes:2*muhashBytes]))
}

// Finalize returns Core's MuHash3072::Finalize output in raw byte order:
// SHA-256 of the little-endian numerator/denominator mod p. m is unchanged.
func (m *MuHash) Finalize() [32]byte {
	num := new(big.Int).Mod(m.num, muhashPrime)
	den := new(big.Int).Mod(m.den, muhashPrime)
	inv := new(big.Int).ModInverse(den, muhashPrime)
	num.Mul(num, inv).Mod(num, muhashPrime)
	var be, le [muhashBytes]byte
	num.FillBytes(be[:])
	return sha256.Sum256(reverse(le[:], be[:]))
}
