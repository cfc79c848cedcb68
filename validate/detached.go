package validate

import (
	"utxod/wire"
)

// AddDetached adds a node for a block whose header and ancestors are
// unknown: hash at height, with a zero header, no parent and zero chain
// work (a chainstate loaded from a UTXO snapshot without headers starts at
// such a node). The node is never reported by TakeDirty (it cannot be
// persisted as an index entry) and never becomes the best header. A hash
// already present returns its node. Nothing can be linked under a detached
// node that would validate: its children's contextual checks need
// ancestors, so the chainstate refuses blocks instead.
func (bi *BlockIndex) AddDetached(hash wire.Hash, height int32, status BlockStatus) *BlockNode {
	if n := bi.Lookup(hash); n != nil {
		return n
	}
	n := bi.alloc(hash)
	n.Height, n.Status, n.seq = height, status, bi.nextSeq
	bi.nextSeq++
	bi.live++
	return n
}
