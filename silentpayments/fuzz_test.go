package silentpayments

import (
	"errors"
	"slices"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"utxod/wire"
)

// encodeScripts is the fuzz target's raw prevout encoding: mode byte 0, then
// each script as a length byte and its bytes.
func encodeScripts(scripts [][]byte) []byte {
	b := []byte{0}
	for _, s := range scripts {
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodePrevouts turns the fuzzer's bytes into prevout scripts for tx.
//
// Even mode byte: the rest is a list of length-prefixed scripts, used as is
// (so the count may differ from the inputs'). Odd mode byte: one template
// byte per input builds a prevout that matches the input's own scriptSig or
// witness (P2PKH, P2WPKH, P2SH-P2WPKH, P2TR from the witness or the blob,
// SegWit v2, none), so that random transactions reach the key parsing.
func decodePrevouts(tx *wire.Tx, blob []byte) [][]byte {
	if len(blob) == 0 {
		return nil
	}
	mode, rest := blob[0], blob[1:]
	var out [][]byte
	if mode%2 == 0 {
		for len(rest) > 0 {
			n := int(rest[0])
			rest = rest[1:]
			n = min(n, len(rest))
			out = append(out, rest[:n])
			rest = rest[n:]
		}
		return out
	}
	h := newHash160er()
	last := func(w [][]byte) []byte {
		if len(w) == 0 {
			return nil
		}
		return w[len(w)-1]
	}
	for i := range tx.Inputs {
		in := &tx.Inputs[i]
		var kind byte
		if i < len(rest) {
			kind = rest[i]
		}
		switch kind % 7 {
		case 0:
			ss := in.Script
			k := ss[max(0, len(ss)-33):]
			sum := h.sum(k)
			out = append(out, slices.Concat([]byte{0x76, 0xa9, 0x14}, sum[:], []byte{0x88, 0xac}))
		case 1:
			sum := h.sum(last(in.Witness))
			out = append(out, slices.Concat([]byte{0x00, 0x14}, sum[:]))
		case 2:
			var redeem []byte
			if len(in.Script) > 0 {
				redeem = in.Script[1:]
			}
			sum := h.sum(redeem)
			out = append(out, slices.Concat([]byte{0xa9, 0x14}, sum[:], []byte{0x87}))
		case 3:
			x := make([]byte, 32)
			copy(x, last(in.Witness))
			out = append(out, slices.Concat([]byte{0x51, 0x20}, x))
		case 4:
			x := make([]byte, 32)
			copy(x, rest)
			out = append(out, slices.Concat([]byte{0x51, 0x20}, x))
		case 5:
			out = append(out, slices.Concat([]byte{byte(0x52 + kind%15), 0x20}, make([]byte, 32)))
		default:
			out = append(out, nil)
		}
	}
	return out
}

func FuzzComputeTweak(f *testing.F) {
	for _, c := range loadVectors(f) {
		for _, v := range c.Receiving {
			if len(v.Given.Outputs) > 8 {
				continue
			}
			raw, prevouts := buildVectorTx(f, v.Given.Vin, v.Given.Outputs)
			f.Add(raw, encodeScripts(prevouts))
			f.Add(raw, []byte{1, 0, 1, 2, 3})
		}
	}
	k1, k2 := newKey(1), newKey(2)
	for _, ins := range [][]testIn{
		{p2wpkhIn(k1, txid(1), 0), p2trKeyPathIn(k2, txid(2), 1)},
		{p2shP2wpkhIn(k1, txid(1), 0), p2trScriptPathIn(k2, numsH[:], txid(2), 1)},
		{p2pkhIn(k1, txid(1), 0), p2wpkhIn(k1.negate(), txid(2), 1)},
	} {
		tx, prevouts := buildTx(f, ins, [][]byte{payTo})
		f.Add(tx.Raw, encodeScripts(prevouts))
		f.Add(tx.Raw, []byte{1, 1, 3, 2})
	}
	f.Add([]byte{}, []byte{})

	f.Fuzz(func(t *testing.T, raw, blob []byte) {
		tx, err := wire.ParseTx(raw)
		if err != nil {
			return
		}
		prevouts := decodePrevouts(tx, blob)
		tweak, ok, err := ComputeTweak(tx, prevouts)
		if err != nil {
			if ok || !errors.Is(err, ErrPrevoutCount) || len(prevouts) == len(tx.Inputs) {
				t.Fatalf("ok=%v err=%v with %d prevouts for %d inputs", ok, err, len(prevouts), len(tx.Inputs))
			}
			return
		}
		outs, maxValue := TaprootOutputs(tx)
		if HasTaprootOutput(tx) != (len(outs) > 0) {
			t.Fatal("HasTaprootOutput disagrees with TaprootOutputs")
		}
		for _, o := range outs {
			if o.Value > maxValue {
				t.Fatalf("output value %d above max %d", o.Value, maxValue)
			}
		}
		if !ok {
			return
		}
		if len(outs) == 0 || tx.IsCoinbase() {
			t.Fatal("tweak for a transaction without taproot output or a coinbase")
		}
		var p secp256k1.JacobianPoint
		if !parseCompressed(tweak[:], &p) {
			t.Fatalf("tweak %x is not a compressed point", tweak)
		}
		// Deterministic and independent of the prevout slices' identity.
		again, ok2, err2 := ComputeTweak(tx, slices.Clone(prevouts))
		if again != tweak || !ok2 || err2 != nil {
			t.Fatal("not deterministic")
		}
	})
}
