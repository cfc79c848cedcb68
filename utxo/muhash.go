package utxo

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/bits"

	"golang.org/x/crypto/chacha20"

	"utxod/wire"
)

// MuHash3072 is Bitcoin Core's rolling multiset hash (crypto/muhash.h) over
// the group of integers modulo the prime p = 2^3072 − 1103717.
//
// Each element is mapped to a number by SHA-256 of its bytes, used as a
// ChaCha20 key (96-bit nonce 0, counter 0), whose first 384 keystream bytes are
// read little-endian. The state is a fraction: Insert multiplies the
// numerator, Remove multiplies the denominator, so both are one modular
// multiplication and the single modular inversion is deferred to Finalize. The result therefore does
// not depend on the order of operations, and removing an element that was
// inserted cancels it exactly.
//
// The zero value is the empty set and ready to use. A MuHash3072 is a plain
// value (768 bytes of state plus a flag); copying it copies the state. It is
// not safe for concurrent mutation.
type MuHash3072 struct {
	num, den num3072
	// init is false for the zero value, which stands for the empty set
	// (num = den = 1); every mutator materialises that state first.
	init bool
}

// MuHashStateSize is the length of MuHash3072.MarshalBinary's output.
const MuHashStateSize = 2 * num3072Bytes

// ErrMuHashState reports a serialized MuHash3072 state of the wrong length.
var ErrMuHashState = errors.New("utxo: bad muhash state")

const (
	num3072Limbs = 48
	num3072Bytes = 384
	// muPrimeDiff is c in p = 2^3072 − c (Core's MAX_PRIME_DIFF).
	muPrimeDiff = 1103717
)

// num3072 is a 3072-bit number as 48 little-endian 64-bit limbs. Values
// produced by mulMod are fully reduced (< p); inputs may be any value below
// 2^3072.
type num3072 [num3072Limbs]uint64

func (a *num3072) setOne() {
	*a = num3072{}
	a[0] = 1
}

// isOverflow reports a ≥ p (Core's Num3072::IsOverflow).
func (a *num3072) isOverflow() bool {
	if a[0] < 1<<64-muPrimeDiff {
		return false
	}
	for i := 1; i < num3072Limbs; i++ {
		if a[i] != ^uint64(0) {
			return false
		}
	}
	return true
}

// fullReduce subtracts p from a, assuming p ≤ a < 2^3072: adding c and
// dropping the 2^3072 carry is the same as subtracting p.
func (a *num3072) fullReduce() {
	var c uint64
	a[0], c = bits.Add64(a[0], muPrimeDiff, 0)
	for i := 1; i < num3072Limbs; i++ {
		a[i], c = bits.Add64(a[i], 0, c)
	}
}

// mulMod sets z = x·y mod p. x and y may be any values below 2^3072; z may
// alias either.
func (z *num3072) mulMod(x, y *num3072) {
	switch mulSelected {
	case mulIFMA:
		var t [2 * num3072Limbs]uint64 // the kernels do not let t escape
		mulFullIFMA(&t, x, y)
		z.reduceADX(&t)
	case mulComba:
		var t [2 * num3072Limbs]uint64
		mulFullComba(&t, x, y)
		z.reduce(&t)
	default:
		s := getMulScratch()
		s.x, s.y = *x, *y // math/big's calls would move x and y to the heap
		mulFull(&s.t, &s.x, &s.y)
		z.reduce(&s.t)
		putMulScratch(s)
	}
}

// mulFullComba sets t = x·y by product scanning (Comba): column k
// accumulates every x[i]·y[k−i] in a three-limb accumulator, which beats
// row-wise schoolbook in pure Go (bench/results/digests.md). mulFull
// uses math/big instead where it can, and mulMod the IFMA kernel where the
// CPU has it (muhash_mul.go).
func mulFullComba(t *[2 * num3072Limbs]uint64, x, y *num3072) {
	var c0, c1, c2 uint64
	for k := 0; k < 2*num3072Limbs-1; k++ {
		lo, hi := 0, k
		if k >= num3072Limbs {
			lo, hi = k-(num3072Limbs-1), num3072Limbs-1
		}
		for i := lo; i <= hi; i++ {
			h, l := bits.Mul64(x[i], y[k-i])
			var c uint64
			c0, c = bits.Add64(c0, l, 0)
			c1, c = bits.Add64(c1, h, c)
			c2 += c
		}
		t[k] = c0
		c0, c1, c2 = c1, c2, 0
	}
	t[2*num3072Limbs-1] = c0
}

