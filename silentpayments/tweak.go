package silentpayments

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"hash"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // P2PKH's HASH160 needs RIPEMD-160

	libsecp "utxod/internal/secp256k1"
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

	var buf [8][33]byte
	keys, smallest, ok := inputKeys(tx, prevoutScripts, buf[:0])
	if !ok {
		return tweak, false, nil
	}
	if libsecp.Library != "" {
		tweak, ok = tweakLibsecp(keys, &smallest)
	} else {
		tweak, ok = tweakDecred(keys, &smallest)
	}
	return tweak, ok, nil
}

// inputHash is hash_BIP0352/Inputs(outpoint_L || ser_P(A)), hashed from one
// stack buffer: tag hash twice, outpoint, point.
func inputHash(smallest *[outpointSize]byte, serA *[33]byte) [32]byte {
	var msg [64 + outpointSize + TweakSize]byte
	copy(msg[:32], inputsTag[:])
	copy(msg[32:64], inputsTag[:])
	copy(msg[64:], smallest[:])
	copy(msg[64+outpointSize:], serA[:])
	return sha256.Sum256(msg[:])
}

// tweakLibsecp is the tweak from the candidate keys through libsecp256k1
// (internal/secp256k1): A = Σ keys that parse, then input_hash·A. ok is
// false when A is infinity (or no key parses) or input_hash is not a valid
// scalar. Only with libsecp.Library != "".
func tweakLibsecp(keys [][33]byte, smallest *[outpointSize]byte) (tweak [TweakSize]byte, ok bool) {
	var A libsecp.Pubkey
	serA, ok := libsecp.PubkeyCombine(keys, &A)
	if !ok {
		return tweak, false
	}
	h := inputHash(smallest, &serA)
	return libsecp.PubkeyTweakMul(&A, &h)
}

// tweakDecred is tweakLibsecp in pure Go (decred), the fallback without
// cgo; the two give the same results (TestTweakArmsAgree).
func tweakDecred(keys [][33]byte, smallest *[outpointSize]byte) (tweak [TweakSize]byte, ok bool) {
	sum, ok := sumKeys(keys)
	if !ok {
		return tweak, false
	}
	var serA [33]byte
	putCompressed(serA[:], &sum)
	h := inputHash(smallest, &serA)

	var s secp256k1.ModNScalar
	if overflow := s.SetBytes(&h); overflow != 0 || s.IsZero() {
		return tweak, false
	}
	var t secp256k1.JacobianPoint
	secp256k1.ScalarMultNonConst(&s, &sum, &t)
	if isInfinity(&t) { // impossible for a nonzero scalar and a point of prime order
		return tweak, false
	}
	t.ToAffine()
	putCompressed(tweak[:], &t)
	return tweak, true
}

// sumKeys returns A, the sum of the keys that parse as compressed points,
// as an affine point; ok is false when none parses or A is infinity.
func sumKeys(keys [][33]byte) (sum secp256k1.JacobianPoint, ok bool) {
	var key secp256k1.JacobianPoint
	n := 0
	// sum starts as the point at infinity (all zero), which AddNonConst
	// treats as the identity.
	for i := range keys {
		if !parseCompressed(keys[i][:], &key) {
			continue
		}
		secp256k1.AddNonConst(&sum, &key, &sum)
		n++
	}
	if n == 0 || isInfinity(&sum) {
		return sum, false
	}
	sum.ToAffine()
	return sum, true
}

// inputKeys appends to keys the public keys, as SEC1 compressed encodings
// (x-only taproot keys as 0x02 || x), of tx's inputs from the "Inputs For
// Shared Secret Derivation" list, and returns the smallest serialized
// outpoint among all inputs. The encodings are not checked to be points:
// both arithmetic arms skip those that do not parse, which makes their
// inputs ineligible, as reference.py does. ok is false when an input
// spends a SegWit version > 1 output or no input has a key.
// len(prevoutScripts) must be len(tx.Inputs).
func inputKeys(tx *wire.Tx, prevoutScripts [][]byte, keys [][33]byte) (_ [][33]byte, smallest [outpointSize]byte, ok bool) {
	var (
		op   [outpointSize]byte
		h160 *hash160er
		key  [33]byte
	)
	for i := range tx.Inputs {
		in := &tx.Inputs[i]
		spk := prevoutScripts[i]
		if v, isWit := witnessVersion(spk); isWit && v > 1 {
			return keys, smallest, false
		}
		putOutpoint(&op, in)
		if i == 0 || bytes.Compare(op[:], smallest[:]) < 0 {
			smallest = op
		}
		if isP2PKH(spk) && h160 == nil {
			h160 = newHash160er()
		}
		if inputKey(in, spk, h160, &key) {
			keys = append(keys, key)
		}
	}
	return keys, smallest, len(keys) > 0
}

// inputKey sets key to the public key of input in spending spk (compressed
// encoding, not checked to be a point) and reports whether the input is one
// of the BIP's "Inputs For Shared Secret Derivation", following
// reference.py's get_pubkey_from_input.
func inputKey(in *wire.TxIn, spk []byte, h *hash160er, key *[33]byte) bool {
	switch {
	case isP2PKH(spk):
		return p2pkhKey(in.Script, spk[3:23], h, key)
	case isP2SH(spk):
		// P2SH-P2WPKH: the scriptSig is the push of a P2WPKH redeem script
		// (0x16 0x00 0x14 <20 bytes>); the key is the last witness item.
		ss := in.Script
		if len(ss) != 23 || ss[0] != 0x16 || !isP2WPKH(ss[1:]) {
			return false
		}
		return lastWitnessKey(in.Witness, key)
	case isP2WPKH(spk):
		return lastWitnessKey(in.Witness, key)
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
		key[0] = 0x02 // the output key, taken as even-Y
		copy(key[1:], spk[2:34])
		return true
	}
	return false
}

// p2pkhKey searches scriptSig from the end for a 33-byte window that is a
// compressed public key whose HASH160 is keyHash, as the BIP requires for
// malleated scriptSigs. Windows not starting with 0x02 or 0x03 cannot parse
// as compressed keys and are not hashed; the first window (from the end)
// that hashes to keyHash is the key. reference.py goes on searching when
// that window does not parse as a point, but any other window hashing to
// keyHash would be the same 33 bytes (short of a HASH160 collision), so
// leaving the parse to the arithmetic, which then skips the input, is the
// same.
func p2pkhKey(scriptSig, keyHash []byte, h *hash160er, key *[33]byte) bool {
	for i := len(scriptSig); i >= 33; i-- {
		w := scriptSig[i-33 : i]
		if w[0] != 0x02 && w[0] != 0x03 {
			continue
		}
		if sum := h.sum(w); bytes.Equal(sum[:], keyHash) {
			copy(key[:], w)
			return true
		}
	}
	return false
}

// lastWitnessKey takes the last witness item if it has a compressed key's
// form (33 bytes, 0x02 or 0x03 first); uncompressed and hybrid keys are
// refused.
func lastWitnessKey(w [][]byte, key *[33]byte) bool {
	if len(w) == 0 {
		return false
	}
	b := w[len(w)-1]
	if len(b) != 33 || (b[0] != 0x02 && b[0] != 0x03) {
		return false
	}
	copy(key[:], b)
	return true
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
