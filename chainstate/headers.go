package chainstate

import (
	"utxod/wire"
)

// HeadersResult is what AcceptHeaders did with a batch.
type HeadersResult struct {
	// Added headers are new in the index; Known ones were already there.
	Added, Known int
	// Invalid headers failed a header check or descend from one that did;
	// FirstErr is the first such failure (a *validate.RuleError; or
	// ErrNeedHeaders for every header on a snapshot state without its
	// header chain). Their
	// blocks are refused with the same reason when they arrive.
	Invalid  int
	FirstErr error
	// Unlinked headers have a parent neither in the index nor in the
	// batch; pass them again with later headers.
	Unlinked []wire.Header
}

// AcceptHeaders adds headers to the block index ahead of their blocks, as
// Core's headers-first sync does (ProcessNewBlockHeaders, AcceptBlockHeader
// for each): every header passes CheckBlockHeader (proof of work) and
// ContextualCheckBlockHeader against its parent before it is indexed, so
// the best header and its chain work are known before the blocks connect
// (assume-valid's condition rests on both). The headers may come in any
// order: one whose parent is later in the batch waits for it. The chain
// does not move; a header-only node becomes connectable when its block
// arrives (ProcessBlock, ProcessStream). Not for use during ProcessStream.
func (cs *Chainstate) AcceptHeaders(hs []wire.Header) HeadersResult {
	cs.lock()
	defer cs.unlock()
	var res HeadersResult
	if cs.needHeaders() {
		// The detached snapshot base cannot take ancestors afterwards.
		res.Invalid, res.FirstErr = len(hs), ErrNeedHeaders
		return res
	}
	byPrev := make(map[wire.Hash][]int, len(hs))
	for i := range hs {
		byPrev[hs[i].PrevBlock] = append(byPrev[hs[i].PrevBlock], i)
	}
	done := make([]bool, len(hs))
	queue := make([]int, 0, len(hs))
	for i := range hs {
		if cs.index.Lookup(hs[i].PrevBlock) != nil {
			queue = append(queue, i)
		}
	}
	// drop marks the batch's descendants of a failed header.
	drop := func(hash wire.Hash) {
		stack := []wire.Hash{hash}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, j := range byPrev[h] {
				if !done[j] {
					done[j] = true
					res.Invalid++
					stack = append(stack, hs[j].BlockHash())
				}
			}
		}
	}
	now := cs.now()
	for k := 0; k < len(queue); k++ {
		i := queue[k]
		if done[i] {
			continue
		}
		done[i] = true
		hash := hs[i].BlockHash()
		if cs.index.Lookup(hash) != nil {
			res.Known++
		} else if _, err := cs.index.AcceptHeader(hs[i], now); err != nil {
			res.Invalid++
			if res.FirstErr == nil {
				res.FirstErr = err
			}
			drop(hash)
			continue
		} else {
			res.Added++
		}
		queue = append(queue, byPrev[hash]...)
	}
	for i := range hs {
		if !done[i] {
			res.Unlinked = append(res.Unlinked, hs[i])
		}
	}
	return res
}

// BestHeader returns the most-work valid header in the index (Core's
// pindexBestHeader); its block may not have arrived yet.
func (cs *Chainstate) BestHeader() BlockInfo {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	return cs.infoLocked(cs.index.BestHeader())
}