// reduce sets z = t mod p for a 6144-bit t, using 2^3072 ≡ c (mod p):
// t = lo + 2^3072·hi ≡ lo + c·hi.
func (z *num3072) reduce(t *[2 * num3072Limbs]uint64) {
	var carry uint64
	for i := 0; i < num3072Limbs; i++ {
		hi, lo := bits.Mul64(muPrimeDiff, t[num3072Limbs+i])
		var c uint64
		lo, c = bits.Add64(lo, t[i], 0)
		hi += c
		lo, c = bits.Add64(lo, carry, 0)
		hi += c
		z[i] = lo
		carry = hi
	}
	z.foldCarry(carry)
}

// foldCarry finishes reduce: z + 2^3072·carry (carry ≤ c+1) mod p, fully
// reduced.
func (z *num3072) foldCarry(carry uint64) {
	// carry ≤ c+1, so carry·c < 2^42: fold it in once more.
	var c uint64
	z[0], c = bits.Add64(z[0], carry*muPrimeDiff, 0)
	for i := 1; c != 0 && i < num3072Limbs; i++ {
		z[i], c = bits.Add64(z[i], 0, c)
	}
	if c != 0 {
		// Wrapped past 2^3072: the remaining value is tiny (< 2^42), and
		// the dropped 2^3072 is worth c.
		z[0] += muPrimeDiff
	}
	if z.isOverflow() {
		z.fullReduce()
	}
}

