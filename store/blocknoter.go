package store

import "utxod/wire"

// BlockNoter is implemented by stores that need a connected block itself,
// not only its delta (kvstore, for an index of the block's transactions):
// the chainstate calls NoteBlock(b, height) just before the Connect (or
// ConnectCounting) of b. b is the chainstate's parse: the store must not
// modify it nor keep it past that Connect.
type BlockNoter interface {
	NoteBlock(b *wire.Block, height int32)
}
