package silentpayments

import "testing"

// BenchmarkComputeTweak: a 2-input (P2WPKH, P2TR key path) transaction
// paying one taproot output and one P2WPKH change output.
func BenchmarkComputeTweak(b *testing.B) {
	k1, k2, k3 := newKey(1), newKey(2), newKey(3)
	tx, prevouts := buildTx(b, []testIn{p2wpkhIn(k1, txid(1), 0), p2trKeyPathIn(k2, txid(2), 1)},
		[][]byte{payTo, p2wpkhScript(k3.compressed())})
	if _, ok, err := ComputeTweak(tx, prevouts); !ok || err != nil {
		b.Fatal(ok, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, _ := ComputeTweak(tx, prevouts); !ok {
			b.Fatal("not eligible")
		}
	}
}

// BenchmarkTaprootOutputs: the same transaction's taproot outputs, appended
// to a reused slice.
func BenchmarkTaprootOutputs(b *testing.B) {
	k1, k2, k3 := newKey(1), newKey(2), newKey(3)
	tx, _ := buildTx(b, []testIn{p2wpkhIn(k1, txid(1), 0), p2trKeyPathIn(k2, txid(2), 1)},
		[][]byte{payTo, p2wpkhScript(k3.compressed())})
	dst := make([]TaprootOutput, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = AppendTaprootOutputs(dst[:0], tx)
	}
}
