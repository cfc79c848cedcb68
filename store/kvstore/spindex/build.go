package spindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"utxod/backends"
	"utxod/silentpayments"
	"utxod/store"
	"utxod/store/kvstore"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Source is what Build and Verify read besides the index's own keys: the
// store's block index (Load), blocks, undo records as written and coins.
// A *kvstore.Store opened on the datadir (with its block and undo files)
// is one; nothing else may write to it meanwhile.
type Source interface {
	Load() (*store.Persisted, error)
	Block(h wire.Hash) ([]byte, error)
	UndoRecord(h wire.Hash) (*utxo.Delta, error)
	Coin(op utxo.Outpoint) (utxo.Coin, bool, error)
}

var _ Source = (*kvstore.Store)(nil)

// Progress reports a build, drop or verify: blocks (or, for a drop, keys)
// done so far, and the total expected (0 when unknown).
type Progress func(done, total uint64)

// ErrNoChainstate: Build found no chainstate to index.
var ErrNoChainstate = errors.New("spindex: the datadir has no chainstate to index")

// ErrNoData: not even the tip's block and undo data are stored.
var ErrNoData = errors.New("spindex: the datadir keeps no block with its undo data to index")

// ErrMismatch: Verify found keys that are not the ones the blocks call for.
var ErrMismatch = errors.New("spindex: the silent-payments index does not match the blocks")

// buildBatchBlocks is how many blocks one synced batch of a build holds.
var buildBatchBlocks = 100

// activeChain returns the hashes of the store's active chain by height
// (walking the block index back from the tip) and the tip's statistics.
func activeChain(src Source) ([]wire.Hash, store.Stats, error) {
	p, err := src.Load()
	if err != nil {
		return nil, store.Stats{}, err
	}
	if p == nil {
		return nil, store.Stats{}, ErrNoChainstate
	}
	parent := make(map[wire.Hash]wire.Hash)
	if err := p.Index(func(e *validate.IndexEntry) error {
		parent[e.Header.BlockHash()] = e.Header.PrevBlock
		return nil
	}); err != nil {
		return nil, store.Stats{}, err
	}
	chain := make([]wire.Hash, p.Stats.Height+1)
	h := p.Tip
	for i := int(p.Stats.Height); i >= 0; i-- {
		chain[i] = h
		if i == 0 {
			break
		}
		var ok bool
		if h, ok = parent[h]; !ok {
			return nil, store.Stats{}, fmt.Errorf("spindex: the block index lacks an ancestor of %s at height %d", chain[i], i)
		}
	}
	if chain[0] != p.Genesis {
		return nil, store.Stats{}, fmt.Errorf("spindex: the active chain does not start at genesis")
	}
	return chain, p.Stats, nil
}

// computeBlock returns the rows of the block at height h with the unspent
// counts of the coin set now (src's tip).
func computeBlock(src Source, hash wire.Hash) ([]silentpayments.TweakRow, error) {
	raw, err := src.Block(hash)
	if err != nil {
		return nil, err
	}
	b, err := wire.ParseBlock(raw)
	if err != nil {
		return nil, fmt.Errorf("spindex: block %s: %w", hash, err)
	}
	d, err := src.UndoRecord(hash)
	if err != nil {
		return nil, err
	}
	rows, err := BlockRows(b, d, 0)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		r := &rows[i]
		r.Unspent = 0
		for _, v := range r.Outputs {
			_, ok, err := src.Coin(utxo.Outpoint{Hash: r.Txid, Index: v})
			if err != nil {
				return nil, err
			}
			if ok {
				r.Unspent++
			}
		}
	}
	return rows, nil
}

// available is the lowest height from which every block up to the tip has
// its block and undo data (reading back from the tip).
func available(ctx context.Context, src Source, chain []wire.Hash) (uint32, error) {
	h := len(chain) - 1
	for ; h >= 1; h-- {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if _, err := src.Block(chain[h]); err != nil {
			if errors.Is(err, store.ErrNoBlock) {
				break
			}
			return 0, err
		}
		if _, err := src.UndoRecord(chain[h]); err != nil {
			if errors.Is(err, store.ErrNoUndo) {
				break
			}
			return 0, err
		}
	}
	return uint32(h + 1), nil
}

