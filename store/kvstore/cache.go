package kvstore

import (
	"errors"
	"fmt"

	"utxod/backends"
	"utxod/utxo"
	"utxod/wire"
)

// cacheEntry is one cached txid packed in 64 bits: bit 0 dirty (the store
// must be updated at the next flush), bit 1 on disk (the store holds a
// record for the txid as of the last load or flush), bits 2–63 the
// utxo.RecordRef of its record in the arena (length 0: no unspent output).
// With records out of the table and pointers out of both, the garbage
// collector never scans the cache and no record is a heap object of its own.
type cacheEntry uint64

const (
	entryDirty    cacheEntry = 1 << 0
	entryOnDisk   cacheEntry = 1 << 1
	entryFlags               = entryDirty | entryOnDisk
	entryRefShift            = 2
	entryMaxLen              = utxo.MaxArenaRecordLen
)

func (e cacheEntry) ref() utxo.RecordRef { return utxo.RecordRef(e >> entryRefShift) }
func (e cacheEntry) len() int            { return e.ref().Len() }
func (e cacheEntry) flags() cacheEntry   { return e & entryFlags }

func packEntry(ref utxo.RecordRef, flags cacheEntry) cacheEntry {
	return cacheEntry(ref)<<entryRefShift | flags
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
	// fresh: the txids being added to have no unspent output in the store
	// (utxo.Delta.Fresh), so a miss is not read.
	fresh bool
	// dirtyN is the number of dirty entries: the coin keys the next flush
	// writes.
	dirtyN int
	// txs is the change in the number of txids with an unspent output
	// made by updates since it was last zeroed (Store.ConnectCounting).
	txs int64
	// arena holds the cached records (utxo.RecordArena: a record is never
	// modified in place, so coin scripts aliasing one stay valid).
	arena   utxo.RecordArena
	scratch [2][]byte
	outs    []utxo.IndexedCoin // addRun's scratch
	// txScripts holds the scripts AppendTxCoins decompressed, until its
	// next call.
	txScripts []byte
	key       [33]byte
	// warmSink keeps warm's reads from being optimised away.
	warmSink uint64
	// fly holds prefetch's reads in flight.
	fly inflight
}

func newCoinCache(kv backends.KV) coinCache {
	return coinCache{kv: kv, entries: newTxidTable(), arena: utxo.NewRecordArena()}
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
	if c.complete || c.fresh {
		// Authoritative (or, fresh, a new transaction's txid), so not
		// remembered: an insert here would only be overwritten by the
		// setRecord that usually follows (a BIP30 check, then the new
		// transaction's outputs).
		return 0, nil
	}
	if e, ok, err := c.take(txid); ok || err != nil {
		return e, err
	}
	v, err := c.kv.Get(c.coinKey(txid))
	return c.install(txid, v, err)
}

// install caches what the store's Get of txid's key returned (an absent
// key as an entry without output, so the store is not asked again) and
// returns the entry; on an error nothing is cached.
func (c *coinCache) install(txid wire.Hash, v []byte, err error) (cacheEntry, error) {
	var e cacheEntry
	switch {
	case errors.Is(err, backends.ErrNotFound):
	case err != nil:
		return 0, fmt.Errorf("kvstore: read coins of %s: %w", txid, err)
	case len(v) > entryMaxLen:
		return 0, fmt.Errorf("kvstore: coins of %s: record of %d bytes", txid, len(v))
	case len(v) > 0:
		// Parsed once here: the cache holds only utxo.Records (this one
		// and those it builds), whose accessors cannot fail.
		rec, err := utxo.ParseRecord(v)
		if err != nil {
			return 0, fmt.Errorf("kvstore: coins of %s: %w", txid, err)
		}
		e = packEntry(c.arena.Put(rec), entryOnDisk)
	}
	c.entries.set(&txid, e)
	return e, nil
}

