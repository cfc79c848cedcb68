package validate

import (
	"utxod/script"
	"utxod/utxo"
	"utxod/wire"
)

// ScriptFlags is Core's GetBlockScriptFlags: P2SH, WITNESS and TAPROOT on for
// every block but the network's exceptions, then DERSIG, CLTV, CSV and
// NULLDUMMY from their activation heights.
func (v *Validator) ScriptFlags(height int32, hash wire.Hash) script.Flags {
	p := v.Params
	flags := script.P2SH | script.Witness | script.Taproot
	switch {
	case p.BIP16Exception != (wire.Hash{}) && hash == p.BIP16Exception:
		flags = 0
	case p.TaprootException != (wire.Hash{}) && hash == p.TaprootException:
		flags = script.P2SH | script.Witness
	}
	if deploymentActive(height, p.BIP66Height) {
		flags |= script.DERSig
	}
	if deploymentActive(height, p.BIP65Height) {
		flags |= script.CheckLockTimeVerify
	}
	if deploymentActive(height, p.CSVHeight) {
		flags |= script.CheckSequenceVerify
	}
	if deploymentActive(height, p.SegwitHeight) {
		flags |= script.NullDummy
	}
	return flags
}

// ChecksBIP30 reports whether connecting b on prev checks Core's BIP30
// rule, reading the coins of b's own txids.
func (v *Validator) ChecksBIP30(b *wire.Block, prev *BlockNode) bool {
	return prev != nil && v.enforceBIP30(prev.Height+1, b.Hash, prev)
}

// bip30Exception reports whether the block is one of the two whose coinbase
// overwrote an unspent one, which Core lets through unchecked.
func (v *Validator) bip30Exception(height int32, hash wire.Hash) bool {
	exc, ok := v.Params.BIP30Exceptions[height]
	return ok && exc == hash
}

// enforceBIP30 is Core's rule for when ConnectBlock checks that no output
// overwrites an unspent one (validation.cpp, ConnectBlock).
func (v *Validator) enforceBIP30(height int32, hash wire.Hash, prev *BlockNode) bool {
	p := v.Params
	if v.bip30Exception(height, hash) {
		return false
	}
	enforce := true
	if p.BIP34Height > 0 && p.BIP34Height <= prev.Height {
		if a := prev.Ancestor(p.BIP34Height); a != nil && a.Hash == p.BIP34Hash {
			enforce = false
		}
	}
	return enforce || height >= BIP34ImpliesBIP30Limit
}

// anyUnspent is Core's BIP30 question for one transaction: does view hold
// an unspent output txid:o for any o < n (HaveCoin of every output)? A
// utxo.TxOutputsView answers it in one lookup.
func anyUnspent(view utxo.View, txid wire.Hash, n uint32) (bool, error) {
	if txv, ok := view.(utxo.TxOutputsView); ok {
		return txv.AnyUnspent(txid, n)
	}
	for o := range n {
		if _, found, err := view.Coin(utxo.Outpoint{Hash: txid, Index: o}); err != nil || found {
			return found, err
		}
	}
	return false, nil
}

// overlay tracks coins a block creates and spends on top of a read-only view.
type overlay struct {
	view    utxo.View
	created map[utxo.Outpoint]int // index into delta.Created, -1 once spent
	spent   map[utxo.Outpoint]struct{}
	delta   utxo.Delta
}

func (o *overlay) lookup(op utxo.Outpoint) (utxo.Coin, bool, error) {
	if i, ok := o.created[op]; ok {
		if i < 0 {
			return utxo.Coin{}, false, nil
		}
		return o.delta.Created[i].Coin, true, nil
	}
	if _, ok := o.spent[op]; ok {
		return utxo.Coin{}, false, nil
	}
	return o.view.Coin(op)
}

func (o *overlay) spend(op utxo.Outpoint, c utxo.Coin) {
	if i, ok := o.created[op]; ok {
		o.delta.Created[i].Coin.Script = nil // marks spent; compacted at the end
		o.delta.Created[i].Index = ^uint32(0)
		o.created[op] = -1
		return
	}
	o.spent[op] = struct{}{}
	o.delta.Spent = append(o.delta.Spent, utxo.Entry{Outpoint: op, Coin: c})
}

