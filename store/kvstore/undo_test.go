package kvstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"utxod/store"
	"utxod/utxo"
	"utxod/wire"
)

// randomDelta is a block's delta with txids repeated across entries, as
// blocks have (several outputs of one transaction in a row).
func randomDelta(rng *rand.Rand) *utxo.Delta {
	d := &utxo.Delta{}
	entries := func(n int) []utxo.Entry {
		var out []utxo.Entry
		for len(out) < n {
			var h wire.Hash
			binary.LittleEndian.PutUint64(h[:], rng.Uint64())
			h[31] = byte(rng.IntN(256))
			for k, vout := rng.IntN(3)+1, uint32(rng.IntN(5)); k > 0 && len(out) < n; k-- {
				script := make([]byte, rng.IntN(40))
				for i := range script {
					script[i] = byte(rng.Uint32())
				}
				out = append(out, utxo.Entry{Outpoint: utxo.Outpoint{Hash: h, Index: vout},
					Coin: utxo.Coin{Value: rng.Int64N(utxo.MaxMoney), Height: rng.Uint32(), Coinbase: rng.IntN(2) == 0, Script: script}})
				vout += uint32(rng.IntN(300)) + 1
			}
		}
		return out
	}
	d.Spent, d.Overwritten, d.Created = entries(rng.IntN(20)), entries(rng.IntN(2)), entries(rng.IntN(20))
	return d
}

// encodeUndoV1 is the version-1 encoder (docs/formats.md), kept here so
// that datadirs written before version 2 stay readable.
func encodeUndoV1(d *utxo.Delta) []byte {
	dst := []byte{undoVersion1}
	for _, list := range [][]utxo.Entry{d.Spent, d.Overwritten, d.Created} {
		dst = appendUndoList(dst, list)
	}
	return dst
}

func sameEntries(t *testing.T, what string, got, want []utxo.Entry, coins bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Outpoint != w.Outpoint {
			t.Fatalf("%s %d: outpoint %v, want %v", what, i, g.Outpoint, w.Outpoint)
		}
		if coins && (g.Value != w.Value || g.Height != w.Height || g.Coinbase != w.Coinbase || !bytes.Equal(g.Script, w.Script)) {
			t.Fatalf("%s %d: coin %+v, want %+v", what, i, g.Coin, w.Coin)
		}
	}
}

func TestUndoRecordRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for i := 0; i < 300; i++ {
		d := randomDelta(rng)
		got, whole, err := decodeUndo(encodeUndo(nil, d))
		if err != nil || whole {
			t.Fatalf("version 2: whole %v, %v", whole, err)
		}
		sameEntries(t, "spent", got.Spent, d.Spent, true)
		sameEntries(t, "overwritten", got.Overwritten, d.Overwritten, true)
		sameEntries(t, "created", got.Created, d.Created, false)
		// Version 1 records (whole created coins) still read.
		got, whole, err = decodeUndo(encodeUndoV1(d))
		if err != nil || !whole {
			t.Fatalf("version 1: whole %v, %v", whole, err)
		}
		sameEntries(t, "v1 spent", got.Spent, d.Spent, true)
		sameEntries(t, "v1 created", got.Created, d.Created, true)
	}
}

func FuzzDecodeUndo(f *testing.F) {
	rng := rand.New(rand.NewPCG(23, 24))
	for i := 0; i < 6; i++ {
		d := randomDelta(rng)
		f.Add(encodeUndo(nil, d))
		f.Add(encodeUndoV1(d))
	}
	f.Add([]byte{undoVersion, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, whole, err := decodeUndo(b)
		if err != nil {
			if !errors.Is(err, ErrBadUndo) {
				t.Fatalf("error not wrapping ErrBadUndo: %v", err)
			}
			return
		}
		if whole {
			return
		}
		// What decodes re-encodes to a record with the same entries.
		again, _, err := decodeUndo(encodeUndo(nil, d))
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		sameEntries(t, "spent", again.Spent, d.Spent, true)
		sameEntries(t, "created", again.Created, d.Created, false)
	})
}

// TestUndoReadsCreatedCoins: a version-2 undo record of the tip gives back
// the coins the block created, from the cache and, after a flush empties
// it, from the store; a record whose created coin is no longer in the set
// (the block is not the tip) is refused.
func TestUndoReadsCreatedCoins(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	d := randomDelta(rng)
	d.Spent, d.Overwritten = nil, nil
	for i := range d.Created {
		// One height and flag per transaction, as the record codec needs.
		d.Created[i].Value, d.Created[i].Height, d.Created[i].Coinbase = int64(i+1), 5, false
	}
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			s := New(openKV(t, name, dir), 1)
			defer s.Close()
			blk := wire.Hash{7}
			if err := s.Connect(blk, d); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				got, err := s.Undo(blk)
				if err != nil {
					t.Fatalf("%s: %v", when, err)
				}
				sameEntries(t, when, got.Created, d.Created, true)
			}
			check("cached")
			var st store.Stats
			st.SetTip(1, blk)
			if err := s.Flush(nil, &st); err != nil {
				t.Fatal(err)
			}
			check("read from the store")
			// The next block spends one of them: blk's record can no
			// longer be filled in.
			next := &utxo.Delta{Spent: []utxo.Entry{d.Created[0]}}
			if err := s.Connect(wire.Hash{8}, next); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Undo(blk); !errors.Is(err, ErrBadUndo) {
				t.Fatalf("undo of a block whose created coin is spent: %v", err)
			}
		})
	}
}

// TestUndoVersion1Bytes decodes a version-1 record written out by hand from
// docs/formats.md, so that a change to the shared list encoding cannot
// silently stop old datadirs from reading.
func TestUndoVersion1Bytes(t *testing.T) {
	b := []byte{undoVersion1, 1}
	b = append(b, bytes.Repeat([]byte{0x11}, 32)...)
	b = append(b, 0x02, 0x0a, 0xe8, 0x03, 0, 0, 0, 0, 0, 0, 0x01, 0x51) // vout 2, height 5, 1000 sat, OP_1
	b = append(b, 0, 1)                                                 // no overwritten; one created
	b = append(b, bytes.Repeat([]byte{0x22}, 32)...)
	b = append(b, 0x00, 0x0d, 0xd0, 0x07, 0, 0, 0, 0, 0, 0, 0x02, 0x51, 0x52) // vout 0, height 6 coinbase, 2000 sat
	d, whole, err := decodeUndo(b)
	if err != nil || !whole {
		t.Fatalf("whole %v, %v", whole, err)
	}
	want := &utxo.Delta{
		Spent:   []utxo.Entry{{Outpoint: utxo.Outpoint{Hash: wire.Hash(bytes.Repeat([]byte{0x11}, 32)), Index: 2}, Coin: utxo.Coin{Value: 1000, Height: 5, Script: []byte{0x51}}}},
		Created: []utxo.Entry{{Outpoint: utxo.Outpoint{Hash: wire.Hash(bytes.Repeat([]byte{0x22}, 32)), Index: 0}, Coin: utxo.Coin{Value: 2000, Height: 6, Coinbase: true, Script: []byte{0x51, 0x52}}}},
	}
	sameEntries(t, "spent", d.Spent, want.Spent, true)
	sameEntries(t, "overwritten", d.Overwritten, nil, true)
	sameEntries(t, "created", d.Created, want.Created, true)
}
