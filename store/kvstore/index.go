package kvstore

import (
	"bytes"
	"fmt"

	"utxod/backends"
	"utxod/utxo"
	"utxod/wire"
)

// Index is a secondary index over the coin set (a scripthash → outpoint
// index, say) that the Store keeps under its own key prefix and writes in
// the same atomic batch as the coins and the tip, so a crash never leaves
// it describing other coins than the store's.
//
// The Store calls it under the chainstate's write lock: Apply for every
// block connected or disconnected, in chain order, after the coins cache
// took the change; at each flush AppendBatch, and Flushed once that batch
// is durable. After a failed flush Flushed is not called: the changes stay
// pending and the next AppendBatch writes them again. An index that must
// know which tip it describes writes that under its prefix in AppendBatch;
// one added to a store that already has coins builds itself from a
// store.Scanner first.
type Index interface {
	// Prefix is the first byte of every key the index writes; it is none
	// of the Store's own (schema.go) nor another index's.
	Prefix() byte
	// Apply records the coin changes of a block. Connecting: d.Spent and
	// d.Overwritten left the set, d.Created entered it. Disconnecting (d
	// is the block's undo delta): d.Created left, d.Spent came back, and
	// d.Overwritten stays gone, as in Core. d belongs to the caller: copy
	// what you keep.
	Apply(block wire.Hash, d *utxo.Delta, connect bool) error
	// AppendBatch adds every change applied since the last Flushed to b,
	// under Prefix.
	AppendBatch(b *backends.Batch) error
	// Flushed reports that the batch of the last AppendBatch is durable.
	Flushed()
}

// addIndex registers ix (Options.Indexes).
func (s *Store) addIndex(ix Index) error {
	p := ix.Prefix()
	if bytes.IndexByte(ownPrefixes, p) >= 0 {
		return fmt.Errorf("kvstore: index prefix %q is the store's own", p)
	}
	for _, o := range s.indexes {
		if o.Prefix() == p {
			return fmt.Errorf("kvstore: two indexes with prefix %q", p)
		}
	}
	s.indexes = append(s.indexes, ix)
	return nil
}

// TipIndex is an Index that also learns, after each Apply, the block the
// coin set now ends at (the connected block, or the disconnected block's
// parent), so it can say which state its rows describe.
type TipIndex interface {
	Index
	SetTip(tip wire.Hash)
}

// SizedIndex is an Index that holds its changes in memory until the flush:
// PendingBytes counts against the store's budget (NeedsFlush), so the
// index does not grow the process beyond the coins cache's budget.
type SizedIndex interface {
	Index
	PendingBytes() int64
}

// BatchSizer is an Index that can say, before AppendBatch, about how many
// bytes of keys and values and how many operations it will add, so the
// flush sizes its batch once instead of growing it by doubling (a larger
// peak than the rows themselves: the old and new buffers live at once).
type BatchSizer interface {
	Index
	BatchSize() (bytes, ops int)
}

// applyIndexes gives every index a block's delta; tip is the block the
// coin set ends at afterwards.
func (s *Store) applyIndexes(block, tip wire.Hash, d *utxo.Delta, connect bool) error {
	defer func() { s.noted = notedBlock{} }()
	for _, ix := range s.indexes {
		var err error
		if bx, ok := ix.(BlockIndex); ok && connect {
			err = s.connectBlockIndex(bx, block, d)
		} else {
			err = ix.Apply(block, d, connect)
		}
		if err != nil {
			return fmt.Errorf("kvstore: index %q: %w", ix.Prefix(), err)
		}
		if t, ok := ix.(TipIndex); ok {
			t.SetTip(tip)
		}
	}
	return nil
}

// indexBytes is the memory the indexes hold until the next flush.
func (s *Store) indexBytes() int64 {
	var n int64
	for _, ix := range s.indexes {
		if t, ok := ix.(SizedIndex); ok {
			n += t.PendingBytes()
		}
	}
	return n
}
