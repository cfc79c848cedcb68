package snapshot

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/params"
	"utxod/testkit/blockgen"
	"utxod/wire"
)

// wideOutputs is more outputs than VARINT(vout) keeps in numeric order:
// from vout 16512 (80 80 00) on, Core's key order puts a vout between 255
// (80 7f) and 256 (81 00).
const wideOutputs = 16600

// variedScripts are output scripts covering every compressed form of
// Core's ScriptCompression and the raw cases around them.
func variedScripts(t testing.TB) [][]byte {
	t.Helper()
	var scripts [][]byte
	h20 := bytes.Repeat([]byte{0x11}, 20)
	scripts = append(scripts,
		p2pkh(h20), // form 0
		append(append([]byte{0xa9, 0x14}, h20...), 0x87),              // form 1
		append([]byte{0x00, 0x14}, h20...),                            // P2WPKH, raw
		append([]byte{0x51, 0x20}, bytes.Repeat([]byte{0x22}, 32)...), // P2TR, raw
		[]byte{},     // empty script
		[]byte{0x51}, // OP_TRUE
	)
	// P2PK, compressed and uncompressed keys of both y parities (forms
	// 2–5), from private keys 1..4.
	for k := byte(1); k <= 4; k++ {
		var kb [32]byte
		kb[31] = k
		_, pub := btcec.PrivKeyFromBytes(kb[:])
		scripts = append(scripts,
			append(append([]byte{33}, pub.SerializeCompressed()...), 0xac),
			append(append([]byte{65}, pub.SerializeUncompressed()...), 0xac))
	}
	// Uncompressed-key P2PK with a point off the curve: Core stores it raw.
	off := append([]byte{65, 0x04}, bytes.Repeat([]byte{0x05}, 64)...)
	scripts = append(scripts, append(off, 0xac))
	// A "hybrid" 0x06 key: not Core's form 4/5, raw.
	var kb [32]byte
	kb[31] = 7
	_, pub := btcec.PrivKeyFromBytes(kb[:])
	hyb := pub.SerializeUncompressed()
	hyb[0] = 0x06 | hyb[64]&1
	scripts = append(scripts, append(append([]byte{65}, hyb...), 0xac))
	// Compressed-key shape with a bad prefix byte: raw.
	scripts = append(scripts, append(append([]byte{33, 0x04}, bytes.Repeat([]byte{0x33}, 32)...), 0xac))
	// Raw scripts whose size code needs one byte (121 bytes: 127) and two
	// (122 bytes: 128), and the largest script the UTXO set holds.
	for _, n := range []int{121, 122, 500, 10_000} {
		scripts = append(scripts, bytes.Repeat([]byte{0x61}, n)) // OP_NOP
	}
	return scripts
}

// variedChain builds a regtest chain whose UTXO set has every script form,
// amounts from 0 to 4.9 BTC, a transaction with wideOutputs outputs, partly
// spent transactions and outputs Core keeps out of the set (OP_RETURN, a
// script over 10,000 bytes). It returns the blocks and one more block that
// spends some of those outputs (to connect after a load).
func variedChain(t testing.TB) (blocks [][]byte, next []byte) {
	t.Helper()
	p := params.RegTest()
	c, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	parent := c.Genesis
	var coinbases []*btcwire.MsgTx
	for i := 0; i < 101; i++ {
		tpl := c.Template(parent, nil)
		coinbases = append(coinbases, tpl.Coinbase())
		parent = tpl.Finish()
		blocks = append(blocks, parent.Raw)
	}
	spend := func(prev *btcwire.MsgTx, idx uint32) *btcwire.MsgTx {
		tx := btcwire.NewMsgTx(2)
		tx.AddTxIn(&btcwire.TxIn{PreviousOutPoint: blockgen.Outpoint(prev, idx), Sequence: 0xffffffff})
		return tx
	}
	// Block 102: the wide transaction and the varied scripts.
	wide := spend(coinbases[0], 0)
	for i := 0; i < wideOutputs; i++ {
		wide.AddTxOut(&btcwire.TxOut{Value: 1000 + int64(i), PkScript: []byte{0x51}})
	}
	varied := spend(coinbases[1], 0)
	amounts := []int64{0, 1, 10, 100_000, 1_000_000, 100_000_000, 123_456_789, 490_000_000}
	for i, s := range variedScripts(t) {
		varied.AddTxOut(&btcwire.TxOut{Value: amounts[i%len(amounts)], PkScript: s})
	}
	varied.AddTxOut(&btcwire.TxOut{Value: 0, PkScript: []byte{0x6a, 0x04, 1, 2, 3, 4}})     // OP_RETURN: not a coin
	varied.AddTxOut(&btcwire.TxOut{Value: 5, PkScript: bytes.Repeat([]byte{0x61}, 10_001)}) // too long: not a coin
	tpl := c.Template(parent, nil).AddTx(wide, varied)
	parent = tpl.Finish()
	blocks = append(blocks, parent.Raw)
	// Block 103: spend some outputs so that records have gaps, and the
	// low and middle vouts of the wide transaction.
	part := spend(wide, 0)
	for _, v := range []uint32{1, 255, 256, 16511, 16512, 16599} {
		part.AddTxIn(&btcwire.TxIn{PreviousOutPoint: blockgen.Outpoint(wide, v), Sequence: 0xffffffff})
	}
	part.AddTxOut(&btcwire.TxOut{Value: 7000, PkScript: []byte{0x51}})
	part2 := spend(varied, 5) // OP_TRUE output
	part2.AddTxOut(&btcwire.TxOut{Value: 1, PkScript: []byte{0x51}})
	part2.AddTxOut(&btcwire.TxOut{Value: 2, PkScript: []byte{0x52}})
	parent = c.Template(parent, nil).AddTx(part, part2).Finish()
	blocks = append(blocks, parent.Raw)
	// The next block spends across records: a wide output, a coinbase, a
	// fresh output.
	last := spend(wide, 16513)
	last.AddTxIn(&btcwire.TxIn{PreviousOutPoint: blockgen.Outpoint(coinbases[2], 0), Sequence: 0xffffffff})
	last.AddTxIn(&btcwire.TxIn{PreviousOutPoint: blockgen.Outpoint(part2, 0), Sequence: 0xffffffff})
	last.AddTxOut(&btcwire.TxOut{Value: 42, PkScript: []byte{0x51}})
	next = c.Template(parent, nil).AddTx(last).Finish().Raw
	return blocks, next
}

