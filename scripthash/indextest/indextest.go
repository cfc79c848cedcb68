// Package indextest is the conformance suite of scripthash.Index: every
// implementation (the store's index, the Scanner) runs Run with a factory
// that builds it over a given coin set.
package indextest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sort"
	"testing"

	"utxod/scripthash"
	"utxod/utxo"
	"utxod/wire"
)

// Factory returns an Index whose coin set is exactly coins at tip.
type Factory func(t *testing.T, coins []utxo.Entry, tip scripthash.Tip) scripthash.Index

// Coins returns a deterministic coin set with the shapes the suite needs:
// one script with many outputs over many heights (several per txid and per
// height), a few scripts with one output, a coinbase, a zero value, and
// scripts that differ in one byte.
func Coins() []utxo.Entry {
	var out []utxo.Entry
	txid := func(i int) wire.Hash {
		var h wire.Hash
		binary.BigEndian.PutUint64(h[:], uint64(i)*0x9e3779b97f4a7c15) // spread over the key space
		h[31] = byte(i)
		return h
	}
	for i := 0; i < 300; i++ {
		h := uint32(10 + i/7) // several txids per height
		for v := uint32(0); v < uint32(1+i%3); v++ {
			out = append(out, utxo.Entry{
				Outpoint: utxo.Outpoint{Hash: txid(i), Index: v * 5},
				Coin:     utxo.Coin{Value: int64(1000*i) + int64(v), Height: h, Coinbase: i%50 == 0, Script: ManyScript},
			})
		}
	}
	for i := 0; i < 20; i++ {
		s := append(bytes.Clone(OneScript), byte(i))
		out = append(out, utxo.Entry{
			Outpoint: utxo.Outpoint{Hash: txid(1000 + i), Index: 1},
			Coin:     utxo.Coin{Value: int64(i), Height: uint32(5 + i), Script: s},
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if c := bytes.Compare(out[i].Hash[:], out[j].Hash[:]); c != 0 {
			return c < 0
		}
		return out[i].Index < out[j].Index
	})
	return out
}

// Scripts of Coins.
var (
	ManyScript = []byte{0x00, 0x14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	OneScript  = []byte{0x6a, 0x01} // followed by one byte per coin
)

// Tip is the tip Run builds its indexes at.
var Tip = scripthash.Tip{Height: 400, Hash: wire.Hash{0xaa, 0xbb}, TxOuts: uint64(len(Coins()))}

// expect is the brute-force answer of q over coins.
func expect(coins []utxo.Entry, q scripthash.Query) scripthash.Answer {
	var rows []scripthash.UTXO
	var a scripthash.Answer
	for _, e := range coins {
		if scripthash.Of(e.Script) != q.Hash {
			continue
		}
		a.Count++
		a.Sum += e.Value
		u := scripthash.UTXO{Outpoint: e.Outpoint, Value: e.Value, Height: e.Height, Coinbase: e.Coinbase}
		if q.After == nil || q.After.Less(u.Position()) {
			rows = append(rows, u)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Position().Less(rows[j].Position()) })
	if len(rows) > q.Limit {
		a.More = true
		rows = rows[:q.Limit]
	}
	if len(rows) > 0 {
		a.UTXOs = rows
	}
	if !q.Summary {
		a.Count, a.Sum = 0, 0
	}
	return a
}

func equalAnswers(a, b scripthash.Answer) bool {
	if a.More != b.More || a.Count != b.Count || a.Sum != b.Sum || len(a.UTXOs) != len(b.UTXOs) {
		return false
	}
	for i := range a.UTXOs {
		if a.UTXOs[i] != b.UTXOs[i] {
			return false
		}
	}
	return true
}

// Run is the suite.
func Run(t *testing.T, newIndex Factory) {
	coins := Coins()
	many := scripthash.Of(ManyScript)
	one := scripthash.Of(append(bytes.Clone(OneScript), 7))
	absent := scripthash.Of([]byte{0x51})

	t.Run("Answers", func(t *testing.T) {
		idx := newIndex(t, coins, Tip)
		qs := []scripthash.Query{
			{Hash: many, Limit: scripthash.NoLimit, Summary: true},
			{Hash: many, Limit: 10},
			{Hash: many, Limit: 0, Summary: true},
			{Hash: one, Limit: 5, Summary: true},
			{Hash: one, Script: append(bytes.Clone(OneScript), 7), Limit: 5, Summary: true},
			{Hash: absent, Limit: 5, Summary: true},
			{Hash: many, Script: ManyScript, Limit: 3},
		}
		res, err := idx.Lookup(context.Background(), qs)
		if err != nil {
			t.Fatal(err)
		}
		if res.Tip != Tip {
			t.Errorf("Tip %+v, want %+v", res.Tip, Tip)
		}
		if len(res.Answers) != len(qs) {
			t.Fatalf("%d answers for %d queries", len(res.Answers), len(qs))
		}
		for i, q := range qs {
			if want := expect(coins, q); !equalAnswers(res.Answers[i], want) {
				t.Errorf("query %d: got %d rows more=%v count=%d sum=%d; want %d rows more=%v count=%d sum=%d",
					i, len(res.Answers[i].UTXOs), res.Answers[i].More, res.Answers[i].Count, res.Answers[i].Sum,
					len(want.UTXOs), want.More, want.Count, want.Sum)
			}
		}
		if a := res.Answers[0]; a.Count < 500 || a.More {
			t.Errorf("many: %d outputs, more=%v", a.Count, a.More)
		}
	})

	t.Run("Paging", func(t *testing.T) {
		idx := newIndex(t, coins, Tip)
		want := expect(coins, scripthash.Query{Hash: many, Limit: scripthash.NoLimit}).UTXOs
		var got []scripthash.UTXO
		var after *scripthash.Position
		for pages := 0; ; pages++ {
			if pages > len(want) {
				t.Fatal("paging does not end")
			}
			res, err := idx.Lookup(context.Background(), []scripthash.Query{{Hash: many, After: after, Limit: 37}})
			if err != nil {
				t.Fatal(err)
			}
			a := res.Answers[0]
			got = append(got, a.UTXOs...)
			if !a.More {
				break
			}
			if len(a.UTXOs) == 0 {
				t.Fatal("More with an empty page")
			}
			p := a.UTXOs[len(a.UTXOs)-1].Position()
			after = &p
		}
		if len(got) != len(want) {
			t.Fatalf("paged %d rows, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
			}
		}
		// A cursor past the end, and one between rows.
		last := want[len(want)-1].Position()
		res, err := idx.Lookup(context.Background(), []scripthash.Query{{Hash: many, After: &last, Limit: 5}})
		if err != nil || len(res.Answers[0].UTXOs) != 0 || res.Answers[0].More {
			t.Errorf("after the last row: %+v, %v", res.Answers, err)
		}
		mid := want[100].Position()
		mid.Vout++ // no row has it: the next one follows
		res, err = idx.Lookup(context.Background(), []scripthash.Query{{Hash: many, After: &mid, Limit: 1}})
		if err != nil || len(res.Answers[0].UTXOs) != 1 || res.Answers[0].UTXOs[0] != want[101] {
			t.Errorf("between rows: %+v, %v", res.Answers, err)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		idx := newIndex(t, nil, scripthash.Tip{Height: 0, Hash: wire.Hash{1}})
		res, err := idx.Lookup(context.Background(), []scripthash.Query{{Hash: many, Limit: 10, Summary: true}})
		if err != nil || len(res.Answers) != 1 || res.Answers[0].UTXOs != nil || res.Answers[0].More || res.Answers[0].Count != 0 {
			t.Errorf("empty set: %+v, %v", res, err)
		}
		if res, err := idx.Lookup(context.Background(), nil); err != nil || len(res.Answers) != 0 {
			t.Errorf("no queries: %+v, %v", res, err)
		}
	})

	t.Run("BadQuery", func(t *testing.T) {
		idx := newIndex(t, coins, Tip)
		for _, q := range []scripthash.Query{
			{Hash: many, Script: []byte{0x51}, Limit: 1},
			{Hash: many, Limit: -1},
		} {
			if _, err := idx.Lookup(context.Background(), []scripthash.Query{q}); !errors.Is(err, scripthash.ErrQuery) {
				t.Errorf("%+v: %v, want ErrQuery", q, err)
			}
		}
	})

	t.Run("Cancelled", func(t *testing.T) {
		idx := newIndex(t, coins, Tip)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// An implementation may answer from memory before looking at ctx;
		// if it fails, it fails with the context's error.
		if _, err := idx.Lookup(ctx, []scripthash.Query{{Hash: many, Limit: 1}}); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
	})
}
