package kvstore

import "utxod/store/kvstore/undorec"

// ErrBadUndo reports undo bytes that do not decode, or a record whose
// created coins are no longer in the coin set.
var ErrBadUndo = undorec.ErrCorrupt
