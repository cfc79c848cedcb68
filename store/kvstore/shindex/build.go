package shindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"utxod/backends"
	"utxod/scripthash"
	"utxod/store"
	"utxod/store/kvstore"
	"utxod/utxo"
	"utxod/wire"
)

// metaKey is the index's state: the prefix alone, shorter than every row.
var metaKey = []byte{Prefix}

// metaVersion is the index's format: 2 since the rows are keyed by id;
// format 1 keyed them by the whole scripthash.
const metaVersion = 2

// ErrFormat: the datadir's index has another format than this program's.
var ErrFormat = errors.New("shindex: the scripthash index has another format")

// State says how far an index is.
type State uint8

// States of the meta key.
const (
	None     State = iota // no meta key: no index
	Building              // a build wrote some rows; not usable
	Complete              // rows for exactly the coins at Tip
)

func (s State) String() string {
	switch s {
	case Building:
		return "building"
	case Complete:
		return "complete"
	}
	return "none"
}

// Meta is the meta key's content.
type Meta struct {
	State State
	// Tip is the state the rows describe (Complete), or the store's tip
	// the build started at (Building).
	Tip scripthash.Tip
	// Building: the rows of every txid up to Resume are written (Rows of
	// them); a build resumes after it if the store is still at Tip.
	Resume    wire.Hash
	HasResume bool
	Rows      uint64
	// Key is the key of the rows' ids (Complete).
	Key IDKey
}

