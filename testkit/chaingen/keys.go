package chaingen

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"

	"utxod/testkit/blockgen"
)

// kind is the script template of a generated output. The output script is a
// pure function of (kind, key index, lock), so the pool stores only those.
type kind uint8

const (
	kP2PK       kind = iota // <33-byte pub> CHECKSIG
	kP2PKU                  // <65-byte pub> CHECKSIG (uncompressed, 2009-era)
	kP2PKH                  // DUP HASH160 <hash160(compressed)> EQUALVERIFY CHECKSIG
	kP2PKHU                 // same over the uncompressed key
	kP2WPKH                 // 0 <hash160>
	kP2SHWPKH               // HASH160 <hash160(0 <hash160>)> EQUAL
	kP2WSHMulti             // 0 <sha256(2 <k> <k+1> <k+2> 3 CHECKMULTISIG)>
	kP2TRKey                // 1 <BIP86 output key of k>
	kP2TRScript             // 1 <output key of k with leaves <k+1> CHECKSIG, <k+2> CHECKSIG>
	kCLTV                   // 0 <sha256(<lock> CLTV DROP <k> CHECKSIG)>
	kCSV                    // 0 <sha256(<seq> CSV DROP <k> CHECKSIG)>
	numKinds
)

var kindNames = [numKinds]string{"p2pk", "p2pk-uncompressed", "p2pkh", "p2pkh-uncompressed", "p2wpkh",
	"p2sh-p2wpkh", "p2wsh-multisig", "p2tr-key", "p2tr-script", "p2wsh-cltv", "p2wsh-csv"}

func (k kind) String() string { return kindNames[k] }

// segwit reports whether an input spending kind k has a scriptSig that does
// not depend on the signature, so the spending transaction's txid is known
// before it is signed (same-block children can then reference it).
func (k kind) segwit() bool { return k >= kP2WPKH }

// locked kinds wait in the locked list until their CLTV/CSV condition holds.
func (k kind) locked() bool { return k == kCLTV || k == kCSV }

// key is one deterministic key of the generator's key table.
type key struct {
	priv   *btcec.PrivateKey
	pub    *btcec.PublicKey
	pubC   []byte            // compressed
	pubU   []byte            // uncompressed
	xonly  []byte            // BIP340 x-only
	hashC  []byte            // HASH160(pubC)
	hashU  []byte            // HASH160(pubU)
	p2tr   []byte            // BIP86 key-path-only output script
	trPriv *btcec.PrivateKey // priv tweaked for p2tr (BIP86, empty root)
	tree   *tapTree
	multi  []byte // 2-of-3 witness script over keys k, k+1, k+2
	p2wshM []byte // P2WSH of multi
}

// tapTree is the two-leaf script tree of a kP2TRScript output.
type tapTree struct {
	leaves   [2]txscript.TapLeaf
	control  [2][]byte         // serialized control blocks
	root     []byte            // merkle root (tweak input for key-path spends)
	priv     *btcec.PrivateKey // internal key's priv tweaked with root
	pkScript []byte
}

// keyTable holds n keys derived from the seed: secret_i = SHA-256("chaingen
// key" ‖ seed LE64 ‖ i LE32).
type keyTable struct {
	keys []key
}

func newKeyTable(seed uint64, n int) *keyTable {
	t := &keyTable{keys: make([]key, n)}
	for i := range t.keys {
		var buf [12]byte
		binary.LittleEndian.PutUint64(buf[:8], seed)
		binary.LittleEndian.PutUint32(buf[8:], uint32(i))
		h := sha256.New()
		h.Write([]byte("chaingen key"))
		h.Write(buf[:])
		priv, pub := btcec.PrivKeyFromBytes(h.Sum(nil))
		k := &t.keys[i]
		k.priv, k.pub = priv, pub
		k.pubC = pub.SerializeCompressed()
		k.pubU = pub.SerializeUncompressed()
		k.xonly = schnorr.SerializePubKey(pub)
		k.hashC = address.Hash160(k.pubC)
		k.hashU = address.Hash160(k.pubU)
	}
	return t
}

