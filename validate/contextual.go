package validate

import (
	"bytes"
	"crypto/sha256"

	"utxod/script"
	"utxod/wire"
)

// IsFinalTx is Core's IsFinalTx (src/consensus/tx_verify.cpp).
func IsFinalTx(tx *wire.Tx, height int32, blockTime int64) bool {
	if tx.LockTime == 0 {
		return true
	}
	limit := int64(height)
	if tx.LockTime >= LocktimeThreshold {
		limit = blockTime
	}
	if int64(tx.LockTime) < limit {
		return true
	}
	for i := range tx.Inputs {
		if tx.Inputs[i].Sequence != SequenceFinal {
			return false
		}
	}
	return true
}

// witnessCommitmentHeader starts a witness commitment output (BIP141).
var witnessCommitmentHeader = []byte{0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed}

// WitnessCommitmentIndex is Core's GetWitnessCommitmentIndex: the last
// coinbase output that carries a witness commitment, or -1.
func WitnessCommitmentIndex(b *wire.Block) int {
	pos := -1
	if len(b.Txs) == 0 {
		return pos
	}
	for i, out := range b.Txs[0].Outputs {
		if len(out.Script) >= 38 && bytes.HasPrefix(out.Script, witnessCommitmentHeader) {
			pos = i
		}
	}
	return pos
}

// deploymentActive reports whether a deployment active from activation
// height is in force for a block at height.
func deploymentActive(height, activation int32) bool { return height >= activation }

// ContextualCheckBlock is Core's ContextualCheckBlock: transaction finality
// (BIP113 median-time-past cut-off once CSV is active), the BIP34 height in
// the coinbase, the witness commitment (CheckWitnessMalleation) and the
// block weight. prev is the parent's index entry.
func (v *Validator) ContextualCheckBlock(b *wire.Block, prev *BlockNode) error {
	p := v.Params
	height := prev.Height + 1
	cutoff := int64(b.Header.Time)
	if deploymentActive(height, p.CSVHeight) {
		cutoff = prev.MedianTimePast()
	}
	for i := range b.Txs {
		if !IsFinalTx(&b.Txs[i], height, cutoff) {
			return ruleErr("bad-txns-nonfinal", "non-final transaction %s", b.Txs[i].TxID)
		}
	}
	if deploymentActive(height, p.BIP34Height) {
		expect := script.AppendPushInt64(nil, int64(height)) // CScript() << nHeight
		if !bytes.HasPrefix(b.Txs[0].Inputs[0].Script, expect) {
			return ruleErr("bad-cb-height", "block height mismatch in coinbase (height %d)", height)
		}
	}
	if err := v.checkWitnessMalleation(b, deploymentActive(height, p.SegwitHeight)); err != nil {
		return err
	}
	if b.Weight() > MaxBlockWeight {
		return ruleErr("bad-blk-weight", "weight limit failed (%d)", b.Weight())
	}
	return nil
}

// checkWitnessMalleation is Core's CheckWitnessMalleation.
func (v *Validator) checkWitnessMalleation(b *wire.Block, expectCommitment bool) error {
	if expectCommitment {
		if pos := WitnessCommitmentIndex(b); pos >= 0 {
			wit := b.Txs[0].Inputs[0].Witness
			if len(wit) != 1 || len(wit[0]) != 32 {
				return mutatedErr("bad-witness-nonce-size", "invalid witness reserved value size")
			}
			leaves := make([]wire.Hash, len(b.Txs))
			for i := 1; i < len(b.Txs); i++ {
				leaves[i] = b.Txs[i].WTxID
			} // the coinbase's wtxid is taken as zero
			root, _ := v.merkleRoot(leaves)
			h := sha256.New()
			h.Write(root[:])
			h.Write(wit[0])
			var first [32]byte
			h.Sum(first[:0])
			commit := sha256.Sum256(first[:])
			if !bytes.Equal(commit[:], b.Txs[0].Outputs[pos].Script[6:38]) {
				return mutatedErr("bad-witness-merkle-match", "witness merkle commitment mismatch")
			}
			return nil
		}
	}
	for i := range b.Txs {
		if b.Txs[i].HasWitness {
			return mutatedErr("unexpected-witness", "unexpected witness data found (tx %d)", i)
		}
	}
	return nil
}
