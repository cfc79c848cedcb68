package descriptor

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"

	"utxod/address/base58"
	"utxod/params"
)

// HardenedBit marks a hardened BIP32 child index.
const HardenedBit = 1 << 31

// extKey is a BIP32 extended key (Core's CExtPubKey / CExtKey). priv is
// nil for a public key.
type extKey struct {
	depth     byte
	parentFP  [4]byte
	child     uint32
	chainCode [32]byte
	pub       []byte // 33-byte compressed key
	priv      []byte // 32 bytes, or nil
}

// decodeExtKey is Core's DecodeExtPubKey / DecodeExtKey for network p: 78
// bytes of base58check with the network's xpub or xprv version. The checks
// are Core's: a depth-0 key has a zero parent fingerprint and child number,
// a public key is a valid point, a private key is 0x00 then 0 < k < n.
func decodeExtKey(s string, p *params.Params) (extKey, bool) {
	data, err := base58.CheckDecode(s, 78)
	if err != nil || len(data) != 78 {
		return extKey{}, false
	}
	var k extKey
	ver := [4]byte(data[:4])
	k.depth = data[4]
	copy(k.parentFP[:], data[5:9])
	k.child = binary.BigEndian.Uint32(data[9:13])
	copy(k.chainCode[:], data[13:45])
	key := data[45:78]
	if k.depth == 0 && (k.child != 0 || k.parentFP != [4]byte{}) {
		return extKey{}, false
	}
	switch ver {
	case p.ExtPubKeyVersion:
		if (key[0] != 2 && key[0] != 3) || !fullyValid(key) {
			return extKey{}, false
		}
		k.pub = append([]byte(nil), key...)
	case p.ExtSecKeyVersion:
		if key[0] != 0 || !privValid(key[1:]) {
			return extKey{}, false
		}
		k.priv = append([]byte(nil), key[1:]...)
		k.pub = pubFromPriv(k.priv)
	default:
		return extKey{}, false
	}
	return k, true
}

// encode serializes k (the public form when pub is true) with p's version.
func (k extKey) encode(p *params.Params, public bool) string {
	b := make([]byte, 0, 78)
	if public || k.priv == nil {
		b = append(b, p.ExtPubKeyVersion[:]...)
	} else {
		b = append(b, p.ExtSecKeyVersion[:]...)
	}
	b = append(b, k.depth)
	b = append(b, k.parentFP[:]...)
	b = binary.BigEndian.AppendUint32(b, k.child)
	b = append(b, k.chainCode[:]...)
	if public || k.priv == nil {
		b = append(b, k.pub...)
	} else {
		b = append(b, 0)
		b = append(b, k.priv...)
	}
	return base58.CheckEncode(b)
}

// fingerprint is the first 4 bytes of the key's HASH160.
func (k extKey) fingerprint() [4]byte {
	h := hash160(k.pub)
	return [4]byte(h[:4])
}

// neuter drops the private key.
func (k extKey) neuter() extKey {
	k.priv = nil
	return k
}

// derive is CExtKey::Derive / CExtPubKey::Derive: the child i. A hardened
// child needs the private key. It fails at depth 255, without the private
// key for a hardened index, and in BIP32's "invalid key" cases (IL not below
// the order, a zero or infinite result).
func (k extKey) derive(i uint32) (extKey, bool) {
	if k.depth == 255 {
		return extKey{}, false
	}
	mac := hmac.New(sha512.New, k.chainCode[:])
	if i&HardenedBit != 0 {
		if k.priv == nil {
			return extKey{}, false
		}
		mac.Write([]byte{0})
		mac.Write(k.priv)
	} else {
		mac.Write(k.pub)
	}
	var ib [4]byte
	binary.BigEndian.PutUint32(ib[:], i)
	mac.Write(ib[:])
	I := mac.Sum(nil)
	child := extKey{depth: k.depth + 1, parentFP: k.fingerprint(), child: i}
	copy(child.chainCode[:], I[32:])
	if k.priv != nil {
		priv, ok := privTweakAdd(k.priv, I[:32])
		if !ok {
			return extKey{}, false
		}
		child.priv = priv
		child.pub = pubFromPriv(priv)
		return child, true
	}
	pub, ok := tweakAdd(k.pub, I[:32])
	if !ok {
		return extKey{}, false
	}
	child.pub = pub
	return child, true
}
