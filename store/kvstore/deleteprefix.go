package kvstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"utxod/backends"
)

// DeletePrefix deletes every key under prefix from start on (nil: all of
// them), in unsynced batches of at most batchKeys keys read by fresh
// iterators, none open across a write (bbolt's writer cannot grow its file
// under a reader), then makes the deletions durable with one synced write.
// progress, if set, gets the keys deleted so far after each batch. A
// secondary index's drop uses it after removing its meta key.
func DeletePrefix(ctx context.Context, kv backends.KV, prefix, start []byte, batchKeys int, progress func(done uint64)) (uint64, error) {
	var n uint64
	start = bytes.Clone(start)
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		it, err := kv.NewIterator(backends.Range{Prefix: prefix, Start: start})
		if err != nil {
			return n, err
		}
		b := backends.NewBatch()
		for b.Len() < batchKeys && it.Next() {
			b.Delete(bytes.Clone(it.Key()))
			start = append(append(start[:0], it.Key()...), 0)
		}
		if err := errors.Join(it.Err(), it.Close()); err != nil {
			return n, err
		}
		if b.Len() == 0 {
			// An empty synced write makes the earlier ones durable.
			if err := kv.Write(b, backends.Sync); err != nil {
				return n, fmt.Errorf("kvstore: delete %q: %w", prefix, err)
			}
			return n, nil
		}
		if err := kv.Write(b, backends.NoSync); err != nil {
			return n, fmt.Errorf("kvstore: delete %q: %w", prefix, err)
		}
		n += uint64(b.Len())
		if progress != nil {
			progress(n)
		}
	}
}
