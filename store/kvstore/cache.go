package kvstore

import (
	"bytes"
	"errors"
	"fmt"

	"utxod/backends"
	"utxod/utxo"
	"utxod/wire"
)

// cacheEntry is one cached txid packed in 64 bits: bit 0 dirty (the store
// must be updated at the next flush), bit 1 on disk (the store holds a
// record for the txid as of the last load or flush), bits 2–23 the record
// length (0: no unspent output), bits 24–63 its location in the arena.
// With records out of the table and pointers out of both, the garbage
// collector never scans the cache and no record is a heap object of its own.
type cacheEntry uint64

const (
	entryDirty    cacheEntry = 1 << 0
	entryOnDisk   cacheEntry = 1 << 1
	entryFlags               = entryDirty | entryOnDisk
	entryLenShift            = 2
	entryMaxLen              = 1<<22 - 1
	entryLocShift            = 24
)

func (e cacheEntry) len() int          { return int(e>>entryLenShift) & entryMaxLen }
func (e cacheEntry) loc() uint64       { return uint64(e) >> entryLocShift }
func (e cacheEntry) flags() cacheEntry { return e & entryFlags }

func packEntry(loc uint64, n int, flags cacheEntry) cacheEntry {
	return cacheEntry(loc)<<entryLocShift | cacheEntry(n)<<entryLenShift | flags
}

// arena holds the cached records, append-only: a record is never modified
// in place (updates append a new copy and count the old one as dead), so
// slices handed out (coin scripts alias their record) stay valid; compact
// copies the live records into fresh chunks and drops the old ones, which
// the garbage collector frees once nothing aliases them.
type arena struct {
	chunks [][]byte
	cur    int   // index of the chunk being filled; -1 before the first
	used   int64 // bytes consumed in chunks (live + dead + skipped tails)
	dead   int64 // bytes of replaced records
}

const (
	arenaChunk    = 1 << 20 // location = chunk index << 20 | offset
	arenaOffBits  = 20
	arenaBigBytes = arenaChunk / 4 // larger records get a chunk of their own
)

func newArena() arena { return arena{cur: -1} }

// put copies b into the arena and returns its location.
func (a *arena) put(b []byte) uint64 {
	n := len(b)
	if n > arenaBigBytes {
		a.chunks = append(a.chunks, bytes.Clone(b))
		a.used += int64(n)
		return uint64(len(a.chunks)-1) << arenaOffBits
	}
	if a.cur < 0 || len(a.chunks[a.cur])+n > arenaChunk {
		if a.cur >= 0 {
			a.used += int64(arenaChunk - len(a.chunks[a.cur]))
		}
		a.chunks = append(a.chunks, make([]byte, 0, arenaChunk))
		a.cur = len(a.chunks) - 1
	}
	c := a.chunks[a.cur]
	off := len(c)
	a.chunks[a.cur] = append(c, b...)
	a.used += int64(n)
	return uint64(a.cur)<<arenaOffBits | uint64(off)
}

// get returns the record of e (nil when it has none), capacity-limited so
// that an append by the caller cannot overwrite a neighbour.
func (a *arena) get(e cacheEntry) []byte {
	n := e.len()
	if n == 0 {
		return nil
	}
	loc := e.loc()
	off := int(loc & (arenaChunk - 1))
	c := a.chunks[loc>>arenaOffBits]
	return c[off : off+n : off+n]
}

// coinCache is the write-back cache of per-transaction v5 records over the
// store's 'c' keys. Entries are dirty until a flush writes them; retire
// then drops or cleans them.
type coinCache struct {
	kv      backends.KV
	entries txidTable
	// complete: every coin record of the store is in entries (the store
	// had none when the cache started and nothing was evicted since), so a
	// miss means the txid has no unspent output and the store is not read,
	// as Core's cache does not read the database for outputs it created
	// (FRESH entries, coins.cpp). Set by Options.TrustCacheMisses; a reset
	// clears it for good.
	complete bool
	// txs is the change in the number of txids with an unspent output
	// made by updates since it was last zeroed (Store.ConnectCounting).
	txs     int64
	arena   arena
	scratch [2][]byte
	outs    []utxo.IndexedCoin // addRun's scratch
	// txScripts holds the scripts appendTxCoins decompressed, until its
	// next call.
	txScripts []byte
	key       [33]byte
	// warmSink keeps warm's reads from being optimised away.
	warmSink uint64
}