// Build writes the index of the blocks the datadir keeps (the longest run
// up to the tip with block and undo data; from > 0 starts at that height
// instead), with the unspent counts of the coins now. kv is the datadir's
// store, src a kvstore.Store over it; nothing else writes meanwhile. It is
// resumable: each synced batch holds whole blocks and a Building meta
// saying where it got to, a later Build continues there if the tip has not
// moved (else it starts over), and only the last batch marks the index
// Complete.
func Build(ctx context.Context, kv backends.KV, src Source, from uint32, progress Progress) (Meta, error) {
	chain, stats, err := activeChain(src)
	if err != nil {
		return Meta{}, err
	}
	tip := Tip{Hash: stats.BestBlock, Height: stats.Height}
	m, ok, err := ReadMeta(kv)
	if err != nil {
		return Meta{}, err
	}
	switch {
	case ok && m.State == Complete:
		return m, ErrExists
	case ok && m.State == Building && m.Tip.Hash == tip.Hash && m.Tip.Height == tip.Height && (from == 0 || from == m.Tip.From):
	default:
		if _, err := deleteKeys(ctx, kv, nil); err != nil {
			return Meta{}, err
		}
		if from == 0 {
			if from, err = available(ctx, src, chain); err != nil {
				return Meta{}, err
			}
			if from > tip.Height && tip.Height > 0 {
				return Meta{}, ErrNoData
			}
		}
		from = max(from, 1)
		tip.From = from
		m = Meta{State: Building, Tip: tip, Next: from}
	}
	if progress == nil {
		progress = func(uint64, uint64) {}
	}
	total := uint64(tip.Height+1) - uint64(m.Tip.From)
	done := func() uint64 { return uint64(m.Next) - uint64(m.Tip.From) }
	progress(done(), total)
	b := backends.NewBatch()
	var val []byte
	flush := func(meta Meta) error {
		b.Put(metaKey, encodeMeta(meta))
		if err := kv.Write(b, backends.Sync); err != nil {
			return fmt.Errorf("spindex: build: %w", err)
		}
		b = backends.NewBatch()
		progress(done(), total)
		return nil
	}
	for h := m.Next; h <= tip.Height; h++ {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		rows, err := computeBlock(src, chain[h])
		if err != nil {
			return m, fmt.Errorf("spindex: build at height %d: %w", h, err)
		}
		b.Put(blockKey(h), chain[h][:])
		for i := range rows {
			k := makeRowKey(h, rows[i].Txid)
			val = encodeRow(val[:0], &row{tweak: rows[i].Tweak, maxValue: rows[i].MaxValue, unspent: rows[i].Unspent, outs: rows[i].Outputs})
			b.Put(k.full(), val)
		}
		m.Rows += uint64(len(rows))
		m.Next = h + 1
		if (h-m.Tip.From+1)%uint32(buildBatchBlocks) == 0 && h < tip.Height {
			if err := flush(m); err != nil {
				return m, err
			}
		}
	}
	final := Meta{State: Complete, Tip: m.Tip}
	if err := flush(final); err != nil {
		return m, err
	}
	return final, nil
}

// Drop removes the index from kv (no other writer uses it): the meta key
// first, synced, so the index is off from then on, then every key. It
// returns the keys deleted.
func Drop(ctx context.Context, kv backends.KV, progress Progress) (uint64, error) {
	b := backends.NewBatch()
	b.Delete(metaKey)
	if err := kv.Write(b, backends.Sync); err != nil {
		return 0, fmt.Errorf("spindex: drop: %w", err)
	}
	return deleteKeys(ctx, kv, progress)
}

// deleteKeys deletes every key under Prefix but the meta key (the prefix
// alone, which sorts first).
func deleteKeys(ctx context.Context, kv backends.KV, progress Progress) (uint64, error) {
	var report func(uint64)
	if progress != nil {
		report = func(n uint64) { progress(n, 0) }
	}
	return kvstore.DeletePrefix(ctx, kv, []byte{Prefix}, []byte{Prefix, 0}, 100_000, report)
}

