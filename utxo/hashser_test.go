package utxo

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"utxod/wire"
)

// refTxOutSer serializes a coin field by field with encoding/binary, straight
// from TxOutSer in Core's kernel/coinstats.cpp (COutPoint, then
// uint32 height<<1|coinbase, then CTxOut = int64 value + CompactSize script),
// independently of AppendTxOutSer.
func refTxOutSer(w *bytes.Buffer, op Outpoint, c Coin) {
	w.Write(op.Hash[:])
	binary.Write(w, binary.LittleEndian, op.Index)
	code := c.Height << 1
	if c.Coinbase {
		code |= 1
	}
	binary.Write(w, binary.LittleEndian, code)
	binary.Write(w, binary.LittleEndian, c.Value)
	switch n := len(c.Script); {
	case n < 253:
		w.WriteByte(byte(n))
	case n <= 0xffff:
		w.WriteByte(253)
		binary.Write(w, binary.LittleEndian, uint16(n))
	default:
		w.WriteByte(254)
		binary.Write(w, binary.LittleEndian, uint32(n))
	}
	w.Write(c.Script)
}

func TestTxOutSerMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 25, 252, 253, 254, 0xffff, 0x10000} {
		c := Coin{Value: r.Int64N(MaxMoney), Height: r.Uint32() >> 1, Coinbase: n%2 == 0, Script: make([]byte, n)}
		op := Outpoint{Index: r.Uint32()}
		op.Hash[0], op.Hash[31] = 1, 2
		var w bytes.Buffer
		refTxOutSer(&w, op, c)
		got := AppendTxOutSer([]byte{0xee}, op, c)
		if !bytes.Equal(got[1:], w.Bytes()) || got[0] != 0xee {
			t.Errorf("script len %d: serialization differs", n)
		}
		if TxOutSerLen(c) != w.Len() {
			t.Errorf("script len %d: TxOutSerLen %d, want %d", n, TxOutSerLen(c), w.Len())
		}
	}
}

// A transaction with more outputs than 16,512 (where VARINT(vout) key order
// stops matching numeric order) hashes in numeric vout order. The expected
// value is computed independently: sort all coins by (raw txid, numeric
// vout), serialize with refTxOutSer, SHA-256 twice with crypto/sha256.
func TestHashSerialized3NumericVoutOrder(t *testing.T) {
	const nOut = 16_600
	r := rand.New(rand.NewPCG(9, 10))
	var big, small wire.Hash
	big[0], small[0] = 0x80, 0x01 // raw-byte order: small < big
	big[31], small[31] = 0x00, 0xff
	var all []testCoin
	outs := make([]IndexedCoin, 0, nOut)
	for i := 0; i < nOut; i++ {
		c := Coin{Value: int64(i), Height: 5, Script: []byte{byte(i), byte(i >> 8)}}
		outs = append(outs, IndexedCoin{Index: uint32(i), Coin: c})
		all = append(all, testCoin{Outpoint{big, uint32(i)}, c})
	}
	small1 := Coin{Value: 1, Height: 3, Coinbase: true, Script: []byte{0x51}}
	all = append(all, testCoin{Outpoint{small, 7}, small1})

	sortTestCoins(all)
	var w bytes.Buffer
	for _, e := range all {
		refTxOutSer(&w, e.op, e.c)
	}
	first := sha256.Sum256(w.Bytes())
	want := wire.Hash(sha256.Sum256(first[:]))

	// The VARINT key order really differs here (so the test has teeth):
	// VARINT(16512) = 80 80 00 sorts before VARINT(16511) = ff 7f.
	if bytes.Compare(AppendVarInt(nil, 16512), AppendVarInt(nil, 16511)) >= 0 {
		t.Fatal("expected VARINT key order to differ from numeric order at 16512")
	}

	r.Shuffle(len(outs), func(i, j int) { outs[i], outs[j] = outs[j], outs[i] })
	var h HashSerialized3
	if err := h.AddTx(small, []IndexedCoin{{7, small1}}); err != nil {
		t.Fatal(err)
	}
	if err := h.AddTx(big, outs); err != nil {
		t.Fatal(err)
	}
	if got := h.Sum(); got != want {
		t.Fatalf("hash_serialized_3 %s, want %s", got, want)
	}
	if h.Count() != nOut+1 {
		t.Fatalf("count %d", h.Count())
	}
	// The same coins serialized by the reference, in pieces of any size.
	var hs HashSerialized3
	for rest := w.Bytes(); len(rest) > 0; {
		n := min(len(rest), 1+r.IntN(5000))
		hs.AddSerialized(rest[:n], 1)
		rest = rest[n:]
	}
	if got := hs.Sum(); got != want {
		t.Fatalf("AddSerialized: hash_serialized_3 %s, want %s", got, want)
	}

	// Feeding the big tx in VARINT-key order instead gives a different
	// digest: Core's per-txid re-sort matters.
	byKey := slices.Clone(outs)
	slices.SortFunc(byKey, func(a, b IndexedCoin) int {
		return bytes.Compare(AppendVarInt(nil, uint64(a.Index)), AppendVarInt(nil, uint64(b.Index)))
	})
	var w2 bytes.Buffer
	refTxOutSer(&w2, Outpoint{small, 7}, small1)
	for _, o := range byKey {
		refTxOutSer(&w2, Outpoint{big, o.Index}, o.Coin)
	}
	f2 := sha256.Sum256(w2.Bytes())
	if wire.Hash(sha256.Sum256(f2[:])) == want {
		t.Fatal("VARINT-key order unexpectedly gives the same digest")
	}
}

func TestHashSerialized3Order(t *testing.T) {
	var h HashSerialized3
	a := Outpoint{Index: 5}
	a.Hash[0] = 2
	if err := h.Add(a, Coin{}); err != nil {
		t.Fatal(err)
	}
	before := h.Sum()
	for _, op := range []Outpoint{a, {Hash: a.Hash, Index: 4}, {Index: 9}} {
		if err := h.Add(op, Coin{}); !errors.Is(err, ErrCoinOrder) {
			t.Errorf("%v: err %v, want ErrCoinOrder", op, err)
		}
	}
	if h.Sum() != before {
		t.Error("rejected coin changed the digest")
	}
	if err := h.AddTx(wire.Hash{3}, []IndexedCoin{{1, Coin{}}, {1, Coin{}}}); !errors.Is(err, ErrCoinOrder) {
		t.Errorf("duplicate vout: %v", err)
	}
	// Empty set: SHA-256d of nothing.
	var e HashSerialized3
	f := sha256.Sum256(nil)
	if e.Sum() != wire.Hash(sha256.Sum256(f[:])) {
		t.Error("empty digest")
	}
}

func BenchmarkTxOutSer(b *testing.B) {
	c := Coin{Value: 12345, Height: 800000, Script: make([]byte, 25)}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendTxOutSer(buf[:0], Outpoint{Index: 1}, c)
	}
}

func BenchmarkHashSerialized3PerCoin(b *testing.B) {
	c := Coin{Value: 12345, Height: 800000, Script: make([]byte, 25)}
	var h HashSerialized3
	b.ReportAllocs()
	var op Outpoint
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(op.Hash[:], uint64(i))
		if err := h.Add(op, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMuHashInsertCoin(b *testing.B) {
	c := Coin{Value: 12345, Height: 800000, Script: make([]byte, 25)}
	var m MuHash3072
	b.ReportAllocs()
	var op Outpoint
	for i := 0; b.Loop(); i++ {
		op.Index = uint32(i)
		m.InsertCoin(op, c)
	}
}