func newCoinCache(kv backends.KV) coinCache {
	return coinCache{kv: kv, entries: newTxidTable(), arena: newArena()}
}

// coinKey returns txid's key in a buffer reused by the next call.
func (c *coinCache) coinKey(txid wire.Hash) []byte {
	c.key[0] = prefixCoins
	copy(c.key[1:], txid[:])
	return c.key[:]
}

// load returns the cache entry of txid, reading it from the store on a miss.
func (c *coinCache) load(txid wire.Hash) (cacheEntry, error) {
	if e, ok := c.entries.get(&txid); ok {
		return e, nil
	}
	if c.complete {
		// Authoritative, so not remembered: an insert here would only be
		// overwritten by the setRecord that usually follows (a BIP30
		// check, then the new transaction's outputs).
		return 0, nil
	}
	v, err := c.kv.Get(c.coinKey(txid))
	var e cacheEntry
	switch {
	case errors.Is(err, backends.ErrNotFound):
	case err != nil:
		return 0, fmt.Errorf("kvstore: read coins of %s: %w", txid, err)
	case len(v) > entryMaxLen:
		return 0, fmt.Errorf("kvstore: coins of %s: record of %d bytes", txid, len(v))
	case len(v) > 0:
		// Checked once here: the cache then holds only canonical records
		// (this one and those it encodes) and reads them with the
		// utxo.ValidRecord* fast paths.
		if err := utxo.ValidateRecord(v); err != nil {
			return 0, fmt.Errorf("kvstore: coins of %s: %w", txid, err)
		}
		e = packEntry(c.arena.put(v), len(v), entryOnDisk)
	}
	c.entries.set(&txid, e)
	return e, nil
}

// setRecord replaces txid's cached record (rec empty: no unspent output
// left) and marks it dirty. A txid that never reached the store and has no
// output left is simply forgotten (nothing to write).
func (c *coinCache) setRecord(txid wire.Hash, e cacheEntry, rec []byte) error {
	c.arena.dead += int64(e.len())
	switch {
	case len(rec) == 0 && e&entryOnDisk == 0:
		c.entries.delete(&txid)
	case len(rec) == 0:
		c.entries.set(&txid, packEntry(0, 0, entryOnDisk|entryDirty))
	case len(rec) > entryMaxLen:
		return fmt.Errorf("kvstore: coins of %s: record of %d bytes", txid, len(rec))
	default:
		c.entries.set(&txid, packEntry(c.arena.put(rec), len(rec), e&entryOnDisk|entryDirty))
	}
	return nil
}

// compactMinDead is the least dead arena bytes worth a compaction (a
// variable for tests).
var compactMinDead int64 = 1 << 20

// maybeCompact copies the live records into fresh chunks when replaced
// records take a quarter of the arena: the garbage stays below a third of
// the live bytes, and each compaction copies at most three live bytes per
// dead one.
func (c *coinCache) maybeCompact() {
	if c.arena.dead < compactMinDead || 4*c.arena.dead < c.arena.used {
		return
	}
	a := newArena()
	c.entries.update(func(_ *wire.Hash, e cacheEntry) (cacheEntry, bool) {
		if n := e.len(); n > 0 {
			e = packEntry(a.put(c.arena.get(e)), n, e.flags())
		}
		return e, true
	})
	c.arena = a
}

