package events

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"utxod/scripthash"
	"utxod/silentpayments"
	"utxod/utxo"
	"utxod/wire"
)

// blockData is a block the Hub or a replay derives events from: its parse
// (immutable bytes) and the coins it spent that existed before it (the
// undo data's Spent list, scripts owned), in input order.
type blockData struct {
	b      *wire.Block
	height int32
	spent  []utxo.Entry
}

func (d *blockData) cursor() Cursor { return Cursor{Height: d.height, Hash: d.b.Hash} }
func (d *blockData) parent() Cursor {
	return Cursor{Height: d.height - 1, Hash: d.b.Header.PrevBlock}
}

// touch is one output a block creates or spends, with its scripthash.
type touch struct {
	op      utxo.Outpoint
	value   int64
	sh      scripthash.Hash
	spend   bool
	spender wire.Hash // spending txid
	input   uint32    // spending input's index
}

// touches lists what d's block does to outputs in block order: for each
// transaction its inputs' spends, then its outputs. An input spending an
// output of the same block finds it in the block; the others take the
// spent coins in order.
func touches(d *blockData) ([]touch, error) {
	b := d.b
	n := 0
	for i := range b.Txs {
		n += len(b.Txs[i].Inputs) + len(b.Txs[i].Outputs)
	}
	out := make([]touch, 0, n)
	var inBlock map[wire.Hash]int // txid → index, built when needed
	k := 0
	for ti := range b.Txs {
		tx := &b.Txs[ti]
		if ti > 0 {
			for ii := range tx.Inputs {
				in := &tx.Inputs[ii]
				op := utxo.Outpoint{Hash: in.PrevHash, Index: in.PrevIndex}
				t := touch{op: op, spend: true, spender: tx.TxID, input: uint32(ii)}
				if k < len(d.spent) && d.spent[k].Outpoint == op {
					t.value, t.sh = d.spent[k].Value, scripthash.Of(d.spent[k].Script)
					k++
				} else {
					if inBlock == nil {
						inBlock = make(map[wire.Hash]int, len(b.Txs))
						for j := range b.Txs {
							inBlock[b.Txs[j].TxID] = j
						}
					}
					j, ok := inBlock[op.Hash]
					if !ok || j >= ti || int(op.Index) >= len(b.Txs[j].Outputs) {
						return nil, fmt.Errorf("events: block %s: input %s:%d spends a coin its undo data does not hold", b.Hash, op.Hash, op.Index)
					}
					o := &b.Txs[j].Outputs[op.Index]
					t.value, t.sh = o.Value, scripthash.Of(o.Script)
				}
				out = append(out, t)
			}
		}
		for vi := range tx.Outputs {
			o := &tx.Outputs[vi]
			out = append(out, touch{op: utxo.Outpoint{Hash: tx.TxID, Index: uint32(vi)}, value: o.Value, sh: scripthash.Of(o.Script)})
		}
	}
	return out, nil
}

// blockTweaks is the BIP352 tweak data of d's block: each silent payment
// eligible transaction's tweak (silentpayments.ComputeTweak, as the tweak
// index computes it) and largest taproot output value, in block order. The
// scripts the inputs spend come from the spent coins in order, or from the
// block for an output of the same block.
func blockTweaks(d *blockData) ([]TxTweak, error) {
	b := d.b
	out := []TxTweak{}
	var inBlock map[wire.Hash]int
	k := 0
	for ti := 1; ti < len(b.Txs); ti++ {
		tx := &b.Txs[ti]
		want := silentpayments.HasTaprootOutput(tx)
		var scripts [][]byte
		if want {
			scripts = make([][]byte, len(tx.Inputs))
		}
		for ii := range tx.Inputs {
			in := &tx.Inputs[ii]
			if k < len(d.spent) && d.spent[k].Hash == in.PrevHash && d.spent[k].Index == in.PrevIndex {
				if want {
					scripts[ii] = d.spent[k].Script
				}
				k++
				continue
			}
			if inBlock == nil {
				inBlock = make(map[wire.Hash]int, len(b.Txs))
				for j := range b.Txs {
					inBlock[b.Txs[j].TxID] = j
				}
			}
			j, ok := inBlock[in.PrevHash]
			if !ok || j >= ti || int(in.PrevIndex) >= len(b.Txs[j].Outputs) {
				return nil, fmt.Errorf("events: block %s: input %s:%d spends a coin its undo data does not hold", b.Hash, in.PrevHash, in.PrevIndex)
			}
			if want {
				scripts[ii] = b.Txs[j].Outputs[in.PrevIndex].Script
			}
		}
		if !want {
			continue
		}
		tweak, ok, err := silentpayments.ComputeTweak(tx, scripts)
		if err != nil {
			return nil, fmt.Errorf("events: block %s: %w", b.Hash, err)
		}
		if ok {
			_, maxValue := silentpayments.TaprootOutputs(tx)
			out = append(out, TxTweak{Txid: tx.TxID.String(), Tweak: hex.EncodeToString(tweak[:]), MaxTaprootValue: maxValue})
		}
	}
	return out, nil
}