// ConnectBlock is Core's ConnectBlock: BIP30, every input's existence,
// maturity, value ranges and fee (CheckTxInputs), BIP68 sequence locks, the
// sigop-cost limit, the coinbase amount and every input script, verified in
// parallel. It returns the block's net effect on the coin set; view is
// read, never written. prev is nil only for the genesis block, whose outputs
// never enter the coin set.
func (v *Validator) ConnectBlock(b *wire.Block, prev *BlockNode, view utxo.View) (*utxo.Delta, error) {
	d, check, err := v.connectBlock(b, prev, view, false, false)
	if err != nil {
		return nil, err
	}
	if err := check.Wait(); err != nil {
		return nil, err
	}
	return d, nil
}

// ConnectBlockDeferred is ConnectBlock with the script verification left
// running: it returns the block's delta once every other rule has passed,
// and the pending check whose Wait gives the scripts' verdict. The delta
// must not become visible (flushed, or read by anyone else) before Wait
// returns nil. The check owns copies of the prevout scripts, so view may
// change (the caller connects the delta, then the next block) while it runs.
func (v *Validator) ConnectBlockDeferred(b *wire.Block, prev *BlockNode, view utxo.View) (*utxo.Delta, *ScriptCheck, error) {
	return v.connectBlock(b, prev, view, true, false)
}

// ConnectOptions select how ConnectBlockWith handles the input scripts.
type ConnectOptions struct {
	// Deferred leaves the script verification running, as
	// ConnectBlockDeferred; otherwise the returned check has finished.
	Deferred bool
	// SkipScripts does not verify the input scripts, and only them: Core's
	// ConnectBlock with fScriptChecks false (assume-valid, see
	// AssumeValid.ScriptCheckReason). Every other rule, sigop costs
	// included, is checked as usual.
	SkipScripts bool
}

// ConnectBlockWith is ConnectBlock (or, with o.Deferred,
// ConnectBlockDeferred) with options. The returned check is never nil; its
// Wait gives the scripts' verdict (nil at once when they were skipped).
func (v *Validator) ConnectBlockWith(b *wire.Block, prev *BlockNode, view utxo.View, o ConnectOptions) (*utxo.Delta, *ScriptCheck, error) {
	d, check, err := v.connectBlock(b, prev, view, o.Deferred, o.SkipScripts)
	if err != nil || o.Deferred {
		return d, check, err
	}
	if err := check.Wait(); err != nil {
		return nil, nil, err
	}
	return d, check, nil
}