func encodeMeta(m Meta) []byte {
	b := []byte{metaVersion, byte(m.State)}
	b = append(b, m.Tip.Hash[:]...)
	b = binary.LittleEndian.AppendUint32(b, m.Tip.Height)
	b = binary.LittleEndian.AppendUint64(b, m.Tip.TxOuts)
	if m.State == Complete {
		b = append(b, m.Key[:]...)
	}
	if m.State == Building {
		b = append(b, m.Resume[:]...)
		if m.HasResume {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.LittleEndian.AppendUint64(b, m.Rows)
	}
	return b
}

func decodeMeta(b []byte) (Meta, error) {
	const base = 2 + 32 + 4 + 8
	var m Meta
	if len(b) > 0 && b[0] != metaVersion {
		return m, fmt.Errorf("%w: format %d, this utxod reads format %d (utxod index drop, then utxod index build)", ErrFormat, b[0], metaVersion)
	}
	if len(b) < base {
		return m, fmt.Errorf("shindex: meta key %x: too short", b)
	}
	m.State = State(b[1])
	copy(m.Tip.Hash[:], b[2:34])
	m.Tip.Height = binary.LittleEndian.Uint32(b[34:])
	m.Tip.TxOuts = binary.LittleEndian.Uint64(b[38:])
	switch {
	case m.State == Complete && len(b) == base+len(m.Key):
		copy(m.Key[:], b[base:])
	case m.State == Building && len(b) == base+32+1+8:
		copy(m.Resume[:], b[base:])
		m.HasResume = b[base+32] == 1
		m.Rows = binary.LittleEndian.Uint64(b[base+33:])
	default:
		return m, fmt.Errorf("shindex: meta key %x: bad state or length", b)
	}
	return m, nil
}

// ReadMeta returns the index's meta key; ok is false when there is none.
func ReadMeta(r backends.Reader) (m Meta, ok bool, err error) { return readMeta(r) }

func readMeta(r backends.Reader) (Meta, bool, error) {
	b, err := r.Get(metaKey)
	if errors.Is(err, backends.ErrNotFound) {
		return Meta{}, false, nil
	}
	if err != nil {
		return Meta{}, false, err
	}
	m, err := decodeMeta(b)
	return m, err == nil, err
}

func readStoreState(r backends.Reader) (store.Stats, bool, error) { return kvstore.ReadState(r) }

// ErrNoChainstate: Build found no chainstate to index.
var ErrNoChainstate = errors.New("shindex: the datadir has no chainstate to index")

// Progress reports a build or drop: rows written or deleted so far, and the
// total expected (0 when unknown).
type Progress func(done, total uint64)

// buildBatchRows is how many rows one synced batch of a build or drop holds.
var buildBatchRows = 100_000

// BuildOptions configure BuildWith.
type BuildOptions struct {
	// TmpDir is where the sort's bucket files go (default os.TempDir()); a
	// build also removes sort directories a crashed build left there. The
	// datadir itself is a good place: it has room for the index anyway.
	TmpDir string
	// Memory bounds the sort's runs in memory (default DefaultSortMemory).
	Memory int
}

// Build is BuildWith with the default options.
func Build(ctx context.Context, kv backends.KV, progress Progress) (Meta, error) {
	return BuildWith(ctx, kv, BuildOptions{}, progress)
}

// BuildWith writes the index of the coins in kv, which no other writer
// uses (the datadir is not open elsewhere). It reads the coins once, in
// one scan, hashing their scripts into scripthash buckets (Sorter), then
// writes the sorted buckets in key order with the store's append path, and last a
// synced batch marking the index Complete. Until then the meta key says
// Building, so a crash or a cancelled ctx never leaves a partial index
// taken as complete; the next build clears the rows and starts over.
func BuildWith(ctx context.Context, kv backends.KV, opt BuildOptions, progress Progress) (Meta, error) {
	stats, ok, err := readStoreState(kv)
	if err != nil {
		return Meta{}, err
	}
	if !ok {
		return Meta{}, ErrNoChainstate
	}
	tip := scripthash.Tip{Height: stats.Height, Hash: stats.BestBlock, TxOuts: stats.TxOuts}
	m, ok, err := readMeta(kv)
	if err != nil {
		return Meta{}, err
	}
	if ok && m.State == Complete {
		return m, ErrExists
	}
	if opt.TmpDir != "" {
		if err := removeStaleSortDirs(opt.TmpDir); err != nil {
			return Meta{}, fmt.Errorf("shindex: build: %w", err)
		}
	}
	// Rows a crashed build or drop left go first.
	if _, err := deleteRows(ctx, kv, nil); err != nil {
		return Meta{}, err
	}
	m = Meta{State: Building, Tip: tip}
	if progress == nil {
		progress = func(uint64, uint64) {}
	}
	progress(0, tip.TxOuts)
	srt := NewSorter(SorterConfig{Dir: opt.TmpDir, Memory: opt.Memory, Rows: tip.TxOuts})
	defer srt.Close()
	// One scan; no write happens while its iterator is open (bbolt's
	// writer cannot grow its file under a read transaction).
	var coins uint64
	err = kvstore.ScanRecords(kv, nil, func(txid wire.Hash, outs []utxo.IndexedCoin) error {
		if err := srt.AddTx(txid, outs); err != nil {
			return err
		}
		coins += uint64(len(outs))
		if coins%(1<<16) < uint64(len(outs)) {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress(coins/2, tip.TxOuts)
		}
		return nil
	})
	if err != nil {
		return m, err
	}
	if coins != tip.TxOuts {
		return m, fmt.Errorf("shindex: build: %d rows for %d unspent outputs at %s", coins, tip.TxOuts, tip.Hash)
	}
	b := backends.NewBatch()
	b.Put(metaKey, encodeMeta(m))
	if err := kv.Write(b, backends.Sync); err != nil {
		return m, fmt.Errorf("shindex: build: %w", err)
	}
	n, err := srt.Write(ctx, kv, func(done, total uint64) { progress(total/2+done/2, tip.TxOuts) })
	m.Rows = n
	if err != nil {
		return m, err
	}
	b.Reset()
	done := Meta{State: Complete, Tip: tip, Key: srt.Key()}
	b.Put(metaKey, encodeMeta(done))
	if err := kv.Write(b, backends.Sync); err != nil {
		return m, fmt.Errorf("shindex: build: %w", err)
	}
	progress(tip.TxOuts, tip.TxOuts)
	return done, nil
}

// CompleteMeta is the meta key and value of a complete index describing
// tip, its rows' ids keyed by key; a bulk load writes them with the rows a
// Sorter wrote (Sorter.Key).
func CompleteMeta(tip scripthash.Tip, key IDKey) (k, value []byte) {
	return bytes.Clone(metaKey), encodeMeta(Meta{State: Complete, Tip: tip, Key: key})
}

// Drop removes the index from kv (no other writer uses it): the meta key
// first, synced, so the index is off from then on, then every row. A crash
// meanwhile leaves rows without a meta key, which nothing reads and the
// next Build clears. It returns the rows deleted.
func Drop(ctx context.Context, kv backends.KV, progress Progress) (uint64, error) {
	b := backends.NewBatch()
	b.Delete(metaKey)
	if err := kv.Write(b, backends.Sync); err != nil {
		return 0, fmt.Errorf("shindex: drop: %w", err)
	}
	return deleteRows(ctx, kv, progress)
}

// deleteRows deletes every key under Prefix.
func deleteRows(ctx context.Context, kv backends.KV, progress Progress) (uint64, error) {
	var report func(uint64)
	if progress != nil {
		report = func(n uint64) { progress(n, 0) }
	}
	return kvstore.DeletePrefix(ctx, kv, []byte{Prefix}, nil, buildBatchRows, report)
}

// ErrMismatch: Verify found rows that are not the coins'.
var ErrMismatch = errors.New("shindex: the scripthash index does not match the coins")

// Verify is VerifyWith with the default options.
func Verify(ctx context.Context, r backends.Reader, progress Progress) (Meta, error) {
	return VerifyWith(ctx, r, BuildOptions{}, progress)
}

// VerifyWith checks that the complete index in r is exactly the one the
// coins in r call for: the meta key at the store's tip, a row with the
// right value for every coin, and no other row. It sorts the rows the
// coins call for as a build does (opt as BuildWith's) and walks them
// beside the index's, so both are read once, in order.
func VerifyWith(ctx context.Context, r backends.Reader, opt BuildOptions, progress Progress) (Meta, error) {
	m, ok, err := readMeta(r)
	if err != nil {
		return m, err
	}
	if !ok || m.State != Complete {
		return m, ErrNone
	}
	stats, ok, err := readStoreState(r)
	if err != nil {
		return m, err
	}
	tip := scripthash.Tip{Height: stats.Height, Hash: stats.BestBlock, TxOuts: stats.TxOuts}
	if !ok || m.Tip != tip {
		return m, fmt.Errorf("%w: index at %+v, coins at %+v", ErrStale, m.Tip, tip)
	}
	if progress == nil {
		progress = func(uint64, uint64) {}
	}
	srt := NewSorter(SorterConfig{Dir: opt.TmpDir, Memory: opt.Memory, Rows: tip.TxOuts, Key: m.Key})
	defer srt.Close()
	err = kvstore.ScanRecords(r, nil, func(txid wire.Hash, outs []utxo.IndexedCoin) error {
		if err := srt.AddTx(txid, outs); errors.Is(err, ErrHeight) {
			return fmt.Errorf("%w: %w", ErrMismatch, err) // a coin no row can hold
		} else if err != nil {
			return err
		}
		if n := srt.Rows(); n%65536 < uint64(len(outs)) {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress(n/2, tip.TxOuts)
		}
		return nil
	})
	if err != nil {
		return m, err
	}
	if srt.Rows() != tip.TxOuts {
		return m, fmt.Errorf("%w: %d coins, %d unspent outputs in the statistics", ErrMismatch, srt.Rows(), tip.TxOuts)
	}
	it, err := r.NewIterator(backends.Range{Prefix: []byte{Prefix}, Start: []byte{Prefix, 0}})
	if err != nil {
		return m, err
	}
	defer it.Close()
	var rows uint64
	err = srt.each(ctx, func(k *rowKey, v uint64) error {
		var want []byte
		if !it.Next() {
			if err := it.Err(); err != nil {
				return err
			}
			want = appendDiskKey(nil, k)
			return fmt.Errorf("%w: no row %x for %s:%d", ErrMismatch, want, k.outpoint().Hash, k.outpoint().Index)
		}
		got, err := parseDiskKey(it.Key())
		if err != nil {
			return fmt.Errorf("%w: %w", ErrMismatch, err)
		}
		switch c := cmpKey(got, *k); {
		case c < 0:
			return fmt.Errorf("%w: row %x is no coin's", ErrMismatch, it.Key())
		case c > 0:
			return fmt.Errorf("%w: no row for %s:%d", ErrMismatch, k.outpoint().Hash, k.outpoint().Index)
		}
		if want = binary.AppendUvarint(want, v); !bytes.Equal(it.Value(), want) {
			return fmt.Errorf("%w: row of %s:%d holds %x, want %x", ErrMismatch, k.outpoint().Hash, k.outpoint().Index, it.Value(), want)
		}
		if rows++; rows%65536 == 0 {
			progress(tip.TxOuts/2+rows/2, tip.TxOuts)
		}
		return nil
	})
	if err != nil {
		return m, err
	}
	if it.Next() {
		return m, fmt.Errorf("%w: row %x is no coin's", ErrMismatch, it.Key())
	}
	if err := it.Err(); err != nil {
		return m, err
	}
	progress(tip.TxOuts, tip.TxOuts)
	return m, nil
}
