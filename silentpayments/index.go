package silentpayments

import (
	"context"
	"errors"

	"utxod/wire"
)

// TweakRow is one eligible transaction of a block as a tweak index keeps
// it: its tweak, its largest taproot output value (for dust filtering) and
// how many of its taproot outputs are still unspent (cut-through: a
// transaction whose count is 0 can pay no receiver anything any more).
type TweakRow struct {
	Txid  wire.Hash
	Tweak [TweakSize]byte
	// MaxValue is the largest taproot output value, in satoshis.
	MaxValue int64
	// Unspent is the number of the transaction's taproot outputs still in
	// the coin set at the index's tip.
	Unspent uint32
	// Outputs are the vouts of the transaction's taproot outputs, in order.
	Outputs []uint32
}

// BlockTweaks are the rows of one block of the active chain, in txid order
// (raw bytes).
type BlockTweaks struct {
	Height int32
	Hash   wire.Hash
	Rows   []TweakRow
}

// IndexTip is the state an Index describes: the active chain's block it
// ends at, and the lowest height it has rows for (From > Height: none).
type IndexTip struct {
	Height int32
	Hash   wire.Hash
	From   int32
}

// Index answers "which tweaks does the block at height h carry?" from a
// tweak index kept with the coin set (store/kvstore/spindex).
type Index interface {
	// Blocks returns the blocks of heights [from, from+count) that the
	// index covers (those in [Tip.From, Tip.Height]), all read at one tip.
	Blocks(ctx context.Context, from int32, count int) (IndexTip, []BlockTweaks, error)
	// Tip is the state the index describes now.
	Tip() IndexTip
}

// ErrNoIndex reports that the node keeps no tweak index.
var ErrNoIndex = errors.New("silentpayments: no tweak index (--index silentpayments)")
