package chainstate

import (
	"bytes"
	"errors"
	"fmt"

	"utxod/store"
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
	// ChainWork is the work of the block and its ancestors.
	ChainWork    validate.Work
	Status       validate.BlockStatus
	RejectReason string // Core reject reason when Status has StatusFailed
	// Stats are the block's transaction count, size and weight, zero when
	// unknown (its data never accepted, or an index entry persisted
	// without them).
	Stats validate.BlockStats
	// MedianTime is the block's median-time-past (Core's
	// GetMedianTimePast).
	MedianTime int64
	// InActiveChain reports the block on the active chain; Next is then
	// its successor's hash (zero at the tip).
	InActiveChain bool
	Next          wire.Hash
	// TipHeight and TipHash are the active tip when the copy was taken:
	// the tip the copy describes the block at.
	TipHeight int32
	TipHash   wire.Hash
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
		Stats:        n.Stats,
		MedianTime:   n.MedianTimePast(),
		TipHeight:    cs.chain.Tip().Height,
		TipHash:      cs.chain.Tip().Hash,
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

// ErrUnknownBlock reports a block hash the index does not hold.
var ErrUnknownBlock = errors.New("chainstate: unknown block")

// SpentOutputs returns, in one view with the block's index entry (and so
// its tip), the outputs each transaction of the active-chain block hash
// spent, the coinbase excluded, each in input order: Core's CBlockUndo
// (vtxundo[i].vprevout), which /rest/spenttxouts serves. Coins that existed
// before the block come from its undo record, those created and spent in
// the block from the block itself. Genesis spends nothing. A block off the
// active chain, or whose undo record is gone, is store.ErrNoUndo; one whose
// data is gone, store.ErrNoBlock; an unknown one, ErrUnknownBlock.
func (cs *Chainstate) SpentOutputs(hash wire.Hash) ([][]utxo.Coin, BlockInfo, error) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	n := cs.index.Lookup(hash)
	if n == nil {
		return nil, BlockInfo{}, ErrUnknownBlock
	}
	bi := cs.infoLocked(n)
	if !bi.InActiveChain {
		return nil, bi, store.ErrNoUndo
	}
	if n.Height == 0 {
		return nil, bi, nil
	}
	sr, ok := cs.store.(store.SpentReader)
	if !ok {
		return nil, bi, store.ErrNoUndo
	}
	undo, err := sr.Spent(hash)
	if err != nil {
		return nil, bi, err
	}
	raw, err := cs.store.Block(hash)
	if err != nil {
		return nil, bi, err
	}
	b, err := wire.ParseBlock(raw)
	if err != nil {
		return nil, bi, fmt.Errorf("chainstate: stored block %s: %w", hash, err)
	}
	created := make(map[wire.Hash]int, len(b.Txs)) // txid → index in b.Txs
	out := make([][]utxo.Coin, 0, max(len(b.Txs)-1, 0))
	for i := range b.Txs {
		tx := &b.Txs[i]
		if i > 0 {
			prev := make([]utxo.Coin, len(tx.Inputs))
			for j := range tx.Inputs {
				in := &tx.Inputs[j]
				if k, ok := created[in.PrevHash]; ok && int(in.PrevIndex) < len(b.Txs[k].Outputs) {
					o := &b.Txs[k].Outputs[in.PrevIndex]
					prev[j] = utxo.Coin{Value: o.Value, Script: bytes.Clone(o.Script), Height: uint32(n.Height)}
					continue
				}
				if len(undo) == 0 || undo[0].Outpoint != (utxo.Outpoint{Hash: in.PrevHash, Index: in.PrevIndex}) {
					return nil, bi, fmt.Errorf("chainstate: block %s: undo record does not match input %d of %s", hash, j, tx.TxID)
				}
				prev[j] = undo[0].Coin
				prev[j].Script = bytes.Clone(prev[j].Script)
				undo = undo[1:]
			}
			out = append(out, prev)
		}
		created[tx.TxID] = i
	}
	if len(undo) != 0 {
		return nil, bi, fmt.Errorf("chainstate: block %s: undo record has %d coins no input spends", hash, len(undo))
	}
	return out, bi, nil
}
