package utxo

import "utxod/wire"

// Outpoint names one transaction output: the txid (internal byte order) and
// the output index.
type Outpoint struct {
	Hash  wire.Hash
	Index uint32
}

// Coin is one unspent transaction output together with the facts consensus
// needs about its creation: the height of the block that created it and
// whether it was created by a coinbase transaction.
//
// Script is owned by whoever built the Coin; callers that keep a Coin beyond
// the call that returned it must not modify Script.
type Coin struct {
	Value    int64
	Height   uint32
	Coinbase bool
	Script   []byte
}
