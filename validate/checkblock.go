package validate

import (
	"utxod/script"
	"utxod/wire"
)

// CheckTransaction is Core's context-free CheckTransaction
// (src/consensus/tx_check.cpp).
func CheckTransaction(tx *wire.Tx) error {
	if len(tx.Inputs) == 0 {
		return ruleErr("bad-txns-vin-empty", "tx %s", tx.TxID)
	}
	if len(tx.Outputs) == 0 {
		return ruleErr("bad-txns-vout-empty", "tx %s", tx.TxID)
	}
	// Size limits (this doesn't take the witness into account).
	if tx.BaseSize()*WitnessScaleFactor > MaxBlockWeight {
		return ruleErr("bad-txns-oversize", "tx %s", tx.TxID)
	}
	var total int64
	for i, out := range tx.Outputs {
		if out.Value < 0 {
			return ruleErr("bad-txns-vout-negative", "tx %s output %d", tx.TxID, i)
		}
		if out.Value > MaxMoney {
			return ruleErr("bad-txns-vout-toolarge", "tx %s output %d", tx.TxID, i)
		}
		total += out.Value
		if !MoneyRange(total) {
			return ruleErr("bad-txns-txouttotal-toolarge", "tx %s", tx.TxID)
		}
	}
	// Duplicate inputs (CVE-2018-17144). Small input counts compare
	// pairwise; larger ones use a set.
	if n := len(tx.Inputs); n > 1 {
		if n <= 16 {
			for i := 1; i < n; i++ {
				for j := 0; j < i; j++ {
					if tx.Inputs[i].PrevIndex == tx.Inputs[j].PrevIndex && tx.Inputs[i].PrevHash == tx.Inputs[j].PrevHash {
						return ruleErr("bad-txns-inputs-duplicate", "tx %s input %d", tx.TxID, i)
					}
				}
			}
		} else {
			type op struct {
				h wire.Hash
				i uint32
			}
			seen := make(map[op]struct{}, n)
			for i := range tx.Inputs {
				k := op{tx.Inputs[i].PrevHash, tx.Inputs[i].PrevIndex}
				if _, dup := seen[k]; dup {
					return ruleErr("bad-txns-inputs-duplicate", "tx %s input %d", tx.TxID, i)
				}
				seen[k] = struct{}{}
			}
		}
	}
	if tx.IsCoinbase() {
		if n := len(tx.Inputs[0].Script); n < 2 || n > 100 {
			return ruleErr("bad-cb-length", "coinbase scriptSig is %d bytes", n)
		}
	} else {
		for i := range tx.Inputs {
			if tx.Inputs[i].PrevIndex == 0xffffffff && tx.Inputs[i].PrevHash == (wire.Hash{}) {
				return ruleErr("bad-txns-prevout-null", "tx %s input %d", tx.TxID, i)
			}
		}
	}
	return nil
}

// CheckBlock is Core's context-free CheckBlock (validation.cpp): proof of
// work, merkle root and mutation, size, coinbase placement, every
// transaction's CheckTransaction and the legacy sigop limit.
func (v *Validator) CheckBlock(b *wire.Block) error {
	if err := CheckProofOfWork(b.Hash, b.Header.Bits, v.Params); err != nil {
		return err
	}
	// Core checks the merkle root first: an empty block's root is zero
	// (ComputeMerkleRoot), so it fails "bad-txnmrklroot" unless the header
	// says zero, and then "bad-blk-length" below.
	leaves := make([]wire.Hash, len(b.Txs))
	for i := range b.Txs {
		leaves[i] = b.Txs[i].TxID
	}
	root, mutated := v.merkleRoot(leaves)
	if root != b.Header.MerkleRoot {
		return mutatedErr("bad-txnmrklroot", "hashMerkleRoot mismatch: header %s, computed %s", b.Header.MerkleRoot, root)
	}
	// CVE-2012-2459: a tree with a duplicated adjacent pair has the same
	// root as a different transaction list.
	if mutated {
		return mutatedErr("bad-txns-duplicate", "duplicate transaction")
	}
	if len(b.Txs) == 0 || len(b.Txs)*WitnessScaleFactor > MaxBlockWeight || b.BaseSize()*WitnessScaleFactor > MaxBlockWeight {
		return ruleErr("bad-blk-length", "size limits failed")
	}
	if !b.Txs[0].IsCoinbase() {
		return ruleErr("bad-cb-missing", "first tx is not coinbase")
	}
	for i := 1; i < len(b.Txs); i++ {
		if b.Txs[i].IsCoinbase() {
			return ruleErr("bad-cb-multiple", "more than one coinbase (tx %d)", i)
		}
	}
	for i := range b.Txs {
		if err := CheckTransaction(&b.Txs[i]); err != nil {
			return err
		}
	}
	sigops := 0
	for i := range b.Txs {
		sigops += script.LegacyTxSigOpCount(&b.Txs[i]) // GetLegacySigOpCount
	}
	if sigops*WitnessScaleFactor > MaxBlockSigOpsCost {
		return ruleErr("bad-blk-sigops", "out-of-bounds SigOpCount")
	}
	return nil
}