// Verify checks that the complete index in kv is exactly the one the
// blocks call for: the meta key at the store's tip, for every height in
// [From, tip] the active chain's hash and the rows recomputed from the
// block and its undo record (unspent counts from the coins now), and no
// other key. It reads one block at a time.
func Verify(ctx context.Context, kv backends.KV, src Source, progress Progress) (Report, error) {
	var rep Report
	var err error
	rep.Meta, rep.Checked, rep.Skipped, err = verify(ctx, kv, src, progress)
	return rep, err
}

// Report is what Verify checked: the meta key, the blocks whose rows it
// recomputed, and those whose rows it could not (their block or undo data
// is no longer stored; their hashes were still checked).
type Report struct {
	Meta             Meta
	Checked, Skipped uint64
}

func verify(ctx context.Context, kv backends.KV, src Source, progress Progress) (m Meta, checked, skipped uint64, err error) {
	var ok bool
	m, ok, err = ReadMeta(kv)
	if err != nil {
		return m, checked, skipped, err
	}
	if !ok || m.State != Complete {
		return m, checked, skipped, ErrNone
	}
	chain, stats, err := activeChain(src)
	if err != nil {
		return m, checked, skipped, err
	}
	if m.Tip.Hash != stats.BestBlock || m.Tip.Height != stats.Height {
		return m, checked, skipped, fmt.Errorf("%w: index at %d %s, coins at %d %s", ErrStale, m.Tip.Height, m.Tip.Hash, stats.Height, stats.BestBlock)
	}
	if progress == nil {
		progress = func(uint64, uint64) {}
	}
	x := newIndex(kv, m.Tip)
	total := uint64(m.Tip.Height+1) - uint64(min(m.Tip.From, m.Tip.Height+1))
	var done uint64
	for h := m.Tip.From; h <= m.Tip.Height; h += MaxBlocks {
		_, got, err := x.Blocks(ctx, int32(h), MaxBlocks)
		if err != nil {
			return m, checked, skipped, err
		}
		for _, g := range got {
			if g.Hash != chain[g.Height] {
				return m, checked, skipped, fmt.Errorf("%w: height %d has block %s, the chain %s", ErrMismatch, g.Height, g.Hash, chain[g.Height])
			}
			want, err := computeBlock(src, chain[g.Height])
			if errors.Is(err, store.ErrNoBlock) || errors.Is(err, store.ErrNoUndo) {
				skipped++
				done++
				continue
			}
			if err != nil {
				return m, checked, skipped, fmt.Errorf("spindex: verify at height %d: %w", g.Height, err)
			}
			sortRows(want)
			if len(want) != len(g.Rows) || (len(want) > 0 && !reflect.DeepEqual(want, g.Rows)) {
				return m, checked, skipped, fmt.Errorf("%w: height %d: %d rows, the block calls for %d (or they differ)", ErrMismatch, g.Height, len(g.Rows), len(want))
			}
			done++
			checked++
			progress(done, total)
		}
	}
	if done != total {
		return m, checked, skipped, fmt.Errorf("%w: %d blocks in [%d, %d], want %d", ErrMismatch, done, m.Tip.From, m.Tip.Height, total)
	}
	// No key outside [From, tip].
	for _, r := range []backends.Range{
		{Prefix: []byte{Prefix}, Start: []byte{Prefix, 0}, End: blockKey(m.Tip.From)},
		{Prefix: []byte{Prefix}, Start: blockKey(m.Tip.Height + 1)},
	} {
		if m.Tip.Height == 1<<32-1 && r.End == nil {
			continue
		}
		it, err := kv.NewIterator(r)
		if err != nil {
			return m, checked, skipped, err
		}
		extra := it.Next()
		var k []byte
		if extra {
			k = bytes.Clone(it.Key())
		}
		err = errors.Join(it.Err(), it.Close())
		if err != nil {
			return m, checked, skipped, err
		}
		if extra {
			return m, checked, skipped, fmt.Errorf("%w: key %x outside the indexed heights [%d, %d]", ErrMismatch, k, m.Tip.From, m.Tip.Height)
		}
	}
	return m, checked, skipped, nil
}

// sortRows puts rows in the index's order (txid bytes).
func sortRows(rows []silentpayments.TweakRow) {
	slices.SortFunc(rows, func(a, b silentpayments.TweakRow) int { return bytes.Compare(a.Txid[:], b.Txid[:]) })
}
