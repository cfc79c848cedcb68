// Package node opens a node in one place: the key-value store of a datadir
// (backends), the persistent store over it (store/kvstore), the datadir's
// scripthash index (store/kvstore/shindex) and the chainstate with its
// validator, or an in-memory chainstate without a datadir. The commands of
// cmd/utxod parse their flags into Options and call Open; Close flushes and
// closes everything in order.
package node
