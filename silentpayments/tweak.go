package silentpayments

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"hash"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // P2PKH's HASH160 needs RIPEMD-160

	"utxod/wire"
)

// TweakSize is the length of a serialized tweak: a SEC1 compressed point.
const TweakSize = 33

// Errors for arguments ComputeTweak cannot interpret. A well-formed but
// ineligible transaction is not an error: ComputeTweak reports ok=false.
var (
	// ErrNilTx: the transaction is nil.
	ErrNilTx = errors.New("silentpayments: nil transaction")
	// ErrPrevoutCount: the number of prevout scriptPubKeys differs from the
	// number of inputs.
	ErrPrevoutCount = errors.New("silentpayments: prevout script count differs from input count")
)

// numsH is the x coordinate of BIP341's NUMS point H, the internal key of
// taproot outputs that have no key path. Script-path spends naming it in
// their control block are skipped.
var numsH = [32]byte{
	0x50, 0x92, 0x9b, 0x74, 0xc1, 0xa0, 0x49, 0x54, 0xb7, 0x8b, 0x4b, 0x60, 0x35, 0xe9, 0x7a, 0x5e,
	0x07, 0x8a, 0x5a, 0x0f, 0x28, 0xec, 0x96, 0xd5, 0x47, 0xbf, 0xee, 0x9a, 0xce, 0x80, 0x3a, 0xc0,
}

// Tags of BIP352's tagged hashes (BIP340: SHA256(SHA256(tag) || SHA256(tag) || x)).
const (
	TagInputs       = "BIP0352/Inputs"
	TagSharedSecret = "BIP0352/SharedSecret"
	TagLabel        = "BIP0352/Label"
)

var inputsTag = sha256.Sum256([]byte(TagInputs))