// TestRoundTripEveryStore imports the varied chain on every store (and in
// memory), dumps it — the same bytes from every store —, verifies the file
// against the chainstate's own digests, loads it into every store, checks
// the loaded digests, dumps the loaded state (byte-identical), and connects
// one more block on both sides with equal results.
func TestRoundTripEveryStore(t *testing.T) {
	p := params.RegTest()
	blocks, next := variedChain(t)
	src := openChain(t, p, "", "")
	connectAll(t, src.cs, blocks)
	want := info(t, src.cs)
	file := dump(t, src.cs, p)
	if want.TxOuts < wideOutputs {
		t.Fatalf("only %d coins", want.TxOuts)
	}

	sum, err := Verify(bytes.NewReader(file), VerifyOptions{Network: p, Height: int32(want.Height)})
	if err != nil {
		t.Fatal(err)
	}
	if digestJSON(sum.Info()) != digestJSON(want) {
		t.Fatalf("verify %s\nchain  %s", digestJSON(sum.Info()), digestJSON(want))
	}
	if sum.NonCanonical != "" {
		t.Fatalf("our own dump is non-canonical: %s", sum.NonCanonical)
	}
	// The wide transaction's group is in key order: 255 (80 7f), then the
	// vouts from 16512 (80 80 00), then 256 (81 00).
	checkWideOrder(t, file, blocks)

	connectAll(t, src.cs, [][]byte{next})
	wantNext := info(t, src.cs)

	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			skipUnavailable(t, name)
			imp := openChain(t, p, name, t.TempDir())
			connectAll(t, imp.cs, blocks)
			if got := dump(t, imp.cs, p); !bytes.Equal(got, file) {
				t.Fatalf("dump from %s differs from the memory store's (%d vs %d bytes)", name, len(got), len(file))
			}
			dir := t.TempDir() + "/loaded"
			h := sum.HashSerialized3
			if _, err := loadFile(t, file, LoadConfig{Backend: name, Datadir: dir, ExpectHash: &h,
				Headers: headerSet(t, p, rawHeaders(blocks))}); err != nil {
				t.Fatal(err)
			}
			c := openChain(t, p, name, dir)
			if got := info(t, c.cs); digestJSON(got) != digestJSON(want) {
				t.Fatalf("loaded %s\nsource %s", digestJSON(got), digestJSON(want))
			}
			if again := dump(t, c.cs, p); !bytes.Equal(again, file) {
				t.Fatal("dump of the loaded state differs from the first dump")
			}
			connectAll(t, c.cs, [][]byte{next})
			if got := info(t, c.cs); digestJSON(got) != digestJSON(wantNext) {
				t.Fatalf("after the next block: loaded %s\nsource %s", digestJSON(got), digestJSON(wantNext))
			}
			// Reopened, it is the same state.
			c.close(t)
			c = openChain(t, p, name, dir)
			if got := info(t, c.cs); digestJSON(got) != digestJSON(wantNext) || got.SnapshotBase == nil {
				t.Fatalf("reopened: %s", digestJSON(got))
			}
		})
	}
}

// checkWideOrder finds the wide transaction's group in file and checks the
// order of its vouts.
func checkWideOrder(t *testing.T, file []byte, blocks [][]byte) {
	t.Helper()
	b, err := wire.ParseBlock(blocks[101])
	if err != nil {
		t.Fatal(err)
	}
	txid := b.Txs[1].TxID
	i := bytes.Index(file, txid[:])
	if i < 0 {
		t.Fatal("wide transaction not in the file")
	}
	rest := file[i+32:]
	n, off, err := wire.ReadCompactSize(rest, 0)
	if err != nil {
		t.Fatal(err)
	}
	var vouts []uint64
	for k := uint64(0); k < n; k++ {
		v, o, err := wire.ReadCompactSize(rest, off)
		if err != nil {
			t.Fatal(err)
		}
		vouts = append(vouts, v)
		// Each coin here: code, amount, script size 7 (OP_TRUE raw), 0x51.
		off = o + coinLen(t, rest[o:])
	}
	at := func(v uint64) int {
		for i, x := range vouts {
			if x == v {
				return i
			}
		}
		t.Fatalf("vout %d missing", v)
		return -1
	}
	if !(at(254) < at(16513) && at(16513) < at(16598) && at(16598) < at(257)) {
		t.Fatalf("vouts not in Core's key order: 254@%d 16513@%d 16598@%d 257@%d", at(254), at(16513), at(16598), at(257))
	}
}

// coinLen is the length of one serialized Coin at the start of b.
func coinLen(t *testing.T, b []byte) int {
	t.Helper()
	n := 0
	for k := 0; k < 3; k++ {
		for b[n]&0x80 != 0 {
			n++
		}
		n++
	}
	size := int(b[n-1])
	if size < 6 {
		t.Fatalf("unexpected special script %d", size)
	}
	return n + size - 6
}