// encoder builds the messages of one block, connected or disconnected.
type encoder struct {
	d          *blockData
	disconnect bool
	block      string // d's hash, hex
}

func newEncoder(d *blockData, disconnect bool) *encoder {
	return &encoder{d: d, disconnect: disconnect, block: d.b.Hash.String()}
}

// at is the cursor of the block's own events: the parent for a connect
// (resuming there replays the block), the block itself for a disconnect
// (resuming there replays its reversal).
func (e *encoder) at() Cursor {
	if e.disconnect {
		return e.d.cursor()
	}
	return e.d.parent()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // plain strings and numbers
		panic(err)
	}
	return b
}

// script is the event of a touch of a watched script.
func (e *encoder) script(t *touch) Message {
	op, sh, h := outpointString(t.op), t.sh.String(), e.d.height
	switch {
	case !t.spend && !e.disconnect:
		return Message{KindOutputCreated, e.at(), mustJSON(OutputCreated{op, t.value, sh, h, e.block})}
	case !t.spend:
		return Message{KindOutputRemoved, e.at(), mustJSON(OutputRemoved{op, t.value, sh, h, e.block})}
	case !e.disconnect:
		return Message{KindOutputSpent, e.at(), mustJSON(OutputSpent{op, t.value, sh, t.spender.String(), t.input, h, e.block})}
	default:
		return Message{KindOutputRestored, e.at(), mustJSON(OutputRestored{op, t.value, sh, t.spender.String(), t.input, h, e.block})}
	}
}

// outpoint is the event of a spend of a watched outpoint.
func (e *encoder) outpoint(t *touch) Message {
	op, h := outpointString(t.op), e.d.height
	if e.disconnect {
		return Message{KindUnspent, e.at(), mustJSON(Unspent{op, t.spender.String(), t.input, h, e.block})}
	}
	return Message{KindSpent, e.at(), mustJSON(Spent{op, t.spender.String(), t.input, h, e.block})}
}

// tweaks is the tweaks event of a connected block.
func (e *encoder) tweaks(list []TxTweak) Message {
	return Message{KindTweaks, e.at(), mustJSON(Tweaks{e.d.height, e.block, list})}
}

// marker closes the block's events: block_connected (cursor: the block)
// or block_disconnected (cursor: its parent).
func (e *encoder) marker() Message {
	d := e.d
	if e.disconnect {
		return Message{KindBlockDisconnected, d.parent(), mustJSON(BlockDisconnected{e.block, d.height, d.b.Header.PrevBlock.String()})}
	}
	return Message{KindBlockConnected, d.cursor(), mustJSON(BlockConnected{e.block, d.height, d.b.Header.PrevBlock.String()})}
}

// advance is the marker for a stream that did not ask for blocks: only the
// cursor (an SSE frame with an id and no data), so its position moves on.
func (e *encoder) advance() Message {
	m := e.marker()
	return Message{Cursor: m.Cursor}
}

// filterEvents derives the messages of d for one filter (a replay), in
// order, the marker last; a disconnect reverses the block's order.
func filterEvents(d *blockData, disconnect bool, f *Filter) ([]Message, error) {
	ts, err := touches(d)
	if err != nil {
		return nil, err
	}
	e := newEncoder(d, disconnect)
	var out []Message
	visit := func(t *touch) {
		if f.hasScript(t.sh) {
			out = append(out, e.script(t))
		}
		if t.spend && len(f.Outpoints) > 0 && f.hasOutpoint(t.op) {
			out = append(out, e.outpoint(t))
		}
	}
	if disconnect {
		for i := len(ts) - 1; i >= 0; i-- {
			visit(&ts[i])
		}
	} else {
		for i := range ts {
			visit(&ts[i])
		}
	}
	if f.Tweaks && !disconnect {
		list, err := blockTweaks(d)
		if err != nil {
			return nil, err
		}
		out = append(out, e.tweaks(list))
	}
	if f.Blocks || f.Tweaks || len(out) > 0 {
		out = append(out, e.marker())
	} else {
		out = append(out, e.advance())
	}
	return out, nil
}
