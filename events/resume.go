package events

import (
	"context"
	"errors"
	"fmt"

	"utxod/chainstate"
	"utxod/store"
	"utxod/wire"
)

// plan is the way from a client's cursor to the Hub's position when the
// stream opened: the blocks to reverse (the client's branch down to the
// fork, newest first), or a reset at the fork when their data is gone, and
// the blocks to replay (the fork's successors up to the Hub's position,
// oldest first).
type plan struct {
	reverse []*blockData
	reset   *Cursor
	replay  []Cursor
}

// plan finds the way from from to to through the block index. The first
// block to replay must still have its data and undo data.
func (h *Hub) plan(from, to Cursor) (*plan, error) {
	c := h.cfg.Chain
	a, ok := c.Lookup(from.Hash)
	if !ok || a.Orphan {
		return nil, fmt.Errorf("%w: %s", ErrUnknownCursor, from)
	}
	if a.Height != from.Height {
		return nil, fmt.Errorf("%w: block %s is at height %d, not %d", ErrBadCursor, from.Hash, a.Height, from.Height)
	}
	b, ok := c.Lookup(to.Hash)
	if !ok {
		return nil, fmt.Errorf("events: the hub's block %s is not in the index", to)
	}
	if int(b.Height)-int(a.Height) > h.cfg.MaxReplay {
		return nil, fmt.Errorf("%w: %d blocks behind, at most %d are replayed", ErrCursorTooOld, b.Height-a.Height, h.cfg.MaxReplay)
	}
	parent := func(x chainstate.BlockInfo) (chainstate.BlockInfo, error) {
		p, ok := c.Lookup(x.Header.PrevBlock)
		if !ok {
			return p, fmt.Errorf("%w: the ancestors of %s are not in the index", ErrCursorTooOld, x.Hash)
		}
		return p, nil
	}
	var stale []chainstate.BlockInfo
	var replay []Cursor
	var err error
	for a.Height > b.Height {
		stale = append(stale, a)
		if a, err = parent(a); err != nil {
			return nil, err
		}
	}
	for b.Height > a.Height {
		replay = append(replay, Cursor{b.Height, b.Hash})
		if b, err = parent(b); err != nil {
			return nil, err
		}
	}
	for a.Hash != b.Hash {
		if len(stale) > h.cfg.MaxReplay {
			return nil, fmt.Errorf("%w: the cursor's branch forked more than %d blocks ago", ErrCursorTooOld, h.cfg.MaxReplay)
		}
		stale = append(stale, a)
		replay = append(replay, Cursor{b.Height, b.Hash})
		if a, err = parent(a); err != nil {
			return nil, err
		}
		if b, err = parent(b); err != nil {
			return nil, err
		}
	}
	fork := Cursor{a.Height, a.Hash}
	p := &plan{}
	for i := len(replay) - 1; i >= 0; i-- {
		p.replay = append(p.replay, replay[i])
	}
	for _, s := range stale {
		d, err := h.load(Cursor{s.Height, s.Hash})
		if err != nil {
			p.reverse, p.reset = nil, &fork
			break
		}
		p.reverse = append(p.reverse, d)
	}
	if len(p.replay) > 0 {
		if _, err := h.load(p.replay[0]); err != nil {
			if errors.Is(err, store.ErrNoBlock) || errors.Is(err, store.ErrNoUndo) {
				return nil, fmt.Errorf("%w: block %s after the cursor is no longer kept", ErrCursorTooOld, p.replay[0])
			}
			return nil, err
		}
	}
	return p, nil
}

// load returns a block's data for events: from the Hub's recent blocks,
// else from the node (raw data and undo data).
func (h *Hub) load(c Cursor) (*blockData, error) {
	h.mu.Lock()
	d, ok := h.recent[c.Hash]
	h.mu.Unlock()
	if ok {
		return d, nil
	}
	raw, err := h.cfg.Chain.BlockData(c.Hash)
	if err != nil {
		return nil, err
	}
	b, err := wire.ParseBlock(raw)
	if err != nil {
		return nil, err
	}
	spent, err := h.cfg.Chain.SpentCoins(c.Hash)
	if err != nil {
		return nil, err
	}
	return &blockData{b: b, height: c.Height, spent: spent}, nil
}

// Replay emits what the client missed since its cursor (nothing without
// one): the reversals of its stale blocks or a reset, then the blocks up to
// the Hub's position when the stream opened, a block at a time. The live
// messages wait in the stream's buffer meanwhile. An error from emit, or
// a block pruned while replaying, ends it.
func (s *Stream) Replay(ctx context.Context, emit func([]Message) error) error {
	p := s.plan
	if p == nil {
		return nil
	}
	s.plan = nil
	for _, d := range p.reverse {
		msgs, err := filterEvents(d, true, s.f)
		if err != nil {
			return err
		}
		if err := emit(msgs); err != nil {
			return err
		}
	}
	if p.reset != nil {
		m := Message{KindReset, *p.reset, mustJSON(Reset{p.reset.Height, p.reset.Hash.String(), "the blocks above the fork that the cursor names are no longer stored"})}
		if err := emit([]Message{m}); err != nil {
			return err
		}
	}
	for _, c := range p.replay {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := s.hub.load(c)
		if err != nil {
			return fmt.Errorf("events: replaying block %s: %w", c, err)
		}
		msgs, err := filterEvents(d, false, s.f)
		if err != nil {
			return err
		}
		if err := emit(msgs); err != nil {
			return err
		}
	}
	return nil
}
