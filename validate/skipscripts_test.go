package validate_test

import (
	"bytes"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/testkit/blockgen"
	"utxod/validate"
	"utxod/wire"
)

// TestSkipScriptsSkipsOnlyScripts connects blocks on the base tip with and
// without SkipScripts (Core's fScriptChecks false): a block whose only fault
// is a script connects when scripts are skipped, with the same delta as its
// validly signed twin has; a block with any other ConnectBlock fault is
// refused with the same reason either way.
func TestSkipScriptsSkipsOnlyScripts(t *testing.T) {
	e := newEnv(t)
	prev := e.tipNode()
	parse := func(raw []byte) *wire.Block {
		b, err := wire.ParseBlock(raw)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	connect := func(b *wire.Block, o validate.ConnectOptions) error {
		d, check, err := e.v.ConnectBlockWith(b, prev, e.cs, o)
		if err != nil {
			if d != nil || check != nil {
				t.Error("delta or check returned with an error")
			}
			return err
		}
		if o.Deferred {
			return check.Wait()
		}
		return nil
	}

	t.Run("bad signatures", func(t *testing.T) {
		p2pkh := e.spendCB(2, 1000)
		p2pkh.TxIn[0].SignatureScript[10] ^= 1
		op, pv := e.fundOut(1)
		p2wpkh := e.spendP2WPKH([]btcwire.OutPoint{op}, []blockgen.Prevout{pv}, blockgen.Out(pv.Value-1000, blockgen.OpTrue))
		good := p2wpkh.Copy()
		p2wpkh.TxIn[0].Witness[0][8] ^= 1
		for _, c := range []struct {
			name string
			tx   *btcwire.MsgTx
		}{{"P2PKH", p2pkh}, {"P2WPKH", p2wpkh}} {
			t.Run(c.name, func(t *testing.T) {
				tpl := withFee(e.template(), 1000)
				tpl.AddTx(c.tx)
				b := parse(finishRaw(tpl))
				if got := validate.Reason(connect(b, validate.ConnectOptions{})); got != scriptEvalFalse {
					t.Fatalf("verifying: %q, want %q", got, scriptEvalFalse)
				}
				if got := validate.Reason(connect(b, validate.ConnectOptions{Deferred: true})); got != scriptEvalFalse {
					t.Fatalf("verifying, deferred: %q", got)
				}
				for _, deferred := range []bool{false, true} {
					if err := connect(b, validate.ConnectOptions{SkipScripts: true, Deferred: deferred}); err != nil {
						t.Fatalf("skipping (deferred %v): %v", deferred, err)
					}
				}
			})
		}
		// The witness is not part of the txid: the bad and the good P2WPKH
		// spends make the same coin changes.
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(p2wpkh)
		bad := parse(finishRaw(tpl))
		tpl = withFee(e.template(), 1000)
		tpl.AddTx(good)
		twin := parse(finishRaw(tpl))
		dBad, _, err := e.v.ConnectBlockWith(bad, prev, e.cs, validate.ConnectOptions{SkipScripts: true})
		if err != nil {
			t.Fatal(err)
		}
		dGood, err := e.v.ConnectBlock(twin, prev, e.cs)
		if err != nil {
			t.Fatal(err)
		}
		if len(dBad.Spent) != len(dGood.Spent) || len(dBad.Created) != len(dGood.Created) || dBad.Spent[0].Outpoint != dGood.Spent[0].Outpoint {
			t.Fatalf("deltas differ: %+v vs %+v", dBad, dGood)
		}
	})

	// Redeem script for the sigop case: 300 sigops when counted, true when run.
	redeem := append([]byte{0x00, 0x63}, bytes.Repeat([]byte{0xae}, 15)...)
	redeem = append(redeem, 0x68, 0x51)
	p2sh := append([]byte{0xa9, 0x14}, blockgen.Hash160(redeem)...)
	p2sh = append(p2sh, 0x87)

	for _, c := range []struct {
		name   string
		reason string
		build  func() *blockgen.Template
	}{
		{"coinbase pays too much", "bad-cb-amount", func() *blockgen.Template {
			tpl := withFee(e.template(), 1001)
			return tpl.AddTx(e.spendCB(2, 1000))
		}},
		{"value in below value out", "bad-txns-in-belowout", func() *blockgen.Template {
			return e.template().AddTx(e.spendCB(2, -1))
		}},
		{"missing input", "bad-txns-inputs-missingorspent", func() *blockgen.Template {
			return e.template().AddTx(e.spendCB(1, 1000)) // spent by fund at 102
		}},
		{"immature coinbase", "bad-txns-premature-spend-of-coinbase", func() *blockgen.Template {
			return withFee(e.template(), 1000).AddTx(e.spendCB(12, 1000))
		}},
		{"BIP30 overwrite", "bad-txns-BIP30", func() *blockgen.Template {
			return e.template().AddTx(e.base.fund.Copy())
		}},
		{"BIP68 relative lock", "bad-txns-nonfinal", func() *blockgen.Template {
			op, pv := e.fundOut(2)
			tx := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(pv.Value-1000, blockgen.OpTrue))
			tx.Version = 2
			tx.TxIn[0].Sequence = 10
			if err := e.base.key.SignP2PKH(tx, 0, pv.Script); err != nil {
				t.Fatal(err)
			}
			return withFee(e.template(), 1000).AddTx(tx)
		}},
		{"P2SH sigop cost", "bad-blk-sigops", func() *blockgen.Template {
			// One transaction creates 67 P2SH outputs and the next spends
			// them: 67 × 300 × 4 = 80400 > 80000.
			op, pv := e.coinbaseOut(2)
			outs := make([]*btcwire.TxOut, 67)
			for i := range outs {
				outs[i] = blockgen.Out(1000, p2sh)
			}
			fund := e.spendP2PKH([]btcwire.OutPoint{op}, []blockgen.Prevout{pv}, append(outs, blockgen.Out(pv.Value-67*1000-10_000, blockgen.OpTrue))...)
			var ops []btcwire.OutPoint
			for i := range outs {
				ops = append(ops, blockgen.Outpoint(fund, uint32(i)))
			}
			spend := blockgen.Spend(ops, blockgen.Out(67*1000, blockgen.OpTrue))
			for i := range spend.TxIn {
				spend.TxIn[i].SignatureScript = append([]byte{byte(len(redeem))}, redeem...)
			}
			return withFee(e.template(), 10_000).AddTx(fund, spend)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := parse(finishRaw(c.build()))
			for _, o := range []validate.ConnectOptions{{}, {SkipScripts: true}, {SkipScripts: true, Deferred: true}} {
				if got := validate.Reason(connect(b, o)); got != c.reason {
					t.Errorf("%+v: %q, want %q", o, got, c.reason)
				}
			}
		})
	}
}
