// Package scripthash answers "which unspent outputs pay this script?" by
// Esplora's scripthash: SHA-256 of the scriptPubKey, in natural byte order
// (electrs' compute_script_hash; the reverse of Electrum's).
//
// Index is the contract: one Lookup answers many queries against one state
// of the coin set. A store keeps a scripthash index written in the same
// batch as its coins and implements Index over it; Scanner implements it
// without an index, by scanning the coin set (CoinSource) once for every
// batch of concurrent lookups. Package indextest is the conformance suite
// both run.
//
// Rows come in index order: by Position, (height, txid in raw byte order,
// vout) ascending. A page ends at a Position and the next page starts after
// it, so paging is stable while blocks arrive: an output unspent for the
// whole walk is returned exactly once, and outputs created meanwhile (at
// higher heights) come at the end.
package scripthash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"

	"utxod/utxo"
	"utxod/wire"
)

// Hash is a scripthash: SHA-256 of an output script.
type Hash [32]byte

// Of returns the scripthash of script.
func Of(script []byte) Hash { return sha256.Sum256(script) }

// String is the hex of h in natural byte order (Esplora's /scripthash/:hash).
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ErrBadHash reports a scripthash that is not 64 hex digits.
var ErrBadHash = errors.New("scripthash: want 64 hex digits")

// Parse reads 64 hex digits (either case) in natural byte order.
func Parse(s string) (Hash, error) {
	var h Hash
	if len(s) != 64 {
		return h, ErrBadHash
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, ErrBadHash
	}
	return h, nil
}

// Position is a row's place in index order.
type Position struct {
	Height uint32
	Txid   wire.Hash // internal (raw) byte order
	Vout   uint32
}

// Less orders positions by height, then txid bytes, then vout.
func (p Position) Less(q Position) bool {
	if p.Height != q.Height {
		return p.Height < q.Height
	}
	if c := bytes.Compare(p.Txid[:], q.Txid[:]); c != 0 {
		return c < 0
	}
	return p.Vout < q.Vout
}

// UTXO is one unspent output of a scripthash.
type UTXO struct {
	Outpoint utxo.Outpoint
	Value    int64 // satoshis
	Height   uint32
	Coinbase bool
}

// Position is u's place in index order.
func (u UTXO) Position() Position {
	return Position{Height: u.Height, Txid: u.Outpoint.Hash, Vout: u.Outpoint.Index}
}

// NoLimit asks for every row.
const NoLimit = math.MaxInt

// Query asks for the unspent outputs of one scripthash.
type Query struct {
	Hash Hash
	// Script is the output script, if the caller knows it (an address or a
	// descriptor). It must hash to Hash. A scan then matches script bytes
	// instead of hashing every coin; an index may ignore it.
	Script []byte
	// After, if set, skips rows up to and including this position.
	After *Position
	// Limit is the most rows to return (0: none, NoLimit: all).
	Limit int
	// Summary asks for Count and Sum over all the scripthash's outputs.
	Summary bool
}

// Answer answers one Query.
type Answer struct {
	// UTXOs are the first rows after Query.After in index order, at most
	// Query.Limit of them.
	UTXOs []UTXO
	// More reports rows after the last one returned (or, with Limit 0,
	// any row after Query.After).
	More bool
	// Count and Sum cover every output of the scripthash, regardless of
	// After and Limit; set only when Query.Summary.
	Count uint64
	Sum   int64
}

// Tip is the state of the coin set a Result describes.
type Tip struct {
	Height uint32
	Hash   wire.Hash // the block at Height
	TxOuts uint64    // the number of unspent outputs in the set
}

// Result answers a batch of queries, all against the coin set at Tip.
type Result struct {
	Tip     Tip
	Answers []Answer // one per query, in order
	// Scanned is the number of coins a scan visited (0 for an index).
	Scanned uint64
}

// Errors of Lookup.
var (
	// ErrNoIndex: the datadir keeps no scripthash index (a store returns
	// it; callers fall back to a Scanner or refuse).
	ErrNoIndex = errors.New("scripthash: no scripthash index")
	// ErrBusy: too many queries wait for a scan.
	ErrBusy = errors.New("scripthash: too many queries waiting for a scan")
	// ErrQuery: a query is inconsistent (Script does not hash to Hash, or
	// a negative Limit).
	ErrQuery = errors.New("scripthash: bad query")
)

// Index answers scripthash queries.
//
// Lookup answers every query of qs against one consistent state of the
// coin set, reported as Result.Tip: an index row exists for exactly the
// unspent outputs of that state. It returns ErrNoIndex when there is no
// index, ctx.Err() when ctx ends first, ErrQuery for an inconsistent query.
// Lookup is safe for concurrent use. The Result and its slices belong to
// the caller.
type Index interface {
	Lookup(ctx context.Context, qs []Query) (Result, error)
}

// CoinSource is a coin set that can be walked (chainstate.Chainstate).
//
// ScanCoins calls fn for every unspent output of one consistent snapshot
// of the set, in txid (raw byte) order, and returns the statistics of that
// snapshot even when fn stops the walk with an error, which ScanCoins then
// returns. The Coin's Script is valid only during the call to fn.
type CoinSource interface {
	ScanCoins(fn func(utxo.Entry) error) (utxo.Stats, error)
}

// ParallelCoinSource is a CoinSource that can also walk its snapshot on
// several goroutines at once (chainstate.Chainstate, over
// store.ParallelScanner).
//
// ScanCoinsParallel is ScanCoins with fn called from up to workers
// goroutines at once; worker, in [0, workers), names the calling goroutine.
// The txid space is cut into contiguous parts, each walked in txid order by
// one worker: worker w starts with the w-th part, and the rest are handed
// out in ascending txid order as workers free up. The first error from fn
// stops every worker and is returned.
type ParallelCoinSource interface {
	CoinSource
	ScanCoinsParallel(workers int, fn func(worker int, e utxo.Entry) error) (utxo.Stats, error)
}

func checkQueries(qs []Query) error {
	for i := range qs {
		q := &qs[i]
		if q.Limit < 0 {
			return ErrQuery
		}
		if q.Script != nil && Of(q.Script) != q.Hash {
			return ErrQuery
		}
	}
	return nil
}
