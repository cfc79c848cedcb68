package chainstate

import (
	"fmt"

	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Observer hears of every block the active chain gains or loses, in chain
// order, under the chainstate's write lock: a block is announced connected
// once its scripts have passed (settled), never while they are pending, and
// disconnected only if it was announced connected (a block rolled back
// before its scripts passed is never heard of). The calls must not block
// and must not call the chainstate: an observer copies what it needs and
// works on its own goroutines (package events' Hub).
//
// b and the deltas are only read by the chainstate and the store after the
// call, but their scripts may alias memory the store reuses: an observer
// that keeps a coin's script copies it. BlockDisconnected's b is nil when
// the block's data is no longer stored; undo.Spent are the coins that come
// back (undo.Created's coins are not filled in: b's outputs are them).
type Observer interface {
	BlockConnected(b *wire.Block, height int32, d *utxo.Delta)
	BlockDisconnected(b *wire.Block, height int32, undo *utxo.Delta)
}

// observed is a block connected and not yet announced (its scripts
// pending).
type observed struct {
	node *validate.BlockNode
	b    *wire.Block
	d    *utxo.Delta
}

// SetObserver sets the observer of connected and disconnected blocks (nil:
// none). Set it before the node takes blocks.
func (cs *Chainstate) SetObserver(o Observer) {
	cs.lock()
	defer cs.unlock()
	cs.observer = o
}

// noteConnected remembers a block connectDeferred applied, for its
// announcement when it settles.
func (cs *Chainstate) noteConnected(node *validate.BlockNode, b *wire.Block, d *utxo.Delta) {
	if cs.observer != nil {
		cs.unannounced = append(cs.unannounced, observed{node, b, d})
	}
}

// announceConnected tells the observer node settled.
func (cs *Chainstate) announceConnected(node *validate.BlockNode) {
	for i, o := range cs.unannounced {
		if o.node == node {
			cs.unannounced = append(cs.unannounced[:i], cs.unannounced[i+1:]...)
			cs.observer.BlockConnected(o.b, node.Height, o.d)
			return
		}
	}
}

// announceDisconnected tells the observer node left the active chain with
// undo data d, unless it was never announced.
func (cs *Chainstate) announceDisconnected(node *validate.BlockNode, d *utxo.Delta) {
	if cs.observer == nil {
		return
	}
	for i, o := range cs.unannounced {
		if o.node == node {
			cs.unannounced = append(cs.unannounced[:i], cs.unannounced[i+1:]...)
			return
		}
	}
	b, err := cs.blockOf(node)
	if err != nil {
		b = nil
	}
	cs.observer.BlockDisconnected(b, node.Height, d)
}

// SpentCoins returns copies of the coins the block hash spent (its undo
// data), for a store that keeps them (store.SpentReader); store.ErrNoUndo
// when they are not kept.
func (cs *Chainstate) SpentCoins(hash wire.Hash) ([]utxo.Entry, error) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	sr, ok := cs.store.(store.SpentReader)
	if !ok {
		return nil, fmt.Errorf("chainstate: the store does not read past undo data: %w", store.ErrNoUndo)
	}
	spent, err := sr.Spent(hash)
	if err != nil {
		return nil, err
	}
	out := make([]utxo.Entry, len(spent))
	var arena []byte
	for _, e := range spent {
		arena = append(arena, e.Script...)
	}
	off := 0
	for i, e := range spent {
		out[i] = e
		out[i].Script = arena[off : off+len(e.Script) : off+len(e.Script)]
		off += len(e.Script)
	}
	return out, nil
}