func (v *Validator) connectBlock(b *wire.Block, prev *BlockNode, view utxo.View, ownPrevouts, skipScripts bool) (_ *utxo.Delta, _ *ScriptCheck, err error) {
	if prev == nil {
		return &utxo.Delta{}, v.newScriptCheck(0, 0, 0), nil
	}
	p := v.Params
	height := prev.Height + 1
	flags := v.ScriptFlags(height, b.Hash)
	csv := deploymentActive(height, p.CSVHeight)

	// Sized once: growing the delta's lists by appending was a large share
	// of an import's allocations (bench/decisions.md). The maps come from
	// the pool, cleared.
	nIn, nOut := 0, 0
	for i := range b.Txs {
		if i > 0 {
			nIn += len(b.Txs[i].Inputs)
		}
		nOut += len(b.Txs[i].Outputs)
	}
	maps := v.overlayMaps(len(b.Txs))
	defer v.putOverlayMaps(maps, nIn+nOut)
	ov := &overlay{view: view, created: maps.created, spent: maps.spent}
	ov.delta.Created = make([]utxo.Entry, 0, nOut)
	ov.delta.Spent = make([]utxo.Entry, 0, nIn)
	// One array each for the block's prevouts and coins, cut per
	// transaction (the prevouts stay with the script checks).
	allPrevouts := make([]wire.TxOut, nIn)
	allCoins := make([]utxo.Coin, nIn)
	// Core checks BIP30 before it looks up any input. Here it runs last, so
	// that a store reading the block's own txids (which it asks for) does
	// so while the input scripts verify; whatever else a block breaks, a
	// BIP30 failure is still the reason given, as Core's.
	enforceBIP30 := v.enforceBIP30(height, b.Hash, prev)
	bip30Done := !enforceBIP30
	ov.delta.Fresh = !v.bip30Exception(height, b.Hash)
	defer func() {
		if err != nil && !bip30Done {
			if berr := checkBIP30(b, view); berr != nil {
				err = berr
			}
		}
	}()

	var fees int64
	var sigopCost int64
	// The scripts start on the other workers as each transaction's inputs
	// are found, as Core's ConnectBlock feeds its check queue.
	var check *ScriptCheck
	var owned []byte // a deferred check's copies of the prevout scripts
	if !skipScripts {
		check = v.newScriptCheck(len(b.Txs)-1, nIn, flags)
		defer func() {
			if err != nil {
				check.abandon() // its workers may read the view until then
			}
		}()
		if ownPrevouts {
			owned = make([]byte, 0, nIn*25) // a P2PKH script each, grown if need be
		}
	}
	for i := range b.Txs {
		tx := &b.Txs[i]
		coinbase := i == 0
		var prevouts []wire.TxOut
		var coins []utxo.Coin
		if !coinbase {
			n := len(tx.Inputs)
			prevouts, allPrevouts = allPrevouts[:n:n], allPrevouts[n:]
			coins, allCoins = allCoins[:n:n], allCoins[n:]
			// CheckTxInputs (src/consensus/tx_verify.cpp): all inputs must
			// exist before anything else is checked.
			for j := range tx.Inputs {
				in := &tx.Inputs[j]
				c, found, err := ov.lookup(utxo.Outpoint{Hash: in.PrevHash, Index: in.PrevIndex})
				if err != nil {
					return nil, nil, err
				}
				if !found {
					return nil, nil, ruleErr("bad-txns-inputs-missingorspent", "tx %s input %d spends %s:%d", tx.TxID, j, in.PrevHash, in.PrevIndex)
				}
				coins[j] = c
				prevouts[j] = wire.TxOut{Value: c.Value, Script: c.Script}
			}
			var valueIn int64
			for j, c := range coins {
				if c.Coinbase && int64(height)-int64(c.Height) < int64(p.CoinbaseMaturity) {
					return nil, nil, ruleErr("bad-txns-premature-spend-of-coinbase", "tx %s input %d: tried to spend coinbase at depth %d", tx.TxID, j, height-int32(c.Height))
				}
				valueIn += c.Value
				if !MoneyRange(c.Value) || !MoneyRange(valueIn) {
					return nil, nil, ruleErr("bad-txns-inputvalues-outofrange", "tx %s", tx.TxID)
				}
			}
			var valueOut int64
			for _, out := range tx.Outputs {
				valueOut += out.Value
			}
			if valueIn < valueOut {
				return nil, nil, ruleErr("bad-txns-in-belowout", "tx %s: value in %d < value out %d", tx.TxID, valueIn, valueOut)
			}
			fee := valueIn - valueOut
			if !MoneyRange(fee) {
				return nil, nil, ruleErr("bad-txns-fee-outofrange", "tx %s", tx.TxID)
			}
			fees += fee
			if !MoneyRange(fees) {
				return nil, nil, ruleErr("bad-txns-accumulated-fee-outofrange", "accumulated fee in the block out of range")
			}
			if csv && !sequenceLocksOK(tx, coins, prev) {
				return nil, nil, ruleErr("bad-txns-nonfinal", "contains a non-BIP68-final transaction %s", tx.TxID)
			}
		}
		sigopCost += script.TxSigOpCost(tx, prevouts, flags) // GetTransactionSigOpCost
		if sigopCost > MaxBlockSigOpsCost {
			return nil, nil, ruleErr("bad-blk-sigops", "too many sigops")
		}
		if !coinbase {
			// Core: `if (!tx.IsCoinBase() && fScriptChecks)` CheckInputScripts.
			if check != nil {
				if ownPrevouts {
					owned = ownScripts(owned, prevouts)
				}
				check.add(tx, prevouts)
			}
			for j := range tx.Inputs {
				in := &tx.Inputs[j]
				ov.spend(utxo.Outpoint{Hash: in.PrevHash, Index: in.PrevIndex}, coins[j])
			}
		}
		// AddCoins: unspendable outputs never enter the set.
		for o, out := range tx.Outputs {
			if script.IsUnspendable(out.Script) {
				continue
			}
			op := utxo.Outpoint{Hash: tx.TxID, Index: uint32(o)}
			if coinbase && !enforceBIP30 {
				// A BIP30-exception coinbase overwrites the unspent coin.
				if old, found, err := ov.lookup(op); err != nil {
					return nil, nil, err
				} else if found {
					ov.delta.Overwritten = append(ov.delta.Overwritten, utxo.Entry{Outpoint: op, Coin: old})
				}
			}
			ov.created[op] = len(ov.delta.Created)
			ov.delta.Created = append(ov.delta.Created, utxo.Entry{Outpoint: op, Coin: utxo.Coin{
				Value: out.Value, Height: uint32(height), Coinbase: coinbase, Script: out.Script,
			}})
		}
	}
	reward := fees + p.Subsidy(height)
	var cbOut int64
	for _, out := range b.Txs[0].Outputs {
		cbOut += out.Value
	}
	if cbOut > reward {
		return nil, nil, ruleErr("bad-cb-amount", "coinbase pays too much (actual=%d vs limit=%d)", cbOut, reward)
	}
	if !bip30Done {
		bip30Done = true
		if err := checkBIP30(b, view); err != nil {
			return nil, nil, err
		}
	}
	if check == nil {
		check = v.newScriptCheck(0, 0, 0) // sealed, done
	} else {
		check.seal()
	}
	return ov.finish(), check, nil
}