func (t *keyTable) at(i int) *key { return &t.keys[i%len(t.keys)] }

// p2trScript is OP_1 <32-byte x-only key>.
func p2trScript(pub *btcec.PublicKey) []byte {
	return append([]byte{txscript.OP_1, 32}, schnorr.SerializePubKey(pub)...)
}

func p2wsh(witnessScript []byte) []byte {
	h := sha256.Sum256(witnessScript)
	return append([]byte{txscript.OP_0, 32}, h[:]...)
}

func p2pkh(hash []byte) []byte {
	s := []byte{txscript.OP_DUP, txscript.OP_HASH160, 20}
	s = append(s, hash...)
	return append(s, txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG)
}

func p2wpkh(hash []byte) []byte { return append([]byte{txscript.OP_0, 20}, hash...) }

func p2sh(redeem []byte) []byte {
	s := []byte{txscript.OP_HASH160, 20}
	s = append(s, address.Hash160(redeem)...)
	return append(s, txscript.OP_EQUAL)
}

func pushData(d []byte) []byte {
	switch {
	case len(d) < txscript.OP_PUSHDATA1:
		return append([]byte{byte(len(d))}, d...)
	case len(d) <= 0xff:
		return append([]byte{txscript.OP_PUSHDATA1, byte(len(d))}, d...)
	default:
		return append([]byte{txscript.OP_PUSHDATA2, byte(len(d)), byte(len(d) >> 8)}, d...)
	}
}

// pushNum is Core's CScript() << n: OP_0, OP_1..OP_16 or a minimal
// CScriptNum push.
func pushNum(n int64) []byte {
	switch {
	case n == 0:
		return []byte{txscript.OP_0}
	case n >= 1 && n <= 16:
		return []byte{byte(txscript.OP_1 + n - 1)}
	}
	return pushData(blockgen.ScriptNum(n))
}

// multiScript returns (and caches) key i's 2-of-3 witness script.
func (t *keyTable) multiScript(i int) []byte {
	k := t.at(i)
	if k.multi == nil {
		s := []byte{txscript.OP_2}
		for j := 0; j < 3; j++ {
			s = append(s, 33)
			s = append(s, t.at(i+j).pubC...)
		}
		k.multi = append(s, txscript.OP_3, txscript.OP_CHECKMULTISIG)
		k.p2wshM = p2wsh(k.multi)
	}
	return k.multi
}

// tapLeafScript is <x-only key> OP_CHECKSIG.
func tapLeafScript(k *key) []byte {
	s := append([]byte{32}, k.xonly...)
	return append(s, txscript.OP_CHECKSIG)
}

// tree returns (and caches) key i's two-leaf tapscript tree.
func (t *keyTable) tree(i int) *tapTree {
	k := t.at(i)
	if k.tree == nil {
		tr := &tapTree{}
		tr.leaves[0] = txscript.NewBaseTapLeaf(tapLeafScript(t.at(i + 1)))
		tr.leaves[1] = txscript.NewBaseTapLeaf(tapLeafScript(t.at(i + 2)))
		st := txscript.AssembleTaprootScriptTree(tr.leaves[0], tr.leaves[1])
		root := st.RootNode.TapHash()
		tr.root = root[:]
		for j := range 2 {
			cb := st.LeafMerkleProofs[j].ToControlBlock(k.pub)
			b, err := cb.ToBytes()
			if err != nil {
				panic(err)
			}
			tr.control[j] = b
		}
		tr.pkScript = p2trScript(txscript.ComputeTaprootOutputKey(k.pub, tr.root))
		tr.priv = txscript.TweakTaprootPrivKey(*k.priv, tr.root)
		k.tree = tr
	}
	return k.tree
}

func cltvScript(k *key, lock uint32) []byte {
	s := pushNum(int64(lock))
	s = append(s, txscript.OP_CHECKLOCKTIMEVERIFY, txscript.OP_DROP, 33)
	s = append(s, k.pubC...)
	return append(s, txscript.OP_CHECKSIG)
}

