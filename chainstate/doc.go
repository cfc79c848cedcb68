// Package chainstate keeps the persistent chainstate: the coins cache over a backends.KV store, the block index, undo data, and atomic flushes of all of them with the tip.
package chainstate
