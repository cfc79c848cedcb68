package silentpayments

import "utxod/wire"

// TaprootOutput is one BIP341 taproot output of a transaction: the outputs a
// silent payment receiver checks.
type TaprootOutput struct {
	// Index is the output's position in the transaction (vout).
	Index uint32
	// Key is the x-only output key (the scriptPubKey's 32-byte program).
	Key [32]byte
	// Value is the output's amount in satoshis.
	Value int64
}

// HasTaprootOutput reports whether tx has at least one taproot output
// (scriptPubKey OP_1 OP_PUSHBYTES_32 <32 bytes>).
func HasTaprootOutput(tx *wire.Tx) bool {
	if tx == nil {
		return false
	}
	for i := range tx.Outputs {
		if isP2TR(tx.Outputs[i].Script) {
			return true
		}
	}
	return false
}

// TaprootOutputs returns tx's taproot outputs in output order and the largest
// taproot output value (0 when there is none), which an index keeps for
// dust filtering and cut-through. A nil tx has none.
func TaprootOutputs(tx *wire.Tx) (outs []TaprootOutput, maxValue int64) {
	return AppendTaprootOutputs(nil, tx)
}

// AppendTaprootOutputs is TaprootOutputs appending to dst, so that an indexer
// can reuse one slice across transactions.
func AppendTaprootOutputs(dst []TaprootOutput, tx *wire.Tx) ([]TaprootOutput, int64) {
	if tx == nil {
		return dst, 0
	}
	var maxValue int64
	found := false
	for i := range tx.Outputs {
		o := &tx.Outputs[i]
		if !isP2TR(o.Script) {
			continue
		}
		dst = append(dst, TaprootOutput{Index: uint32(i), Key: [32]byte(o.Script[2:34]), Value: o.Value})
		if !found || o.Value > maxValue {
			maxValue = o.Value
			found = true
		}
	}
	return dst, maxValue
}
