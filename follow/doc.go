// Package follow keeps a chainstate in step with another node over Bitcoin
// Core's REST interface (bitcoind -rest, doc/REST-interface.md) — a Core
// node, or another utxod, which serves the same routes.
//
// A Follower polls the source's tip (/rest/chaininfo.json). When it
// differs from the local tip it finds the fork point from headers
// (/rest/headers/<hash>.bin?count=N, walking back from the local tip at
// exponentially growing distances until a block is on the source's active
// chain, then forward to the first header that differs), fetches the
// headers after it to the source's tip in batches of 2,000 and hands them
// to Chain.AcceptHeaders (headers first, as Core syncs: the best header is
// known before the blocks connect, so assume-valid applies as in an
// import), then downloads the blocks (/rest/block/<hash>.bin) with bounded
// concurrency, a bounded number of blocks ahead of validation, so fetching
// overlaps validation. Blocks are
// handed to Chain.Submit one at a time in chain order; the
// chainstate activates the most-work chain itself, disconnecting through
// undo data on a reorg.
//
// Nothing the source sends is trusted: the Client checks that every block
// is the one asked for and complete, and that headers chain and carry
// their proof of work; the chainstate validates every block. A block the
// chainstate rejects is logged with its reject reason and counted, and
// following pauses — the state stays at the last valid block — until the
// source's tip changes or Config.RejectPause passes. A source that is down,
// slow or sends broken replies is retried with exponential backoff.
//
// Progress is logged through the injected slog.Logger and exported as
// Prometheus metrics (utxod_follow_*); Status says whether the node is in
// sync. Run returns after the block being connected when its context
// ends, so that the caller can flush and close the store.
package follow
