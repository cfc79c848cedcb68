package kvstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"utxod/backends"
	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// The bulk loader and the snapshot-base record are the store side of
// loading a UTXO snapshot (snapshot.Load). They know the schema
// (schema.go) and nothing of the snapshot format.

// keySnapshot marks a chainstate loaded from a UTXO snapshot (SnapshotBase).
var keySnapshot = []byte("msnapshot")

// snapshotBaseVersion tags the keySnapshot value.
const snapshotBaseVersion = 1

// marshal is the keySnapshot value: version ‖ base hash ‖ height (uint32
// LE) ‖ flags (bit 0: headers).
func marshalSnapshotBase(b store.SnapshotBase) []byte {
	out := append([]byte{snapshotBaseVersion}, b.Hash[:]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(b.Height))
	var flags byte
	if b.Headers {
		flags |= 1
	}
	return append(out, flags)
}

func unmarshalSnapshotBase(v []byte) (*store.SnapshotBase, error) {
	if len(v) != 1+32+4+1 || v[0] != snapshotBaseVersion || v[37]&^1 != 0 {
		return nil, fmt.Errorf("kvstore: corrupt snapshot base record %x", v)
	}
	b := &store.SnapshotBase{Height: int32(binary.LittleEndian.Uint32(v[33:])), Headers: v[37]&1 != 0}
	copy(b.Hash[:], v[1:33])
	return b, nil
}

// loadSnapshotBase reads the snapshot-base record (nil when the chainstate
// was built block by block).
func loadSnapshotBase(kv backends.Reader) (*store.SnapshotBase, error) {
	v, err := kv.Get(keySnapshot)
	if errors.Is(err, backends.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kvstore: snapshot base: %w", err)
	}
	return unmarshalSnapshotBase(v)
}

// ErrStoreNotEmpty refuses a bulk load into a store that holds anything.
var ErrStoreNotEmpty = errors.New("kvstore: bulk load needs an empty store")

// bulkBatchBytes is the size of the unsynced batches a bulk load writes.
const bulkBatchBytes = 16 << 20

// BulkLoader fills a new, empty KV store with a whole coin set and then the
// state of its tip. Coins go in with AddTx, in large unsynced batches;
// Finish writes the block index, statistics, tip, genesis, schema and
// snapshot base in one synced batch, after which the store opens with New
// (and chainstate.New) like any other. Until Finish returns the store has
// coins but no tip, which New would take for a new store: the caller must
// build it where nothing opens it before (snapshot.Load uses a staging
// directory and renames it only when the load is verified). A BulkLoader is
// not safe for concurrent use; it does not close kv. Full batches are
// written by a goroutine of its own while the next one fills (two batches
// of memory at most).
type BulkLoader struct {
	kv      backends.KV
	b       *backends.Batch
	rec     []byte
	key     [33]byte
	last    wire.Hash
	started bool
	txids   uint64
	done    bool

	writes chan *backends.Batch // to the writer goroutine; nil once stopped
	free   chan *backends.Batch // written batches, for reuse
	werr   chan error           // the writer's first error
	wdone  chan struct{}        // closed when the writer has stopped
	failed error                // that error, once seen
}

// NewBulkLoader returns a loader into kv, which must hold no key.
func NewBulkLoader(kv backends.KV) (*BulkLoader, error) {
	it, err := kv.NewIterator(backends.Range{})
	if err != nil {
		return nil, err
	}
	nonEmpty := it.Next()
	err = errors.Join(it.Err(), it.Close())
	if err != nil {
		return nil, err
	}
	if nonEmpty {
		return nil, ErrStoreNotEmpty
	}
	l := &BulkLoader{kv: kv, b: newBulkBatch(), writes: make(chan *backends.Batch), free: make(chan *backends.Batch, 1),
		werr: make(chan error, 1), wdone: make(chan struct{})}
	go l.writer()
	return l, nil
}

func newBulkBatch() *backends.Batch {
	b := backends.NewBatch()
	b.Grow(bulkBatchBytes+64<<10, bulkBatchBytes/64)
	return b
}

