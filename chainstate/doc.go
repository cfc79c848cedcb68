// Package chainstate is the node: it takes blocks from every producer of
// the process behind one submission slot (Submit, Close), validates them by
// one path (ProcessBlock, and ProcessStream for imports, pipeline.go),
// keeps the block index, the active chain,
// orphans and reorganisations, and maintains the UTXO statistics and
// MuHash3072 per block. Coins, undo data, raw blocks and the persisted index
// live behind store.Store.
package chainstate
