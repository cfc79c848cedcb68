// Package events turns the chain's changes into per-client event streams:
// which blocks connect and disconnect, which outputs paying watched scripts
// are created and spent, and when watched outpoints are spent, with every
// reversal a reorganisation makes.
//
// The Hub is a chainstate.Observer. The chainstate calls it under its lock
// after each block settles or leaves the active chain; the Hub copies the
// spent coins' scripts (the block's bytes are immutable), queues the block
// and returns. One goroutine takes the queue in order, hashes every script
// of the block once (Esplora's scripthash), looks the hashes up in one
// shared map scripthash → streams (and outpoint → streams), and hands each
// stream its events for the block without waiting: a stream whose buffer is
// full is cut off, so a stalled client never slows the node or the others.
//
// A Filter is a validated subscription: scripts (from addresses,
// scripthashes and ranged descriptors), outpoints and whether every block is
// wanted. Its ID is a digest of its content, so every replica computes the
// same one.
//
// Cursors are chain data: (height, block hash). Every message carries the
// cursor a client resumes from to receive it again (its SSE id): a block's
// events come before its block_connected, whose cursor is the block itself,
// while theirs is the parent, so a client cut off inside a block receives
// the whole block again. Open replays from a cursor to the Hub's position
// from the blocks and undo data the node keeps (ErrCursorTooOld past them),
// reversing blocks of a branch the client saw and the node left when their
// data is still at hand (a Reset event at the fork otherwise), then
// continues live. Any replica answers a cursor the same way.
//
// Webhooks (StartWebhooks) deliver the same events by HTTP POST, a block's
// batch per request, signed with HMAC-SHA256, at least once and in order
// per hook, each hook a stream of its own resumed from a cursor it keeps in
// a file (docs/webhooks.md).
//
// The package serves no HTTP: package api serves the streams as Server-Sent
// Events and WebSocket messages.
package events