// coin returns the unspent output op; its script aliases the cached
// record, which is never modified in place.
func (c *coinCache) coin(op utxo.Outpoint) (utxo.Coin, bool, error) {
	e, err := c.load(op.Hash)
	if err != nil || e.len() == 0 {
		return utxo.Coin{}, false, err
	}
	coin, found, err := utxo.ValidRecordGet(c.arena.get(e), op.Index)
	if err != nil {
		return utxo.Coin{}, false, fmt.Errorf("kvstore: coins of %s: %w", op.Hash, err)
	}
	return coin, found, nil
}

// anyUnspent reports whether txid has an unspent output below index n.
func (c *coinCache) anyUnspent(txid wire.Hash, n uint32) (bool, error) {
	e, err := c.load(txid)
	if err != nil || e.len() == 0 {
		return false, err
	}
	first, err := utxo.ValidRecordFirstIndex(c.arena.get(e))
	if err != nil {
		return false, fmt.Errorf("kvstore: coins of %s: %w", txid, err)
	}
	return first < n, nil
}

// appendTxCoins appends the unspent outputs of txid to dst; decompressed
// scripts go to a buffer the next call reuses.
func (c *coinCache) appendTxCoins(dst []utxo.IndexedCoin, txid wire.Hash) ([]utxo.IndexedCoin, error) {
	rec, err := c.record(txid)
	if err != nil || rec == nil {
		return dst, err
	}
	dst, c.txScripts, err = decodeTxCoins(rec, dst, c.txScripts[:0], txid)
	return dst, err
}

// decodeTxCoins appends the coins of txid's record rec to dst, their
// decompressed scripts to arena.
func decodeTxCoins(rec []byte, dst []utxo.IndexedCoin, arena []byte, txid wire.Hash) ([]utxo.IndexedCoin, []byte, error) {
	dst, arena, err := utxo.DecodeRecordArena(rec, dst, arena)
	if err != nil {
		return dst, arena, fmt.Errorf("kvstore: coins of %s: %w", txid, err)
	}
	return dst, arena, nil
}

// record returns txid's record (nil when it has no unspent output). It
// aliases the arena, where a record is never modified in place.
func (c *coinCache) record(txid wire.Hash) ([]byte, error) {
	e, err := c.load(txid)
	if err != nil || e.len() == 0 {
		return nil, err
	}
	return c.arena.get(e), nil
}

// liveOutputs is the number of unspent outputs of txid.
func (c *coinCache) liveOutputs(txid wire.Hash) (int, error) {
	e, err := c.load(txid)
	if err != nil || e.len() == 0 {
		return 0, err
	}
	return utxo.ValidRecordLen(c.arena.get(e))
}

// remove deletes the outputs of list.
func (c *coinCache) remove(list []utxo.Entry) error {
	return c.update(list, func(dst, rec []byte, x utxo.Entry) ([]byte, error) {
		if len(rec) == 0 {
			return nil, fmt.Errorf("%w: %s:%d", utxo.ErrCoinNotFound, x.Hash, x.Index)
		}
		out, found, err := utxo.ValidRecordDelete(dst, rec, x.Index)
		if err != nil {
			return nil, fmt.Errorf("kvstore: coins of %s: %w", x.Hash, err)
		}
		if !found {
			return nil, fmt.Errorf("%w: %s:%d", utxo.ErrCoinNotFound, x.Hash, x.Index)
		}
		return out, nil
	})
}

