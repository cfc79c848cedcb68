package chaingen

import (
	"fmt"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"
)

func unixTime(t int64) time.Time { return time.Unix(t, 0) }

// legacySig is txscript.RawTxInSignature with the compiled-in signer.
func legacySig(tx *btcwire.MsgTx, idx int, subScript []byte, ht txscript.SigHashType, k *key) ([]byte, error) {
	h, err := txscript.CalcSignatureHash(subScript, ht, tx, idx)
	if err != nil {
		return nil, err
	}
	return append(ecdsaSign(k.priv, h), byte(ht)), nil
}

// schnorrSig is txscript.RawTxIn{Taproot,Tapscript}Signature's signing
// step without the self-verification (schnorr.FastSign: same bytes) and
// with the taproot tweak of the key precomputed: BIP340 over hash, the
// hash type appended unless SIGHASH_DEFAULT.
func schnorrSig(priv *btcec.PrivateKey, hash []byte, ht txscript.SigHashType) []byte {
	sig, err := schnorr.Sign(priv, hash, schnorr.FastSign())
	if err != nil {
		panic(fmt.Sprintf("chaingen: schnorr signing: %v", err))
	}
	b := sig.Serialize()
	if ht != txscript.SigHashDefault {
		b = append(b, byte(ht))
	}
	return b
}

// witnessSig is txscript.RawTxInWitnessSignature (BIP143) with the
// compiled-in signer.
func witnessSig(tx *btcwire.MsgTx, hashes *txscript.TxSigHashes, idx int, value int64, subScript []byte, ht txscript.SigHashType, k *key) ([]byte, error) {
	h, err := txscript.CalcWitnessSigHash(subScript, hashes, ht, tx, idx, value)
	if err != nil {
		return nil, err
	}
	return append(ecdsaSign(k.priv, h), byte(ht)), nil
}

// signTx fills the scriptSigs and witnesses of tx from its plan. It reads
// the key table (whose caches the builder filled) and writes only tx.
func (g *Generator) signTx(tx *btcwire.MsgTx, plan []inPlan) error {
	var hashes *txscript.TxSigHashes
	var fetcher txscript.PrevOutputFetcher
	for _, p := range plan {
		if p.c.kind.segwit() {
			m := make(map[btcwire.OutPoint]*btcwire.TxOut, len(plan))
			for i, q := range plan {
				m[tx.TxIn[i].PreviousOutPoint] = &btcwire.TxOut{Value: q.c.value, PkScript: q.pkScript}
			}
			fetcher = txscript.NewMultiPrevOutFetcher(m)
			hashes = txscript.NewTxSigHashes(tx, fetcher)
			break
		}
	}
	for i, p := range plan {
		k := g.keys.at(int(p.c.key))
		in := tx.TxIn[i]
		switch p.c.kind {
		case kP2PK, kP2PKU:
			sig, err := legacySig(tx, i, p.pkScript, p.hashType, k)
			if err != nil {
				return err
			}
			in.SignatureScript = pushData(sig)
		case kP2PKH, kP2PKHU:
			sig, err := legacySig(tx, i, p.pkScript, p.hashType, k)
			if err != nil {
				return err
			}
			pub := k.pubC
			if p.c.kind == kP2PKHU {
				pub = k.pubU
			}
			in.SignatureScript = append(pushData(sig), pushData(pub)...)
		case kP2WPKH, kP2SHWPKH:
			sig, err := witnessSig(tx, hashes, i, p.c.value, p2wpkh(k.hashC), p.hashType, k)
			if err != nil {
				return err
			}
			in.Witness = btcwire.TxWitness{sig, k.pubC}
		case kP2WSHMulti:
			ws := k.multi
			pairs := [3][2]int{{0, 1}, {0, 2}, {1, 2}}[p.pair]
			w := btcwire.TxWitness{nil}
			for _, j := range pairs {
				sig, err := witnessSig(tx, hashes, i, p.c.value, ws, p.hashType, g.keys.at(int(p.c.key)+j))
				if err != nil {
					return err
				}
				w = append(w, sig)
			}
			in.Witness = append(w, ws)
		case kP2TRKey:
			h, err := txscript.CalcTaprootSignatureHash(hashes, p.hashType, tx, i, fetcher)
			if err != nil {
				return err
			}
			in.Witness = btcwire.TxWitness{schnorrSig(k.trPriv, h, p.hashType)}
		case kP2TRScript:
			tr := k.tree
			if p.leaf < 0 {
				h, err := txscript.CalcTaprootSignatureHash(hashes, p.hashType, tx, i, fetcher)
				if err != nil {
					return err
				}
				in.Witness = btcwire.TxWitness{schnorrSig(tr.priv, h, p.hashType)}
				break
			}
			leaf := tr.leaves[p.leaf]
			signer := g.keys.at(int(p.c.key) + 1 + int(p.leaf))
			h, err := txscript.CalcTapscriptSignaturehash(hashes, p.hashType, tx, i, fetcher, leaf)
			if err != nil {
				return err
			}
			in.Witness = btcwire.TxWitness{schnorrSig(signer.priv, h, p.hashType), leaf.Script, tr.control[p.leaf]}
		case kCLTV, kCSV:
			ws := g.keys.witnessScript(p.c.kind, int(p.c.key), p.c.lock)
			sig, err := witnessSig(tx, hashes, i, p.c.value, ws, p.hashType, k)
			if err != nil {
				return err
			}
			in.Witness = btcwire.TxWitness{sig, ws}
		default:
			return fmt.Errorf("input %d: unknown kind %d", i, p.c.kind)
		}
	}
	return nil
}