// setRecord replaces txid's cached record (the zero Record: no unspent
// output left) and marks it dirty. A txid that never reached the store and
// has no output left is simply forgotten (nothing to write).
func (c *coinCache) setRecord(txid wire.Hash, e cacheEntry, rec utxo.Record) error {
	n := len(rec.Bytes())
	if n > entryMaxLen {
		return fmt.Errorf("kvstore: coins of %s: record of %d bytes", txid, n)
	}
	c.arena.Release(e.ref())
	wasDirty := e&entryDirty != 0
	switch {
	case n == 0 && e&entryOnDisk == 0:
		c.entries.delete(&txid)
		if wasDirty {
			c.dirtyN--
		}
		return nil
	case n == 0:
		c.entries.set(&txid, packEntry(0, entryOnDisk|entryDirty))
	default:
		c.entries.set(&txid, packEntry(c.arena.Put(rec), e&entryOnDisk|entryDirty))
	}
	if !wasDirty {
		c.dirtyN++
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
	if c.arena.Dead() < compactMinDead || 4*c.arena.Dead() < c.arena.Used() {
		return
	}
	a := utxo.NewRecordArena()
	c.entries.update(func(_ *wire.Hash, e cacheEntry) (cacheEntry, bool) {
		if e.len() > 0 {
			e = packEntry(a.Put(c.arena.Get(e.ref())), e.flags())
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
	coin, found := c.arena.Get(e.ref()).Get(op.Index)
	return coin, found, nil
}

// record returns txid's record (the zero Record when it has no unspent
// output). It aliases the arena, where a record is never modified in place.
func (c *coinCache) record(txid wire.Hash) (utxo.Record, error) {
	e, err := c.load(txid)
	if err != nil {
		return utxo.Record{}, err
	}
	return c.arena.Get(e.ref()), nil
}

// liveOutputs is the number of unspent outputs of txid.
func (c *coinCache) liveOutputs(txid wire.Hash) (int, error) {
	rec, err := c.record(txid)
	return rec.Len(), err
}

// remove deletes the outputs of list.
func (c *coinCache) remove(list []utxo.Entry) error {
	return c.update(list, func(dst []byte, rec utxo.Record, x utxo.Entry) (utxo.Record, error) {
		out, found := rec.Without(dst, x.Index)
		if !found {
			return utxo.Record{}, fmt.Errorf("%w: %s:%d", utxo.ErrCoinNotFound, x.Hash, x.Index)
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
	return c.update(list, func(dst []byte, rec utxo.Record, x utxo.Entry) (utxo.Record, error) {
		out, err := rec.With(dst, x.Index, x.Coin)
		if err != nil {
			return utxo.Record{}, fmt.Errorf("kvstore: add %s:%d: %w", x.Hash, x.Index, err)
		}
		return out, nil
	})
}

// update applies op to every entry of list. Consecutive entries of one txid
// are applied to scratch copies of its record (op appends the new record to
// dst) and the result is stored once per run.
func (c *coinCache) update(list []utxo.Entry, op func(dst []byte, rec utxo.Record, x utxo.Entry) (utxo.Record, error)) error {
	for i := 0; i < len(list); {
		j := utxo.TxidRunEnd(list, i)
		h := list[i].Hash
		e, err := c.load(h)
		if err != nil {
			return err
		}
		rec := c.arena.Get(e.ref())
		for k, x := range list[i:j] {
			out, err := op(c.scratch[k&1][:0], rec, x)
			if err != nil {
				return err
			}
			if b := out.Bytes(); b != nil {
				c.scratch[k&1] = b
			}
			rec = out
		}
		if err := c.setRecord(h, e, rec); err != nil {
			return err
		}
		// A record is empty exactly when the txid has no unspent output.
		if before, after := e.len() > 0, rec.Len() > 0; before != after {
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
	return c.entries.bytes() + c.arena.Used()
}

// dirty returns the txids a flush must write, the order that puts them in
// key order (txids[order[0]] first), and the bytes of their keys and
// records.
func (c *coinCache) dirty() (txids []wire.Hash, order []uint64, size int) {
	txids = make([]wire.Hash, 0, c.dirtyN)
	for txid, e := range c.entries.all() {
		if e&entryDirty != 0 {
			txids = append(txids, txid)
			size += 33 + e.len()
		}
	}
	return txids, keyOrder(txids), size
}

// retire runs after a flush made every dirty record durable: over budget
// the whole cache goes; otherwise dirty entries become clean and entries
// without outputs (spent, or absent when looked up) go, since the store now
// answers for them.
func (c *coinCache) retire(budget int64) {
	c.dirtyN = 0
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
	c.settle()
	c.entries = newTxidTable()
	c.arena = utxo.NewRecordArena()
	c.complete = false
	c.dirtyN = 0
}

// warm readies the lookups of b's connect: first the home slots of the
// txids its inputs spend from and (own) of its own txids (Core's BIP30
// check asks for them), one independent load each so that their cache misses
// overlap; then, with the slots cached, the first line of each record
// found. It reads nothing from the store and changes nothing.
func (c *coinCache) warm(b *wire.Block, own bool) {
	var acc uint64
	for i := range b.Txs {
		tx := &b.Txs[i]
		if i > 0 {
			for j := range tx.Inputs {
				acc += c.entries.peek(&tx.Inputs[j].PrevHash)
			}
		}
		if own {
			acc += c.entries.peek(&tx.TxID)
		}
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
		return uint64(c.arena.Get(e.ref()).Bytes()[0])
	}
	return 0
}