// writer writes the batches it is handed until the channel closes. After
// a failed write it reports the error on werr and drops the rest.
func (l *BulkLoader) writer() {
	defer close(l.wdone)
	failed := false
	for b := range l.writes {
		if !failed {
			// Txids ascend and the store held nothing before them.
			if err := backends.WriteAppend(l.kv, b, backends.NoSync); err != nil {
				failed = true
				l.werr <- fmt.Errorf("kvstore: bulk load: %w", err)
			}
		}
		b.Reset()
		select {
		case l.free <- b:
		default:
		}
	}
}

// handOff passes the current batch to the writer and takes a fresh one; it
// returns the writer's error once a write has failed.
func (l *BulkLoader) handOff() error {
	select {
	case err := <-l.werr:
		l.failed = err
		_ = l.stopWriter()
		return err
	default:
	}
	if l.b.Len() == 0 {
		return nil
	}
	l.writes <- l.b
	select {
	case l.b = <-l.free:
	default:
		l.b = newBulkBatch()
	}
	return nil
}

// stopWriter waits for the writer to finish and returns its first error.
func (l *BulkLoader) stopWriter() error {
	if l.writes != nil {
		close(l.writes)
		<-l.wdone
		l.writes = nil
		select {
		case err := <-l.werr:
			l.failed = err
		default:
		}
	}
	return l.failed
}

// Abort stops a load that failed elsewhere (the store is to be discarded):
// it waits for the batch being written. Call it, or Finish, before closing
// kv.
func (l *BulkLoader) Abort() { _ = l.stopWriter(); l.done = true }

// AddTx stores the unspent outputs of txid: non-empty, strictly increasing
// by vout, of one height and coinbase flag (utxo.EncodeRecord's rules,
// whose ErrRecordCoin it returns otherwise). Txids must come in strictly
// ascending order of their raw bytes.
func (l *BulkLoader) AddTx(txid wire.Hash, outs []utxo.IndexedCoin) error {
	if l.done {
		return errors.New("kvstore: bulk load already finished")
	}
	if l.started && bytes.Compare(txid[:], l.last[:]) <= 0 {
		return fmt.Errorf("kvstore: bulk load: txid %s after %s", txid, l.last)
	}
	r, err := utxo.EncodeRecord(l.rec[:0], outs)
	if err != nil {
		return fmt.Errorf("kvstore: bulk load: coins of %s: %w", txid, err)
	}
	rec := r.Bytes()
	if len(rec) > entryMaxLen {
		return fmt.Errorf("kvstore: bulk load: coins of %s: record of %d bytes", txid, len(rec))
	}
	l.rec = rec
	l.last, l.started = txid, true
	l.key[0] = prefixCoins
	copy(l.key[1:], txid[:])
	l.b.Put(l.key[:], rec)
	l.txids++
	if l.b.Size() >= bulkBatchBytes {
		return l.handOff()
	}
	return nil
}

// Txids is the number of records written so far.
func (l *BulkLoader) Txids() uint64 { return l.txids }

// BulkTip is the state Finish records with the coins.
type BulkTip struct {
	// Genesis is the network's genesis block hash (the store's network).
	Genesis wire.Hash
	// Stats are the statistics of the loaded set; BestBlock and Height
	// name the tip (the snapshot base).
	Stats *store.Stats
	// Index holds the block-index entries to store: with the headers, the
	// chain from genesis (or its child) to the tip; empty without them.
	Index []validate.IndexEntry
	// Base is the snapshot-base record.
	Base store.SnapshotBase
	// Extra, if set, is called once the coins are written and before the
	// final batch: it may write keys of its own to kv (a secondary index's
	// rows, which sort before the coins) and add puts to final, the synced
	// batch that records the tip.
	Extra func(kv backends.KV, final *backends.Batch) error
}

