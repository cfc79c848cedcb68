package blockgen

import (
	"crypto/sha256"
	"time"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"
)

func unixTime(t int64) time.Time { return time.Unix(t, 0) }

// Key is a secp256k1 key pair for signing test transactions (compressed
// public key).
type Key struct {
	Priv *btcec.PrivateKey
	Pub  []byte // compressed
}

// NewKey derives a deterministic key from seed (SHA-256 of seed as the
// secret).
func NewKey(seed string) *Key {
	sum := sha256.Sum256([]byte(seed))
	priv, pub := btcec.PrivKeyFromBytes(sum[:])
	return &Key{Priv: priv, Pub: pub.SerializeCompressed()}
}

// PubKeyHash is HASH160 of the compressed public key.
func (k *Key) PubKeyHash() []byte { return address.Hash160(k.Pub) }

// P2PKH is OP_DUP OP_HASH160 <hash> OP_EQUALVERIFY OP_CHECKSIG.
func (k *Key) P2PKH() []byte {
	s := []byte{txscript.OP_DUP, txscript.OP_HASH160, 20}
	s = append(s, k.PubKeyHash()...)
	return append(s, txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG)
}

// P2WPKH is OP_0 <20-byte hash>.
func (k *Key) P2WPKH() []byte {
	return append([]byte{txscript.OP_0, 20}, k.PubKeyHash()...)
}

// SignP2PKH sets input idx's scriptSig to a SIGHASH_ALL signature and the
// public key for prevScript (a P2PKH script of k).
func (k *Key) SignP2PKH(tx *btcwire.MsgTx, idx int, prevScript []byte) error {
	s, err := txscript.SignatureScript(tx, idx, prevScript, txscript.SigHashAll, k.Priv, true)
	if err != nil {
		return err
	}
	tx.TxIn[idx].SignatureScript = s
	return nil
}

// Prevout is a spent output's value and script, for BIP143 signing.
type Prevout struct {
	Value  int64
	Script []byte
}

// SignP2WPKH sets input idx's witness to a BIP143 SIGHASH_ALL signature and
// the public key. prevouts[i] is the output spent by tx.TxIn[i].
func (k *Key) SignP2WPKH(tx *btcwire.MsgTx, idx int, prevouts []Prevout) error {
	m := make(map[btcwire.OutPoint]*btcwire.TxOut, len(prevouts))
	for i, p := range prevouts {
		m[tx.TxIn[i].PreviousOutPoint] = &btcwire.TxOut{Value: p.Value, PkScript: p.Script}
	}
	fetcher := txscript.NewMultiPrevOutFetcher(m)
	hashes := txscript.NewTxSigHashes(tx, fetcher)
	w, err := txscript.WitnessSignature(tx, hashes, idx, prevouts[idx].Value, prevouts[idx].Script,
		txscript.SigHashAll, k.Priv, true)
	if err != nil {
		return err
	}
	tx.TxIn[idx].Witness = w
	tx.TxIn[idx].SignatureScript = nil
	return nil
}

// Spend returns a version-2 transaction spending ops (sequence
// 0xffffffff) with one output per entry of outs.
func Spend(ops []btcwire.OutPoint, outs ...*btcwire.TxOut) *btcwire.MsgTx {
	tx := btcwire.NewMsgTx(2)
	for _, op := range ops {
		tx.AddTxIn(&btcwire.TxIn{PreviousOutPoint: op, Sequence: 0xffffffff})
	}
	for _, o := range outs {
		tx.AddTxOut(o)
	}
	return tx
}

// Out is a btcd TxOut.
func Out(value int64, script []byte) *btcwire.TxOut {
	return &btcwire.TxOut{Value: value, PkScript: script}
}

// Hash160 is RIPEMD160(SHA256(b)).
func Hash160(b []byte) []byte { return address.Hash160(b) }