// add inserts the outputs of list.
func (c *coinCache) add(list []utxo.Entry) error {
	for i := 0; i < len(list); {
		j := utxo.TxidRunEnd(list, i)
		if err := c.addRun(list[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// addOne inserts the outputs of list one at a time.
func (c *coinCache) addOne(list []utxo.Entry) error {
	return c.update(list, func(dst, rec []byte, x utxo.Entry) ([]byte, error) {
		out, err := utxo.RecordAdd(dst, rec, x.Index, x.Coin)
		if err != nil {
			return nil, fmt.Errorf("kvstore: add %s:%d: %w", x.Hash, x.Index, err)
		}
		return out, nil
	})
}

// update applies op to every entry of list. Consecutive entries of one txid
// are applied to scratch copies of its record (op appends the new record to
// dst) and the result is stored once per run.
func (c *coinCache) update(list []utxo.Entry, op func(dst, rec []byte, x utxo.Entry) ([]byte, error)) error {
	for i := 0; i < len(list); {
		j := utxo.TxidRunEnd(list, i)
		h := list[i].Hash
		e, err := c.load(h)
		if err != nil {
			return err
		}
		rec := c.arena.get(e)
		for k, x := range list[i:j] {
			out, err := op(c.scratch[k&1][:0], rec, x)
			if err != nil {
				return err
			}
			c.scratch[k&1] = out
			rec = out
		}
		if err := c.setRecord(h, e, rec); err != nil {
			return err
		}
		// A record is empty exactly when the txid has no unspent output.
		if before, after := e.len() > 0, len(rec) > 0; before != after {
			if after {
				c.txs++
			} else {
				c.txs--
			}
		}
		i = j
	}
	return nil
}

// bytes is the cache's estimated size: the table's slots plus the arena's
// consumed bytes (replaced records included until a compaction).
func (c *coinCache) bytes() int64 {
	return c.entries.bytes() + c.arena.used
}

// dirty returns the txids a flush must write, the order that puts them in
// key order (txids[order[0]] first), and the bytes of their keys and
// records.
func (c *coinCache) dirty() (txids []wire.Hash, order []uint64, size int) {
	n := 0
	for _, e := range c.entries.all() {
		if e&entryDirty != 0 {
			size += 33 + e.len()
			n++
		}
	}
	txids = make([]wire.Hash, 0, n)
	for txid, e := range c.entries.all() {
		if e&entryDirty != 0 {
			txids = append(txids, txid)
		}
	}
	return txids, keyOrder(txids), size
}

// retire runs after a flush made every dirty record durable: over budget
// the whole cache goes; otherwise dirty entries become clean and entries
// without outputs (spent, or absent when looked up) go, since the store now
// answers for them.
func (c *coinCache) retire(budget int64) {
	if c.bytes() > budget {
		c.reset()
		return
	}
	c.entries.update(func(_ *wire.Hash, e cacheEntry) (cacheEntry, bool) {
		if e.len() == 0 {
			return 0, false
		}
		return e&^entryDirty | entryOnDisk, true
	})
	c.maybeCompact()
}

// reset drops every entry (a new table: the old one's memory goes).
func (c *coinCache) reset() {
	c.entries = newTxidTable()
	c.arena = newArena()
	c.complete = false
}

// warm readies the lookups of b's connect: first the home slots of the
// txids its inputs spend from and of its own txids (Core's BIP30 check asks
// for them), one independent load each so that their cache misses
// overlap; then, with the slots cached, the first line of each record
// found. It reads nothing from the store and changes nothing.
func (c *coinCache) warm(b *wire.Block) {
	var acc uint64
	for i := range b.Txs {
		tx := &b.Txs[i]
		if i > 0 {
			for j := range tx.Inputs {
				acc += c.entries.peek(&tx.Inputs[j].PrevHash)
			}
		}
		acc += c.entries.peek(&tx.TxID)
	}
	for i := 1; i < len(b.Txs); i++ {
		tx := &b.Txs[i]
		for j := range tx.Inputs {
			acc += c.recordByte(&tx.Inputs[j].PrevHash)
		}
	}
	c.warmSink += acc
}

// warmTxids is warm for a list of txids.
func (c *coinCache) warmTxids(txids []wire.Hash) {
	var acc uint64
	for i := range txids {
		acc += c.entries.peek(&txids[i])
	}
	for i := range txids {
		acc += c.recordByte(&txids[i])
	}
	c.warmSink += acc
}

// recordByte returns the first byte of txid's cached record (0 when there
// is none): the load that brings the record's first line in.
func (c *coinCache) recordByte(txid *wire.Hash) uint64 {
	if e, ok := c.entries.get(txid); ok && e.len() > 0 {
		return uint64(c.arena.get(e)[0])
	}
	return 0
}