func csvScript(k *key, seq uint32) []byte {
	s := pushNum(int64(seq))
	s = append(s, txscript.OP_CHECKSEQUENCEVERIFY, txscript.OP_DROP, 33)
	s = append(s, k.pubC...)
	return append(s, txscript.OP_CHECKSIG)
}

// witnessScript is the P2WSH script of a kCLTV/kCSV/kP2WSHMulti output.
func (t *keyTable) witnessScript(kd kind, ki int, lock uint32) []byte {
	switch kd {
	case kP2WSHMulti:
		return t.multiScript(ki)
	case kCLTV:
		return cltvScript(t.at(ki), lock)
	case kCSV:
		return csvScript(t.at(ki), lock)
	}
	return nil
}

// pkScript is the output script of (kind, key, lock).
func (t *keyTable) pkScript(kd kind, ki int, lock uint32) []byte {
	k := t.at(ki)
	switch kd {
	case kP2PK:
		return append(pushData(k.pubC), txscript.OP_CHECKSIG)
	case kP2PKU:
		return append(pushData(k.pubU), txscript.OP_CHECKSIG)
	case kP2PKH:
		return p2pkh(k.hashC)
	case kP2PKHU:
		return p2pkh(k.hashU)
	case kP2WPKH:
		return p2wpkh(k.hashC)
	case kP2SHWPKH:
		return p2sh(p2wpkh(k.hashC))
	case kP2WSHMulti:
		t.multiScript(ki)
		return k.p2wshM
	case kP2TRKey:
		if k.p2tr == nil {
			k.p2tr = p2trScript(txscript.ComputeTaprootKeyNoScript(k.pub))
			k.trPriv = txscript.TweakTaprootPrivKey(*k.priv, []byte{})
		}
		return k.p2tr
	case kP2TRScript:
		return t.tree(ki).pkScript
	case kCLTV, kCSV:
		return p2wsh(t.witnessScript(kd, ki, lock))
	}
	panic("chaingen: unknown kind")
}

// Upper bounds of an input's serialized size: non-witness bytes (outpoint,
// sequence, scriptSig with its length) and witness bytes (with the item
// count), with 72-byte DER signatures plus the hash type.
func inputSize(kd kind) (base, wit int) {
	const sig = 1 + 73
	switch kd {
	case kP2PK:
		return 40 + 1 + sig, 1
	case kP2PKU:
		return 40 + 1 + sig, 1
	case kP2PKH:
		return 40 + 1 + sig + 34, 1
	case kP2PKHU:
		return 40 + 3 + sig + 66, 1
	case kP2WPKH:
		return 41, 1 + sig + 34
	case kP2SHWPKH:
		return 41 + 23, 1 + sig + 34
	case kP2WSHMulti:
		return 41, 1 + 1 + 2*sig + 1 + 105
	case kP2TRKey:
		return 41, 1 + 66
	case kP2TRScript:
		return 41, 1 + 66 + 1 + 34 + 1 + 65
	case kCLTV, kCSV:
		return 41, 1 + sig + 1 + 45
	}
	return 200, 200
}

// inputSigops is the sigop cost (Core's GetTransactionSigOpCost) of spending
// kd: legacy scriptSigs are push-only (0), P2SH-P2WPKH and P2WPKH count 1,
// the 2-of-3 witness script counts 3 (accurate counting), tapscript 0.
func inputSigops(kd kind) int {
	switch kd {
	case kP2WPKH, kP2SHWPKH, kCLTV, kCSV:
		return 1
	case kP2WSHMulti:
		return 3
	}
	return 0
}

// outputSigops is the sigop cost of creating an output of kind kd: legacy
// scriptPubKey sigops count 4 (WITNESS_SCALE_FACTOR) each.
func outputSigops(kd kind) int {
	switch kd {
	case kP2PK, kP2PKU, kP2PKH, kP2PKHU:
		return 4
	}
	return 0
}
