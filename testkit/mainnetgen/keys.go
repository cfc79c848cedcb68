package mainnetgen

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// Key pool sizes: N/KeyPoolDivisor keys, within [KeyPoolMin, KeyPoolMax], so
// that the pool's addresses are a small fraction of the set's and deriving
// it stays cheap (65,536 keys at 185 M coins: a few seconds, a few MB).
const (
	KeyPoolDivisor = 256
	KeyPoolMin     = 64
	KeyPoolMax     = 1 << 16
)

// keyPoolSize is the number of pool keys of a set of n coins.
func keyPoolSize(n uint64) int {
	return int(min(max(n/KeyPoolDivisor, KeyPoolMin), KeyPoolMax))
}

// poolKey is one derived key: the HASH160 of its compressed public key
// (P2WPKH and P2PKH) and its BIP86 taproot output key (key path only).
type poolKey struct {
	ready bool
	hash  [20]byte
	xonly [32]byte
}

// keyPool is the generator's deterministic keys, derived on first use: key
// i's secret is SHA-256("mainnetgen key" ‖ seed ‖ i) reduced mod n.
type keyPool struct {
	seed uint64
	keys []poolKey
}

func newKeyPool(seed uint64, n int) *keyPool { return &keyPool{seed: seed, keys: make([]poolKey, n)} }

// secret is key i's private key.
func (p *keyPool) secret(i uint32) *btcec.PrivateKey {
	var m [14 + 8 + 4]byte
	copy(m[:], "mainnetgen key")
	binary.LittleEndian.PutUint64(m[14:], p.seed)
	binary.LittleEndian.PutUint32(m[22:], i)
	sum := sha256.Sum256(m[:])
	return secp256k1.PrivKeyFromBytes(sum[:]) // btcec's PrivateKey, without computing the public key

}

// at derives key i if needed.
func (p *keyPool) at(i uint32) *poolKey {
	k := &p.keys[i]
	if !k.ready {
		pub := p.secret(i).PubKey()
		copy(k.hash[:], address.Hash160(pub.SerializeCompressed()))
		copy(k.xonly[:], schnorr.SerializePubKey(txscript.ComputeTaprootKeyNoScript(pub)))
		k.ready = true
	}
	return k
}

// appendScript appends key i's output script of type t (P2WPKH, P2TR or
// P2PKH).
func (p *keyPool) appendScript(dst []byte, t ScriptType, i uint32) []byte {
	k := p.at(i)
	switch t {
	case P2TR:
		return append(append(dst, 0x51, 0x20), k.xonly[:]...)
	case P2PKH:
		return append(append(append(dst, 0x76, 0xa9, 0x14), k.hash[:]...), 0x88, 0xac)
	}
	return append(append(dst, 0x00, 0x14), k.hash[:]...)
}

// spendableType reports whether a coin of type t can come from the pool.
func spendableType(t ScriptType) bool { return t == P2WPKH || t == P2TR || t == P2PKH }

// spendablePPM is the share (per million) of the eligible coins (P2WPKH,
// P2TR, P2PKH, neither coinbase nor whale) that pay a pool key: about
// 250,000 coins, at least 1.25 % of them (so about 1 % of the set at
// mainnet size), all of them in a set of 250,000 coins or fewer.
func spendablePPM(n uint64) uint64 {
	return min(1_000_000, max(12_500, 250_000*1_000_000/n))
}
