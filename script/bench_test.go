package script

import (
	"testing"

	"utxod/wire"
)

// p2pkhInput finds the first P2PKH input of mainnet block 277,647.
func p2pkhInput(b *testing.B) (*wire.Tx, []wire.TxOut, int) {
	blk, prevs := loadBlock277647(b)
	for ti := 1; ti < len(blk.Txs); ti++ {
		for i, p := range prevs[ti] {
			s := p.Script
			if len(s) == 25 && s[0] == 0x76 && s[1] == 0xa9 && s[2] == 0x14 && s[23] == 0x88 && s[24] == 0xac {
				return &blk.Txs[ti], prevs[ti], i
			}
		}
	}
	b.Fatal("no P2PKH input")
	return nil, nil, 0
}

// BenchmarkVerifyInputP2PKH: one P2PKH input of block 277,647 through the
// btcd engine (no signature cache), flags as in force at that height.
func BenchmarkVerifyInputP2PKH(b *testing.B) {
	tx, prevs, i := p2pkhInput(b)
	v, err := NewBtcdEngine().Prepare(tx, prevs)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if err := v.VerifyInput(i, P2SH); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyInputP2PKHSigCache: the same with a warm signature cache.
func BenchmarkVerifyInputP2PKHSigCache(b *testing.B) {
	tx, prevs, i := p2pkhInput(b)
	v, err := NewBtcdEngine(WithSigCache(1000)).Prepare(tx, prevs)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if err := v.VerifyInput(i, P2SH); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepare: per-transaction setup for the same transaction.
func BenchmarkPrepare(b *testing.B) {
	tx, prevs, _ := p2pkhInput(b)
	e := NewBtcdEngine()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if _, err := e.Prepare(tx, prevs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLegacySigHash: the package's own streaming legacy sighash for
// that input.
func BenchmarkLegacySigHash(b *testing.B) {
	tx, prevs, i := p2pkhInput(b)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if _, err := LegacySigHash(tx, i, prevs[i].Script, SigHashAll); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLegacySigOpCount over a bare 1-of-3 multisig script.
func BenchmarkLegacySigOpCount(b *testing.B) {
	s := make([]byte, 0, 105)
	s = append(s, 0x51)
	for k := 0; k < 3; k++ {
		s = append(s, 0x21)
		s = append(s, make([]byte, 33)...)
	}
	s = append(s, 0x53, 0xae)
	b.ReportAllocs()
	for n := 0; n < b.N; n++ {
		if LegacySigOpCount(s, true) != 3 {
			b.Fatal("count")
		}
	}
}

// acceptAll is a SigVerifier that accepts every signature, so that a
// benchmark times the script path around the curve arithmetic.
type acceptAll struct{}

func (acceptAll) Name() string                                    { return "accept-all" }
func (acceptAll) VerifyECDSA([]byte, []byte, [32]byte) bool       { return true }
func (acceptAll) VerifySchnorr([32]byte, [64]byte, [32]byte) bool { return true }
func (acceptAll) CheckTapTweak(_, _, _ [32]byte, _ bool) bool     { return true }

// BenchmarkNativeP2PKHAroundSig: the native engine's path for one P2PKH
// input of block 277,647 (sighash, HASH160, the interpreter) without the
// signature verification itself.
func BenchmarkNativeP2PKHAroundSig(b *testing.B) {
	tx, prevs, i := p2pkhInput(b)
	v, err := NewEngine(WithSigVerifier(acceptAll{}), WithSigCacheEntries(0)).Prepare(tx, prevs)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.VerifyInput(i, Mandatory); err != nil {
			b.Fatal(err)
		}
	}
}
