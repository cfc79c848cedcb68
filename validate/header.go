package validate

import (
	"fmt"

	"utxod/params"
	"utxod/wire"
)

// This file follows Bitcoin Core's CheckBlockHeader, ContextualCheckBlockHeader
// and AcceptBlockHeader (src/validation.cpp).

// MaxFutureBlockTime is how many seconds a header's time may lie ahead of
// the node's clock (Core's MAX_FUTURE_BLOCK_TIME).
const MaxFutureBlockTime = 2 * 60 * 60

// MaxTimewarp is how many seconds the first block of a difficulty period may
// lie before its parent under BIP94 (Core's MAX_TIMEWARP).
const MaxTimewarp = 600

// CheckBlockHeader runs the context-free header check: the proof of work of
// hash (the header's hash, passed in because the caller already has it)
// against h.Bits. Failure is "high-hash".
func CheckBlockHeader(h *wire.Header, hash wire.Hash, p *params.Params) error {
	return CheckProofOfWork(hash, h.Bits, p)
}

// ContextualCheckBlockHeader checks h against its parent prev, in Core's
// order: "bad-diffbits" (nBits differs from NextWorkRequired),
// "time-too-old" (time not after prev's median time past),
// "time-timewarp-attack" (BIP94 networks: first block of a period more than
// MaxTimewarp seconds before prev), "time-too-new" (more than
// MaxFutureBlockTime after now, the node's clock in Unix seconds) and
// "bad-version(0x%08x)" (version below 2, 3 or 4 once BIP34, BIP66 or BIP65
// is active at the new height).
func ContextualCheckBlockHeader(h *wire.Header, prev *BlockNode, now int64, p *params.Params) error {
	if prev == nil {
		return ruleErr("prev-blk-not-found", "no parent for header %s", h.BlockHash())
	}
	height := prev.Height + 1

	if want := NextWorkRequired(prev, h, p); h.Bits != want {
		return ruleErr("bad-diffbits", "incorrect proof of work: nBits %08x, want %08x at height %d", h.Bits, want, height)
	}

	t := int64(h.Time)
	if mtp := prev.MedianTimePast(); t <= mtp {
		return ruleErr("time-too-old", "block's timestamp is too early: %d <= median time past %d", t, mtp)
	}

	if p.EnforceBIP94 {
		interval := p.DifficultyAdjustmentInterval()
		if interval > 0 && height%interval == 0 && t < int64(prev.Header.Time)-MaxTimewarp {
			return ruleErr("time-timewarp-attack", "block's timestamp %d is too early on diff adjustment block (parent %d)", t, prev.Header.Time)
		}
	}

	if t > now+MaxFutureBlockTime {
		return ruleErr("time-too-new", "block timestamp too far in the future: %d > %d", t, now+MaxFutureBlockTime)
	}

	v := h.Version
	if (v < 2 && height >= p.BIP34Height) || (v < 3 && height >= p.BIP66Height) || (v < 4 && height >= p.BIP65Height) {
		reason := fmt.Sprintf("bad-version(0x%08x)", uint32(v))
		return &RuleError{Reason: reason, Detail: fmt.Sprintf("rejected nVersion=0x%08x block", uint32(v))}
	}
	return nil
}

// AcceptHeader validates a header and adds it to the index, as Core's
// AcceptBlockHeader: a known header returns its node (or "duplicate" if it
// is marked invalid); then CheckBlockHeader; an unknown parent gives
// ErrOrphanHeader ("prev-blk-not-found"); an invalid parent "bad-prevblk";
// then ContextualCheckBlockHeader with now as the clock. A header failing a
// check is not added.
func (bi *BlockIndex) AcceptHeader(h wire.Header, now int64) (*BlockNode, error) {
	hash := h.BlockHash()
	if n := bi.Lookup(hash); n != nil {
		if n.Status.Invalid() {
			return n, ruleErr("duplicate", "block %s is marked invalid (%s)", hash, n.RejectReason)
		}
		return n, nil
	}
	if err := CheckBlockHeader(&h, hash, bi.params); err != nil {
		return nil, err
	}
	prev := bi.Lookup(h.PrevBlock)
	if prev == nil {
		return nil, fmt.Errorf("%w: block %s, parent %s", ErrOrphanHeader, hash, h.PrevBlock)
	}
	if prev.Status.Invalid() {
		return nil, ruleErr("bad-prevblk", "previous block %s is invalid", prev.Hash)
	}
	if err := ContextualCheckBlockHeader(&h, prev, now, bi.params); err != nil {
		return nil, err
	}
	return bi.AddHeader(h)
}
