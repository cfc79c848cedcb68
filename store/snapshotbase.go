package store

import "utxod/wire"

// SnapshotBase records that a chainstate was loaded from a UTXO snapshot
// (snapshot.Load, kvstore.BulkLoader) and at which block.
type SnapshotBase struct {
	Hash   wire.Hash
	Height int32
	// Headers reports that the header chain from genesis to the base was
	// loaded with the coins. Without it the base has no ancestors in the
	// block index and blocks cannot be connected
	// (chainstate.ErrNeedHeaders).
	Headers bool
}