// TaggedHash is BIP340's hash_tag(msg) = SHA256(SHA256(tag) || SHA256(tag) || msg).
func TaggedHash(tag string, msg ...[]byte) [32]byte {
	t := sha256.Sum256([]byte(tag))
	h := sha256.New()
	h.Write(t[:])
	h.Write(t[:])
	for _, m := range msg {
		h.Write(m)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// outpointSize is the length of a serialized outpoint: txid (internal byte
// order) || vout (little-endian).
const outpointSize = 36

func putOutpoint(b *[outpointSize]byte, in *wire.TxIn) {
	copy(b[:32], in.PrevHash[:])
	v := in.PrevIndex
	b[32], b[33], b[34], b[35] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// ComputeTweak returns BIP352's tweak data for tx: ser_P(input_hash·A) with A
// the sum of the eligible inputs' public keys. prevoutScripts holds the
// scriptPubKey of each output tx spends, in input order (one per input; a nil
// entry is an unknown script, whose input is simply not eligible).
//
// ok is false, with a nil error, when tx is not a silent payment eligible
// transaction: a coinbase (prevoutScripts is then not looked at), no taproot
// output, a spent output of SegWit version > 1, no input from the BIP's
// "Inputs For Shared Secret Derivation" list, A at infinity, or the
// (astronomically unlikely) input_hash that is not a valid scalar, for which
// the BIP says to fail: no receiver can scan such a transaction.
//
// The error is ErrNilTx or ErrPrevoutCount; ComputeTweak never panics on
// malformed scripts or witnesses, which make an input ineligible.
func ComputeTweak(tx *wire.Tx, prevoutScripts [][]byte) (tweak [TweakSize]byte, ok bool, err error) {
	if tx == nil {
		return tweak, false, ErrNilTx
	}
	if tx.IsCoinbase() {
		return tweak, false, nil
	}
	if len(prevoutScripts) != len(tx.Inputs) {
		return tweak, false, ErrPrevoutCount
	}
	if !HasTaprootOutput(tx) {
		return tweak, false, nil
	}

	sum, smallest, ok := sumInputKeys(tx, prevoutScripts)
	if !ok {
		return tweak, false, nil
	}

	// input_hash = hash_BIP0352/Inputs(outpoint_L || ser_P(A)), hashed from
	// one stack buffer: tag hash twice, outpoint, point.
	var msg [64 + outpointSize + TweakSize]byte
	copy(msg[:32], inputsTag[:])
	copy(msg[32:64], inputsTag[:])
	copy(msg[64:], smallest[:])
	putCompressed(msg[64+outpointSize:], &sum)
	inputHash := sha256.Sum256(msg[:])

	var s secp256k1.ModNScalar
	if overflow := s.SetBytes(&inputHash); overflow != 0 || s.IsZero() {
		return tweak, false, nil
	}
	var t secp256k1.JacobianPoint
	secp256k1.ScalarMultNonConst(&s, &sum, &t)
	if isInfinity(&t) { // impossible for a nonzero scalar and a point of prime order
		return tweak, false, nil
	}
	t.ToAffine()
	putCompressed(tweak[:], &t)
	return tweak, true, nil
}

// sumInputKeys returns A, the sum of the public keys of tx's inputs from the
// "Inputs For Shared Secret Derivation" list, as an affine point, and the
// smallest serialized outpoint among all inputs. ok is false when an input
// spends a SegWit version > 1 output, no input has a key, or A is the point
// at infinity. len(prevoutScripts) must be len(tx.Inputs).
func sumInputKeys(tx *wire.Tx, prevoutScripts [][]byte) (sum secp256k1.JacobianPoint, smallest [outpointSize]byte, ok bool) {
	var (
		key   secp256k1.JacobianPoint
		nKeys int
		op    [outpointSize]byte
		h160  *hash160er
	)
	// sum starts as the point at infinity (all zero), which AddNonConst
	// treats as the identity.
	for i := range tx.Inputs {
		in := &tx.Inputs[i]
		spk := prevoutScripts[i]
		if v, isWit := witnessVersion(spk); isWit && v > 1 {
			return sum, smallest, false
		}
		putOutpoint(&op, in)
		if i == 0 || bytes.Compare(op[:], smallest[:]) < 0 {
			smallest = op
		}
		if isP2PKH(spk) && h160 == nil {
			h160 = newHash160er()
		}
		if !inputKey(in, spk, h160, &key) {
			continue
		}
		secp256k1.AddNonConst(&sum, &key, &sum)
		nKeys++
	}
	if nKeys == 0 || isInfinity(&sum) {
		return sum, smallest, false
	}
	sum.ToAffine()
	return sum, smallest, true
}

// inputKey sets p (affine, Z=1) to the public key of input in spending spk
// and reports whether the input is one of the BIP's "Inputs For Shared
// Secret Derivation", following reference.py's get_pubkey_from_input.
func inputKey(in *wire.TxIn, spk []byte, h *hash160er, p *secp256k1.JacobianPoint) bool {
	switch {
	case isP2PKH(spk):
		return p2pkhKey(in.Script, spk[3:23], h, p)
	case isP2SH(spk):
		// P2SH-P2WPKH: the scriptSig is the push of a P2WPKH redeem script
		// (0x16 0x00 0x14 <20 bytes>); the key is the last witness item.
		ss := in.Script
		if len(ss) != 23 || ss[0] != 0x16 || !isP2WPKH(ss[1:]) {
			return false
		}
		return lastWitnessKey(in.Witness, p)
	case isP2WPKH(spk):
		return lastWitnessKey(in.Witness, p)
	case isP2TR(spk):
		w := in.Witness
		if len(w) == 0 {
			return false
		}
		if len(w) > 1 && len(w[len(w)-1]) > 0 && w[len(w)-1][0] == 0x50 {
			w = w[:len(w)-1] // annex
		}
		if len(w) > 1 {
			// Script path: the control block is <control byte> <32-byte
			// internal key> <32-byte hashes...>.
			cb := w[len(w)-1]
			if len(cb) >= 33 && [32]byte(cb[1:33]) == numsH {
				return false
			}
		}
		return liftX(spk[2:34], false, p)
	}
	return false
}

// p2pkhKey searches scriptSig from the end for a 33-byte window that is a
// compressed public key whose HASH160 is keyHash, as the BIP requires for
// malleated scriptSigs. Windows not starting with 0x02 or 0x03 cannot parse
// as compressed keys and are not hashed; otherwise the first window (from
// the end) that hashes to keyHash and parses is the key, as in
// reference.py.
func p2pkhKey(scriptSig, keyHash []byte, h *hash160er, p *secp256k1.JacobianPoint) bool {
	for i := len(scriptSig); i >= 33; i-- {
		w := scriptSig[i-33 : i]
		if w[0] != 0x02 && w[0] != 0x03 {
			continue
		}
		if sum := h.sum(w); !bytes.Equal(sum[:], keyHash) {
			continue
		}
		if parseCompressed(w, p) {
			return true
		}
	}
	return false
}

// lastWitnessKey parses the last witness item as a compressed public key.
func lastWitnessKey(w [][]byte, p *secp256k1.JacobianPoint) bool {
	if len(w) == 0 {
		return false
	}
	return parseCompressed(w[len(w)-1], p)
}

// parseCompressed sets p to the SEC1 compressed point b (0x02/0x03 || x).
// Uncompressed and hybrid encodings are refused.
func parseCompressed(b []byte, p *secp256k1.JacobianPoint) bool {
	if len(b) != 33 || (b[0] != 0x02 && b[0] != 0x03) {
		return false
	}
	return liftX(b[1:], b[0] == 0x03, p)
}

// liftX sets p to the point with x coordinate x (32 bytes, big-endian, below
// the field prime) and the given Y parity.
func liftX(x []byte, odd bool, p *secp256k1.JacobianPoint) bool {
	if p.X.SetByteSlice(x) {
		return false // x >= field prime
	}
	if !secp256k1.DecompressY(&p.X, odd, &p.Y) {
		return false
	}
	p.Z.SetInt(1)
	return true
}

func isInfinity(p *secp256k1.JacobianPoint) bool {
	return (p.X.IsZero() && p.Y.IsZero()) || p.Z.IsZero()
}

// putCompressed writes affine p as ser_P: (0x02 or 0x03) || x.
func putCompressed(b []byte, p *secp256k1.JacobianPoint) {
	b[0] = 0x02
	if p.Y.IsOdd() {
		b[0] = 0x03
	}
	p.X.PutBytesUnchecked(b[1:33])
}

// witnessVersion reports whether spk is a witness program (Core's
// CScript::IsWitnessProgram: 4 to 42 bytes, OP_0 or OP_1..OP_16, then one
// push of the remaining 2 to 40 bytes) and its version.
func witnessVersion(spk []byte) (int, bool) {
	if len(spk) < 4 || len(spk) > 42 || int(spk[1])+2 != len(spk) {
		return 0, false
	}
	switch op := spk[0]; {
	case op == 0x00:
		return 0, true
	case op >= 0x51 && op <= 0x60:
		return int(op - 0x50), true
	}
	return 0, false
}

// isP2TR: OP_1 OP_PUSHBYTES_32 <32 bytes>.
func isP2TR(spk []byte) bool { return len(spk) == 34 && spk[0] == 0x51 && spk[1] == 0x20 }

// isP2WPKH: OP_0 OP_PUSHBYTES_20 <20 bytes>.
func isP2WPKH(spk []byte) bool { return len(spk) == 22 && spk[0] == 0x00 && spk[1] == 0x14 }

// isP2SH: OP_HASH160 OP_PUSHBYTES_20 <20 bytes> OP_EQUAL.
func isP2SH(spk []byte) bool {
	return len(spk) == 23 && spk[0] == 0xa9 && spk[1] == 0x14 && spk[22] == 0x87
}

// isP2PKH: OP_DUP OP_HASH160 OP_PUSHBYTES_20 <20 bytes> OP_EQUALVERIFY OP_CHECKSIG.
func isP2PKH(spk []byte) bool {
	return len(spk) == 25 && spk[0] == 0x76 && spk[1] == 0xa9 && spk[2] == 0x14 &&
		spk[23] == 0x88 && spk[24] == 0xac
}

// hash160er computes RIPEMD160(SHA256(b)), reusing one RIPEMD-160 state.
type hash160er struct {
	rmd hash.Hash
	out [20]byte
}

func newHash160er() *hash160er { return &hash160er{rmd: ripemd160.New()} }

func (h *hash160er) sum(b []byte) [20]byte {
	s := sha256.Sum256(b)
	h.rmd.Reset()
	h.rmd.Write(s[:])
	h.rmd.Sum(h.out[:0])
	return h.out
}
