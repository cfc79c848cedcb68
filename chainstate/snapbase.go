package chainstate

import (
	"errors"

	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// A chainstate loaded from a UTXO snapshot (snapshot.Load, kvstore.BulkLoader)
// starts at the snapshot's base block. With the header chain from genesis
// to the base its block index is complete and blocks from base+1 connect
// as usual (undo data below the base does not exist, so no reorg can go
// beneath it). Without the headers the base is the index's only entry
// besides genesis, with an unknown header and no ancestors: the state
// answers lookups and digests, and every block is refused with
// ErrNeedHeaders.

// ErrNeedHeaders refuses a block (and headers) on a chainstate loaded from a
// snapshot without the header chain to its base.
var ErrNeedHeaders = errors.New("chainstate: loaded from a UTXO snapshot without the headers from genesis to its base; reload it with `utxod snapshot load --headers FILE` to connect blocks")

// detachedBase returns the index node of a header-less snapshot base that
// is the persisted tip, or nil when tip is not such a base.
func (cs *Chainstate) detachedBase(tip wire.Hash) *validate.BlockNode {
	if cs.snap == nil || cs.snap.Headers || cs.snap.Hash != tip {
		return nil
	}
	// Nothing about the block itself is known or validated.
	return cs.index.AddDetached(tip, cs.snap.Height, 0)
}

// needHeaders reports a header-less snapshot chainstate.
func (cs *Chainstate) needHeaders() bool { return cs.snap != nil && !cs.snap.Headers }

// snapshotInfo adds the snapshot base to a gettxoutsetinfo answer.
func (cs *Chainstate) snapshotInfo(info *utxo.ChainstateInfo) {
	if cs.snap == nil {
		return
	}
	h, height := cs.snap.Hash, cs.snap.Height
	info.SnapshotBase, info.SnapshotBaseHeight = &h, &height
}

// SnapshotBase returns the UTXO snapshot the chainstate was loaded from,
// or nil.
func (cs *Chainstate) SnapshotBase() *store.SnapshotBase {
	if cs.snap == nil {
		return nil
	}
	b := *cs.snap
	return &b
}