// setBytes reads 384 little-endian bytes.
func (a *num3072) setBytes(b []byte) {
	_ = b[num3072Bytes-1]
	for i := range a {
		a[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
}

// appendBytes appends a as 384 little-endian bytes.
func (a *num3072) appendBytes(dst []byte) []byte {
	for i := range a {
		dst = binary.LittleEndian.AppendUint64(dst, a[i])
	}
	return dst
}

// bigInt returns a as a math/big integer.
func (a *num3072) bigInt() *big.Int {
	var be [num3072Bytes]byte
	for i := range a {
		binary.BigEndian.PutUint64(be[num3072Bytes-8-8*i:], a[i])
	}
	return new(big.Int).SetBytes(be[:])
}

// setBig sets a from a non-negative integer below 2^3072.
func (a *num3072) setBig(x *big.Int) {
	var be [num3072Bytes]byte
	x.FillBytes(be[:])
	for i := range a {
		a[i] = binary.BigEndian.Uint64(be[num3072Bytes-8-8*i:])
	}
}

// muPrime is p = 2^3072 − c as a math/big integer, built per call (no
// package-level mutable state).
func muPrime() *big.Int {
	p := new(big.Int).Lsh(big.NewInt(1), 3072)
	return p.Sub(p, big.NewInt(muPrimeDiff))
}

// muHashElement maps data to its group element (Core's MuHash3072::ToNum3072).
func muHashElement(out *num3072, data []byte) {
	key := sha256.Sum256(data)
	if chachaAVX512 {
		muHashKeystreamAVX512(out, &key)
		return
	}
	muHashKeystreamGeneric(out, &key)
}

// muHashKeystreams sets out[i] to the keystream of keys[i] (the element
// without its SHA-256) for every key; out must be at least as long as keys.
func muHashKeystreams(out []num3072, keys [][32]byte) {
	if chachaAVX512 {
		muHashKeystreamsAVX512(out, keys)
		return
	}
	for i := range keys {
		muHashKeystreamGeneric(&out[i], &keys[i])
	}
}

// muBatch is how many elements the batch paths map per call: the SHA-256
// kernel's 16 lanes, two of the keystream kernel's groups of eight.
const muBatch = 16

// mulElements multiplies acc by the elements of the n byte strings at(0),
// ..., at(n-1), muBatch at a time.
func mulElements(acc *num3072, n int, at func(int) []byte) {
	var msgs [muBatch][]byte
	var keys [muBatch][32]byte
	var elems [muBatch]num3072
	for i := 0; i < n; i += muBatch {
		k := min(muBatch, n-i)
		for j := range k {
			msgs[j] = at(i + j)
		}
		sha256Many(keys[:k], msgs[:k])
		muHashKeystreams(elems[:k], keys[:k])
		for j := range k {
			acc.mulMod(acc, &elems[j])
		}
	}
}

// chachaAVX512 selects the AVX-512 keystream (chacha_amd64.s): set once,
// when the CPU has it and it passes a self-test against the generic code.
// Only tests change it, to run the batch paths on both.
var chachaAVX512 = hasChachaAVX512() && chachaSelfTest()

// chachaSelfTest compares the AVX-512 keystreams with x/crypto's for every
// batch size up to 9 (one element, partial groups, a full group and one
// more) and checks that the kernel writes nothing past the batch.
func chachaSelfTest() bool {
	var keys [10][32]byte
	var want [10]num3072
	for i := range keys {
		keys[i] = sha256.Sum256([]byte{byte(i)})
		muHashKeystreamGeneric(&want[i], &keys[i])
	}
	var one num3072
	muHashKeystreamAVX512(&one, &keys[0])
	if one != want[0] {
		return false
	}
	for n := 1; n < len(keys); n++ {
		var got [10]num3072
		muHashKeystreamsAVX512(got[:n], keys[:n])
		for i := range got {
			if (i < n && got[i] != want[i]) || (i >= n && got[i] != num3072{}) {
				return false
			}
		}
	}
	return true
}

// muHashKeystreamGeneric sets out to the first 384 keystream bytes of
// ChaCha20 with key (nonce 0, counter 0), read little-endian, with
// x/crypto's ChaCha20.
func muHashKeystreamGeneric(out *num3072, key *[32]byte) {
	var nonce [chacha20.NonceSize]byte
	var ks [num3072Bytes]byte
	c, err := chacha20.NewUnauthenticatedCipher(key[:], nonce[:])
	if err != nil {
		// Unreachable: key and nonce have the sizes chacha20 requires.
		panic("utxo: chacha20: " + err.Error())
	}
	c.XORKeyStream(ks[:], ks[:])
	out.setBytes(ks[:])
}

func (m *MuHash3072) ensureInit() {
	if !m.init {
		m.num.setOne()
		m.den.setOne()
		m.init = true
	}
}

// Insert adds the element data to the set (multiplies the numerator).
func (m *MuHash3072) Insert(data []byte) {
	m.ensureInit()
	var e num3072
	muHashElement(&e, data)
	m.num.mulMod(&m.num, &e)
}

// Remove removes the element data from the set (multiplies the denominator).
// Removing an element that was never inserted is not detected, as in Core.
func (m *MuHash3072) Remove(data []byte) {
	m.ensureInit()
	var e num3072
	muHashElement(&e, data)
	m.den.mulMod(&m.den, &e)
}

// InsertMany inserts every element of datas, as Insert on each would, with
// the SHA-256s and ChaCha20 keystreams of 16 elements computed per batch
// (the AVX-512 kernels where the CPU has them).
func (m *MuHash3072) InsertMany(datas [][]byte) {
	m.ensureInit()
	mulElements(&m.num, len(datas), func(i int) []byte { return datas[i] })
}

// RemoveMany removes every element of datas, as Remove on each would.
func (m *MuHash3072) RemoveMany(datas [][]byte) {
	m.ensureInit()
	mulElements(&m.den, len(datas), func(i int) []byte { return datas[i] })
}

// ErrMuHashEnds reports InsertConcat's ends that are not a non-decreasing
// run of offsets within the buffer.
var ErrMuHashEnds = errors.New("utxo: bad muhash element ends")

// InsertConcat inserts the elements packed end to end in buf: element i is
// buf[ends[i-1]:ends[i]], the first starting at 0 (a batch built with
// AppendTxOutSer, recording len(buf) after each coin). It fails with
// ErrMuHashEnds, leaving m unchanged, unless 0 ≤ ends[0] ≤ ends[1] ≤ … ≤
// len(buf).
func (m *MuHash3072) InsertConcat(buf []byte, ends []int) error {
	prev := 0
	for i, e := range ends {
		if e < prev || e > len(buf) {
			return fmt.Errorf("%w: ends[%d] = %d after %d, buffer of %d bytes", ErrMuHashEnds, i, e, prev, len(buf))
		}
		prev = e
	}
	m.ensureInit()
	mulElements(&m.num, len(ends), func(i int) []byte {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		return buf[start:ends[i]]
	})
	return nil
}

// coinBufSize is the stack buffer for one TxOutSer; larger scripts spill to
// the heap.
const coinBufSize = 256

// InsertCoin inserts the TxOutSer serialization of (op, c), as Core's
// ApplyCoinHash does. It does not allocate for scripts up to ~200 bytes.
func (m *MuHash3072) InsertCoin(op Outpoint, c Coin) {
	var buf [coinBufSize]byte
	m.Insert(AppendTxOutSer(buf[:0], op, c))
}

// RemoveCoin removes the TxOutSer serialization of (op, c), as Core's
// RemoveCoinHash does.
func (m *MuHash3072) RemoveCoin(op Outpoint, c Coin) {
	var buf [coinBufSize]byte
	m.Remove(AppendTxOutSer(buf[:0], op, c))
}

// Combine sets m to the hash of the union of m's and o's multisets (Core's
// operator*=).
func (m *MuHash3072) Combine(o *MuHash3072) {
	m.ensureInit()
	if !o.init {
		return
	}
	m.num.mulMod(&m.num, &o.num)
	m.den.mulMod(&m.den, &o.den)
}

// Divide sets m to the hash of m's multiset minus o's (Core's operator/=).
func (m *MuHash3072) Divide(o *MuHash3072) {
	m.ensureInit()
	if !o.init {
		return
	}
	// o may alias m: read both halves before writing.
	on, od := o.num, o.den
	m.num.mulMod(&m.num, &od)
	m.den.mulMod(&m.den, &on)
}

// Finalize returns SHA-256 of the 384-byte little-endian encoding of
// numerator/denominator mod p (Core's MuHash3072::Finalize), in raw byte
// order. Its String form (byte-reversed hex) is what gettxoutsetinfo prints
// as "muhash". Finalize does not modify m. A denominator ≡ 0 (mod p), which
// no sequence of Insert/Remove can reach but an unmarshalled state can
// carry, has no inverse; like Core's safegcd inverse it is treated as 0.
func (m *MuHash3072) Finalize() wire.Hash {
	var q num3072
	if !m.init {
		q.setOne()
	} else {
		q = m.quotient()
	}
	var out [num3072Bytes]byte
	return wire.Hash(sha256.Sum256(q.appendBytes(out[:0])))
}

// quotient returns num·den⁻¹ mod p.
func (m *MuHash3072) quotient() num3072 {
	p := muPrime()
	d := m.den.bigInt()
	d.Mod(d, p)
	var inv num3072
	if d.Sign() != 0 {
		inv.setBig(d.ModInverse(d, p))
	}
	var q num3072
	q.mulMod(&m.num, &inv)
	return q
}

// MarshalBinary returns the 768-byte state: numerator then denominator, each
// 384 bytes little-endian — the same bytes as Core's MuHash3072
// serialization. Both halves are fully reduced (< p).
func (m *MuHash3072) MarshalBinary() ([]byte, error) {
	return m.AppendBinary(make([]byte, 0, MuHashStateSize))
}

// AppendBinary appends MarshalBinary's encoding to dst.
func (m *MuHash3072) AppendBinary(dst []byte) ([]byte, error) {
	c := *m
	c.ensureInit()
	dst = c.num.appendBytes(dst)
	return c.den.appendBytes(dst), nil
}

// UnmarshalBinary loads a state written by MarshalBinary (or by Core's
// MuHash3072 serializer). It accepts halves that are not reduced below p, as
// Core does, and reduces them; it fails with ErrMuHashState unless b is
// exactly 768 bytes.
func (m *MuHash3072) UnmarshalBinary(b []byte) error {
	if len(b) != MuHashStateSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrMuHashState, len(b), MuHashStateSize)
	}
	m.num.setBytes(b[:num3072Bytes])
	m.den.setBytes(b[num3072Bytes:])
	if m.num.isOverflow() {
		m.num.fullReduce()
	}
	if m.den.isOverflow() {
		m.den.fullReduce()
	}
	m.init = true
	return nil
}