// checkBIP30 is Core's BIP30 check (ConnectBlock): no transaction of b may
// have an unspent output in view already.
func checkBIP30(b *wire.Block, view utxo.View) error {
	for i := range b.Txs {
		tx := &b.Txs[i]
		if found, err := anyUnspent(view, tx.TxID, uint32(len(tx.Outputs))); err != nil {
			return err
		} else if found {
			return ruleErr("bad-txns-BIP30", "tried to overwrite transaction %s", tx.TxID)
		}
	}
	return nil
}

// overlayMaps are the created and spent maps of one block's overlay,
// pooled between blocks so that a connect does not build their tables again.
type overlayMaps struct {
	created map[utxo.Outpoint]int
	spent   map[utxo.Outpoint]struct{}
}

// maxPooledEntries is the largest block (inputs plus outputs) whose maps go
// back to the pool: maps never shrink, and clearing a huge one costs every
// later block.
const maxPooledEntries = 1 << 16

func (v *Validator) overlayMaps(txs int) *overlayMaps {
	if m, ok := v.overlays.Get().(*overlayMaps); ok {
		return m
	}
	return &overlayMaps{
		created: make(map[utxo.Outpoint]int, txs*2),
		spent:   make(map[utxo.Outpoint]struct{}, txs*2),
	}
}

func (v *Validator) putOverlayMaps(m *overlayMaps, entries int) {
	if entries > maxPooledEntries {
		return
	}
	clear(m.created)
	clear(m.spent)
	v.overlays.Put(m)
}

// finish fills in spent coins' creation facts and drops coins created and
// spent inside the block.
func (o *overlay) finish() *utxo.Delta {
	kept := o.delta.Created[:0]
	for _, e := range o.delta.Created {
		if e.Index != ^uint32(0) {
			kept = append(kept, e)
		}
	}
	o.delta.Created = kept
	return &o.delta
}

// sequenceLocksOK is Core's CalculateSequenceLocks + EvaluateSequenceLocks
// (BIP68) for a block whose parent is prev.
func sequenceLocksOK(tx *wire.Tx, coins []utxo.Coin, prev *BlockNode) bool {
	if tx.Version < 2 {
		return true
	}
	height := prev.Height + 1
	minHeight, minTime := int64(-1), int64(-1)
	for j := range tx.Inputs {
		seq := tx.Inputs[j].Sequence
		if seq&SequenceDisableFlag != 0 {
			continue
		}
		coinHeight := int32(coins[j].Height)
		if seq&SequenceTypeFlag != 0 {
			// The coin's time is the MTP of the block before the one that
			// created it; coins are at most `height`, so this is ≤ prev.
			coinTime := prev.Ancestor(max(coinHeight-1, 0)).MedianTimePast()
			minTime = max(minTime, coinTime+int64(seq&SequenceLockMask)<<SequenceGranularity-1)
		} else {
			minHeight = max(minHeight, int64(coinHeight)+int64(seq&SequenceLockMask)-1)
		}
	}
	return minHeight < int64(height) && minTime < prev.MedianTimePast()
}

// ownScripts appends the scripts of prevouts, which may live in the coin
// view's memory (it changes as later blocks connect), to buf and points
// prevouts at the copies. Earlier copies stay where they are when buf
// grows: workers may be reading them.
func ownScripts(buf []byte, prevouts []wire.TxOut) []byte {
	for i := range prevouts {
		s := prevouts[i].Script
		buf = append(buf, s...)
		prevouts[i].Script = buf[len(buf)-len(s) : len(buf) : len(buf)]
	}
	return buf
}
