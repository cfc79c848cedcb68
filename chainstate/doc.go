// Package chainstate is the node: it validates submitted blocks
// (ProcessBlock, ProcessStream), keeps the block index, the active chain,
// orphans and reorganisations, and maintains the UTXO statistics and
// MuHash3072 per block. Coins, undo data, raw blocks and the persisted index
// live behind store.Store.
package chainstate
