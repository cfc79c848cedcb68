package utxo

import (
	"errors"

	"utxod/wire"
)

// ErrCoinNotFound reports an outpoint with no unspent coin.
var ErrCoinNotFound = errors.New("utxo: coin not found")

// View is the validator's read boundary onto the coin set.
//
// Coin returns the unspent coin at op and found=false when op was spent or
// never existed; err is reserved for failures of the backing store. The
// returned Coin's Script is owned by the view and must not be modified; it
// stays valid until the view is next modified.
type View interface {
	Coin(op Outpoint) (c Coin, found bool, err error)
}

// TxOutputsView is an optional View extension for Core's BIP30 check, which
// asks HaveCoin of every output of every transaction of a block: a view that
// keeps a transaction's outputs together answers for all of them at once.
//
// AnyUnspent reports whether any output of txid with an index below n is
// unspent (exactly: some Coin(txid:i) with i < n would be found).
type TxOutputsView interface {
	View
	AnyUnspent(txid wire.Hash, n uint32) (bool, error)
}

// TxCoinsView is an optional View extension for reading back every unspent
// output of one transaction at once (the lazy MuHash does, for the
// transactions created since it last materialised).
//
// AppendTxCoins appends txid's unspent outputs to dst in index order
// (exactly the coins Coin(txid:i) would find). Their scripts may alias
// memory the view reuses: they are valid until the next call to the view.
type TxCoinsView interface {
	View
	AppendTxCoins(dst []IndexedCoin, txid wire.Hash) ([]IndexedCoin, error)
}

// ConcurrentTxCoinsView is a TxCoinsView that several goroutines may read
// at once while nothing changes it (the lazy MuHash's read-back runs on
// every core). AppendTxCoinsArena is AppendTxCoins with the scripts
// decompressed into the caller's arena (appended, grown as needed, and
// returned), so that the coins stay valid while the caller keeps arena.
type ConcurrentTxCoinsView interface {
	TxCoinsView
	AppendTxCoinsArena(dst []IndexedCoin, arena []byte, txid wire.Hash) ([]IndexedCoin, []byte, error)
}

// Entry pairs an outpoint with its coin.
type Entry struct {
	Outpoint
	Coin
}

// TxidRunEnd returns the end of the run of entries that share list[i]'s
// txid (a transaction's outputs are consecutive in a Delta's lists).
func TxidRunEnd(list []Entry, i int) int {
	j := i + 1
	for j < len(list) && list[j].Hash == list[i].Hash {
		j++
	}
	return j
}

// Delta is the net effect of connecting one block on the coin set.
//
// Spent are coins that existed before the block and were spent by it, in the
// order the block's inputs spend them; they are the block's undo data.
// Overwritten are coins that existed before the block and were replaced by
// an identical outpoint (only the two BIP30-exception coinbases on mainnet);
// Core's undo data cannot restore them and neither can ours. Created are the
// coins the block adds that are still unspent at its end (coins created and
// spent inside the block appear in neither list).
type Delta struct {
	Spent       []Entry
	Overwritten []Entry
	Created     []Entry
	// Fresh: no txid of Created had an unspent output before the block,
	// as Core's BIP30 rule has it (checked, or after BIP34 implied), so a
	// store need not read what it holds for those txids before adding the
	// outputs; Core's AddCoins does not either. Only a connect sets it.
	Fresh bool
}

// Warmer is an optional View extension for views whose reads are bound by
// memory or disk latency: told what is about to be read, they look it up
// back to back, the misses overlapping, instead of one at a time between the
// reader's other work. Warm is handed a block before it is connected (the
// coins its inputs spend and, when own is set, its own txids, which Core's
// BIP30 check asks); WarmTxids a batch of transactions about to be read with
// TxCoinsView. Neither changes anything a read returns; either may do
// nothing. Warm may start reading from disk, overlapped, what the connect
// would otherwise read one record at a time, and return before those reads
// end: a read of the view then waits for the one it needs.
type Warmer interface {
	Warm(b *wire.Block, own bool)
	WarmTxids(txids []wire.Hash)
}
