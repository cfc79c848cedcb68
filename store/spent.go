package store

import (
	"utxod/utxo"
	"utxod/wire"
)

// SpentReader is implemented by stores that read the coins any block with
// undo data spent, not only the tip's (Undo's contract). The event stream
// (package events) builds a past block's events from its raw data and
// these coins, for a client resuming from an older block.
type SpentReader interface {
	// SpentCoins returns the coins block spent, in the order its inputs
	// spend them (its undo data's Spent list), or ErrNoUndo if its undo
	// data is not kept (a block never connected, disconnected since, or
	// pruned). It may run under the chainstate's read lock, concurrently
	// with Block and Coin; the caller must not modify the coins.
	SpentCoins(block wire.Hash) ([]utxo.Entry, error)
}

// SpentCoins implements SpentReader.
func (m *memStore) SpentCoins(block wire.Hash) ([]utxo.Entry, error) {
	d, ok := m.undo[block]
	if !ok {
		return nil, ErrNoUndo
	}
	return d.Spent, nil
}

var _ SpentReader = (*memStore)(nil)
