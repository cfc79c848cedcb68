package chainstate

import (
	"bytes"
	"math/big"

	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// BlockInfo is a copy of one block-index entry and of its place in the
// active chain, taken under the chainstate's lock or (Tip, AtHeight) from
// the active chain published when the last write hold ended: it never
// changes after it is returned, so readers need no lock of their own.
type BlockInfo struct {
	Hash wire.Hash
	// Header.PrevBlock is the parent (zero for genesis).
	Header wire.Header
	Height int32
	// ChainWork is the work of the block and its ancestors. It is the
	// block index's own value, which never changes after the node is
	// created: read it, never modify it.
	ChainWork    *big.Int
	Status       validate.BlockStatus
	RejectReason string // Core reject reason when Status has StatusFailed
	// MedianTime is the block's median-time-past (Core's
	// GetMedianTimePast).
	MedianTime int64
	// InActiveChain reports the block on the active chain; Next is then
	// its successor's hash (zero at the tip).
	InActiveChain bool
	Next          wire.Hash
	// TipHeight is the active tip's height when the copy was taken.
	TipHeight int32
	// Orphan is a recently held block whose parent was unknown: only Hash
	// and Header.PrevBlock are set, and Height is -1.
	Orphan bool
}

// infoLocked copies n; callers hold cs.mu.
func (cs *Chainstate) infoLocked(n *validate.BlockNode) BlockInfo {
	bi := BlockInfo{
		Hash:         n.Hash,
		Header:       n.Header,
		Height:       n.Height,
		ChainWork:    n.ChainWork,
		Status:       n.Status,
		RejectReason: n.RejectReason,
		MedianTime:   n.MedianTimePast(),
		TipHeight:    cs.chain.Tip().Height,
	}
	if cs.chain.Contains(n) {
		bi.InActiveChain = true
		if next := cs.chain.At(n.Height + 1); next != nil {
			bi.Next = next.Hash
		}
	}
	return bi
}

// Tip returns the active tip. It takes no lock: the answer is the tip when
// the last write hold ended (activeview.go), so it never waits for a block
// being connected.
func (cs *Chainstate) Tip() BlockInfo {
	v := cs.view.load()
	return v.info(v.at(v.height))
}

// Lookup returns the index entry of hash, or for a recently held orphan
// (not in the index) a BlockInfo with Orphan set; false if unknown.
func (cs *Chainstate) Lookup(hash wire.Hash) (BlockInfo, bool) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	n := cs.index.Lookup(hash)
	if n == nil {
		return cs.orphans.info(hash)
	}
	return cs.infoLocked(n), true
}

// AtHeight returns the active-chain block at height (false beyond the
// tip), from the same lock-free view as Tip.
func (cs *Chainstate) AtHeight(h int32) (BlockInfo, bool) {
	v := cs.view.load()
	e := v.at(h)
	if e == nil {
		return BlockInfo{}, false
	}
	return v.info(e), true
}

// ActiveFrom returns up to max active-chain blocks from hash upward, all
// from one view of the chain; none if hash is not on the active chain.
func (cs *Chainstate) ActiveFrom(hash wire.Hash, max int) []BlockInfo {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	n := cs.index.Lookup(hash)
	var out []BlockInfo
	for ; n != nil && cs.chain.Contains(n) && len(out) < max; n = cs.chain.Next(n) {
		out = append(out, cs.infoLocked(n))
	}
	return out
}

// Coin looks up an unspent output at the tip. The script is the caller's.
func (cs *Chainstate) Coin(op utxo.Outpoint) (utxo.Coin, bool, error) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	c, ok, err := cs.store.Coin(op)
	if ok {
		c.Script = bytes.Clone(c.Script)
	}
	return c, ok, err
}

// Coins looks up several outpoints and the tip in one view (no block
// connects in between): found[i] reports whether ops[i] is unspent, coins
// holds the unspent ones in order (scripts are the caller's).
func (cs *Chainstate) Coins(ops []utxo.Outpoint) (found []bool, coins []utxo.Coin, tip BlockInfo, err error) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	found = make([]bool, len(ops))
	for i, op := range ops {
		c, ok, err := cs.store.Coin(op)
		if err != nil {
			return nil, nil, BlockInfo{}, err
		}
		if ok {
			found[i] = true
			c.Script = bytes.Clone(c.Script)
			coins = append(coins, c)
		}
	}
	return found, coins, cs.infoLocked(cs.chain.Tip()), nil
}

// BlockData returns a copy of the raw block hash if the store still holds
// it (store.ErrNoBlock otherwise): stored side branches and the last
// KeepBlocks blocks of the active chain.
func (cs *Chainstate) BlockData(hash wire.Hash) ([]byte, error) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	raw, err := cs.store.Block(hash)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(raw), nil
}
