package undorec

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"utxod/store/kvstore/undorec/undotest"
	"utxod/utxo"
	"utxod/wire"
)

// encodeV1 is the version-1 encoder (docs/formats.md), kept here so
// that datadirs written before version 2 stay readable.
func encodeV1(d *utxo.Delta) []byte {
	dst := []byte{Version1}
	for _, list := range [][]utxo.Entry{d.Spent, d.Overwritten, d.Created} {
		dst = appendList(dst, list)
	}
	return dst
}

func TestUndoRecordRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for i := 0; i < 300; i++ {
		d := undotest.RandomDelta(rng)
		got, whole, err := Decode(Encode(nil, d))
		if err != nil || whole {
			t.Fatalf("version 2: whole %v, %v", whole, err)
		}
		undotest.SameEntries(t, "spent", got.Spent, d.Spent, true)
		undotest.SameEntries(t, "overwritten", got.Overwritten, d.Overwritten, true)
		undotest.SameEntries(t, "created", got.Created, d.Created, false)
		// Version 1 records (whole created coins) still read.
		got, whole, err = Decode(encodeV1(d))
		if err != nil || !whole {
			t.Fatalf("version 1: whole %v, %v", whole, err)
		}
		undotest.SameEntries(t, "v1 spent", got.Spent, d.Spent, true)
		undotest.SameEntries(t, "v1 created", got.Created, d.Created, true)
	}
}

func FuzzDecodeUndo(f *testing.F) {
	rng := rand.New(rand.NewPCG(23, 24))
	for i := 0; i < 6; i++ {
		d := undotest.RandomDelta(rng)
		f.Add(Encode(nil, d))
		f.Add(encodeV1(d))
	}
	f.Add([]byte{Version, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, whole, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not wrapping ErrCorrupt: %v", err)
			}
			return
		}
		if whole {
			return
		}
		// What decodes re-encodes to a record with the same entries.
		again, _, err := Decode(Encode(nil, d))
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		undotest.SameEntries(t, "spent", again.Spent, d.Spent, true)
		undotest.SameEntries(t, "created", again.Created, d.Created, false)
	})
}

// TestUndoVersion1Bytes decodes a version-1 record written out by hand from
// docs/formats.md, so that a change to the shared list encoding cannot
// silently stop old datadirs from reading.
func TestUndoVersion1Bytes(t *testing.T) {
	b := []byte{Version1, 1}
	b = append(b, bytes.Repeat([]byte{0x11}, 32)...)
	b = append(b, 0x02, 0x0a, 0xe8, 0x03, 0, 0, 0, 0, 0, 0, 0x01, 0x51) // vout 2, height 5, 1000 sat, OP_1
	b = append(b, 0, 1)                                                 // no overwritten; one created
	b = append(b, bytes.Repeat([]byte{0x22}, 32)...)
	b = append(b, 0x00, 0x0d, 0xd0, 0x07, 0, 0, 0, 0, 0, 0, 0x02, 0x51, 0x52) // vout 0, height 6 coinbase, 2000 sat
	d, whole, err := Decode(b)
	if err != nil || !whole {
		t.Fatalf("whole %v, %v", whole, err)
	}
	want := &utxo.Delta{
		Spent:   []utxo.Entry{{Outpoint: utxo.Outpoint{Hash: wire.Hash(bytes.Repeat([]byte{0x11}, 32)), Index: 2}, Coin: utxo.Coin{Value: 1000, Height: 5, Script: []byte{0x51}}}},
		Created: []utxo.Entry{{Outpoint: utxo.Outpoint{Hash: wire.Hash(bytes.Repeat([]byte{0x22}, 32)), Index: 0}, Coin: utxo.Coin{Value: 2000, Height: 6, Coinbase: true, Script: []byte{0x51, 0x52}}}},
	}
	undotest.SameEntries(t, "spent", d.Spent, want.Spent, true)
	undotest.SameEntries(t, "overwritten", d.Overwritten, nil, true)
	undotest.SameEntries(t, "created", d.Created, want.Created, true)
}