// Finish writes the remaining coins, syncs, and records t in one synced
// batch. The statistics must describe the base, and the index must end at
// it when the base says the headers are present.
func (l *BulkLoader) Finish(t BulkTip) error {
	if l.done {
		return errors.New("kvstore: bulk load already finished")
	}
	if t.Stats == nil || t.Stats.BestBlock != t.Base.Hash || t.Stats.Height != uint32(t.Base.Height) {
		return errors.New("kvstore: bulk load: statistics do not describe the snapshot base")
	}
	switch n := len(t.Index); {
	case !t.Base.Headers && n > 0:
		return errors.New("kvstore: bulk load: index entries without the headers flag")
	case t.Base.Headers && n == 0 && t.Base.Hash != t.Genesis:
		return errors.New("kvstore: bulk load: no index entries for a base other than genesis")
	case n > 0 && t.Index[n-1].Header.BlockHash() != t.Base.Hash:
		return errors.New("kvstore: bulk load: the index does not end at the snapshot base")
	}
	if err := l.handOff(); err != nil {
		l.done = true
		return err
	}
	if err := l.stopWriter(); err != nil {
		l.done = true
		return err
	}
	stats, err := t.Stats.MarshalBinary()
	if err != nil {
		return err
	}
	b := backends.NewBatch()
	if t.Extra != nil {
		if err := t.Extra(l.kv, b); err != nil {
			l.done = true
			return fmt.Errorf("kvstore: bulk load: %w", err)
		}
	}
	if err := l.writeIndex(t.Index); err != nil {
		l.done = true
		return err
	}
	b.Put(keyGenesis, bytes.Clone(t.Genesis[:]))
	b.Put(keySchema, binary.LittleEndian.AppendUint32(nil, schemaVersion))
	b.Put(keyStats, stats)
	b.Put(keySnapshot, marshalSnapshotBase(t.Base))
	b.Put(keyTip, bytes.Clone(t.Base.Hash[:]))
	if err := l.kv.Write(b, backends.Sync); err != nil {
		return fmt.Errorf("kvstore: bulk load: %w", err)
	}
	l.done = true
	return nil
}

// writeIndex writes the block-index entries in key (hash) order, in
// appended batches of bulkBatchBytes: their keys sort after the coins' and
// a secondary index's, so the stores ingest them as table files instead of
// taking one batch of the whole chain (some 100 MiB at mainnet's height)
// through their memtable.
func (l *BulkLoader) writeIndex(entries []validate.IndexEntry) error {
	type keyed struct {
		hash wire.Hash
		i    int32
	}
	order := make([]keyed, len(entries))
	for i := range entries {
		order[i] = keyed{entries[i].Header.BlockHash(), int32(i)}
	}
	slices.SortFunc(order, func(a, b keyed) int { return bytes.Compare(a.hash[:], b.hash[:]) })
	b := l.b
	b.Reset()
	var key [33]byte
	key[0] = prefixIndex
	var val []byte
	for _, o := range order {
		copy(key[1:], o.hash[:])
		val = encodeIndexEntry(val[:0], &entries[o.i])
		b.Put(key[:], val)
		if b.Size() >= bulkBatchBytes {
			if err := backends.WriteAppend(l.kv, b, backends.NoSync); err != nil {
				return fmt.Errorf("kvstore: bulk load: block index: %w", err)
			}
			b.Reset()
		}
	}
	if b.Len() > 0 {
		if err := backends.WriteAppend(l.kv, b, backends.NoSync); err != nil {
			return fmt.Errorf("kvstore: bulk load: block index: %w", err)
		}
	}
	b.Reset()
	return nil
}

// ScanRecords calls fn with every txid's v5 record in ascending txid order
// (snapshot.RecordSource); rec is the iterator's, valid only during fn.
func (k *scanner) ScanRecords(fn func(txid wire.Hash, rec []byte) error) error {
	return k.scanRecords(backends.PrefixRange([]byte{prefixCoins}), fn)
}

// ScanRecordsRange is ScanRecords over the txids whose first two bytes are
// in [lo, hi) (snapshot.RangeRecordSource); safe from several goroutines,
// as every iterator comes from the one snapshot.
func (k *scanner) ScanRecordsRange(lo, hi int, fn func(txid wire.Hash, rec []byte) error) error {
	return k.scanRecords(coinRange(lo, hi), fn)
}

func (k *scanner) scanRecords(r backends.Range, fn func(txid wire.Hash, rec []byte) error) error {
	it, err := k.snap.NewIterator(r)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		key := it.Key()
		if len(key) != 33 {
			return fmt.Errorf("kvstore: bad coins key %x", key)
		}
		if err := fn(wire.Hash(key[1:]), it.Value()); err != nil {
			return err
		}
	}
	return it.Err()
}
