package api

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/params"
)

// spentTxOutsRef is Core's SerializeBlockUndo of block h of blocks,
// recomputed apart from the product: every earlier block (and the block's
// own earlier transactions) parsed with btcd into a map of outputs, the
// prevouts of each non-coinbase transaction looked up there and written
// with btcd's CompactSize and TxOut serialization.
func spentTxOutsRef(t *testing.T, blocks [][]byte, h int) []byte {
	t.Helper()
	outs := make(map[btcwire.OutPoint]*btcwire.TxOut)
	var buf bytes.Buffer
	for i := 0; i <= h; i++ {
		var b btcwire.MsgBlock
		if err := b.Deserialize(bytes.NewReader(blocks[i])); err != nil {
			t.Fatal(err)
		}
		if i == h {
			_ = btcwire.WriteVarInt(&buf, 0, uint64(len(b.Transactions)))
			_ = btcwire.WriteVarInt(&buf, 0, 0)
		}
		for j, tx := range b.Transactions {
			if i == h && j > 0 {
				_ = btcwire.WriteVarInt(&buf, 0, uint64(len(tx.TxIn)))
				for _, in := range tx.TxIn {
					o, ok := outs[in.PreviousOutPoint]
					if !ok {
						t.Fatalf("block %d: no output %v", h, in.PreviousOutPoint)
					}
					if err := btcwire.WriteTxOut(&buf, 0, 0, o); err != nil {
						t.Fatal(err)
					}
				}
			}
			for k, o := range tx.TxOut {
				outs[btcwire.OutPoint{Hash: tx.TxHash(), Index: uint32(k)}] = o
			}
		}
	}
	return buf.Bytes()
}

// TestRESTSpentTxOuts checks /rest/spenttxouts on mainnet 0-170 (block 170
// spends block 9's coinbase) against the independent recomputation.
func TestRESTSpentTxOuts(t *testing.T) {
	s, _, blocks := mainnetServer(t, 170)
	want170 := spentTxOutsRef(t, blocks, 170)
	genesis := params.MainNet().GenesisHash.String()
	script9, _ := hex.DecodeString(block9Script)
	spk9b, err := marshalLine(describeScript(script9, s.params))
	if err != nil {
		t.Fatal(err)
	}
	spk9 := strings.TrimSpace(string(spk9b))
	for _, tc := range []struct {
		target string
		ctype  string
		body   string
	}{
		{"/rest/spenttxouts/" + mainBlock170 + ".bin", "application/octet-stream", string(want170)},
		{"/rest/spenttxouts/" + mainBlock170 + ".hex", "text/plain", hex.EncodeToString(want170) + "\n"},
		{"/rest/spenttxouts/" + mainBlock1 + ".hex", "text/plain", hex.EncodeToString(spentTxOutsRef(t, blocks, 1)) + "\n"},
		{"/rest/spenttxouts/" + genesis + ".hex", "text/plain", "0100\n"},
		{"/rest/spenttxouts/" + genesis + ".json", "application/json", "[[]]\n"},
		{"/rest/spenttxouts/" + mainBlock1 + ".json", "application/json", "[[]]\n"},
		// The scriptPubKey object is describeScript's, which TestScriptJSON
		// checks against Core's decodescript data.
		{"/rest/spenttxouts/" + mainBlock170 + ".json", "application/json", `[[],[{"value":50.00000000,"scriptPubKey":` + spk9 + `}]]` + "\n"},
	} {
		rec := do(t, s, "GET", tc.target, nil)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != tc.ctype || rec.Body.String() != tc.body {
			t.Errorf("%s:\n got %d %q %q\nwant %q %q", tc.target, rec.Code, rec.Header().Get("Content-Type"), rec.Body, tc.ctype, tc.body)
		}
	}
	zero := strings.Repeat("0", 64)
	for _, tc := range []struct {
		target string
		code   int
		detail string
	}{
		{"/rest/spenttxouts/xyz.bin", 400, "Invalid hash: xyz"},
		{"/rest/spenttxouts/" + zero + "/" + zero + ".bin", 400, "Invalid URI format. Expected /rest/spenttxouts/<hash>.<ext>"},
		{"/rest/spenttxouts/" + zero + ".bin", 404, zero + " not found"},
		{"/rest/spenttxouts/" + mainBlock170, 404, "output format not found (available: .bin, .hex, .json)"},
		{"/rest/spenttxouts/" + mainBlock170 + ".txt", 400, "Invalid hash: " + mainBlock170 + ".txt"},
	} {
		rec := do(t, s, "GET", tc.target, nil)
		if p := problemOf(t, rec); rec.Code != tc.code || p.Detail != tc.detail {
			t.Errorf("%s: %d %q, want %d %q", tc.target, rec.Code, p.Detail, tc.code, tc.detail)
		}
	}
}

// A regtest block whose second transaction spends an output of its first:
// the prevout created in the block comes from the block, the other from
// the undo record, both equal to the recomputation.
func TestRESTSpentTxOutsInBlock(t *testing.T) {
	r := newRegtest(t, Config{})
	b1 := r.mine(payout{anyoneScript, 50e8})
	r.mineN(100)
	txA := spendAnyone([]btcwire.OutPoint{{Hash: b1.Block.Transactions[0].TxHash(), Index: 0}}, []payout{{anyoneScript, 30e8}, {pkhScript, 19e8}})
	txB := spendAnyone([]btcwire.OutPoint{{Hash: txA.TxHash(), Index: 0}}, []payout{{wpkhScript, 29e8}})
	blk := r.mineOn(nil, nil, txA, txB)
	var blocks [][]byte
	for h := int32(0); h <= blk.Height; h++ {
		n := mustAt(t, r.cs, h)
		raw, err := r.srv.rawBlock(n.Hash)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, raw)
	}
	want := spentTxOutsRef(t, blocks, int(blk.Height))
	rec := do(t, r.srv, "GET", "/rest/spenttxouts/"+blk.Hash.String()+".bin", nil)
	if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), want) {
		t.Fatalf("%d %x\nwant %x", rec.Code, rec.Body.Bytes(), want)
	}
	var got SpentTxOuts
	decodeJSON(t, do(t, r.srv, "GET", "/rest/spenttxouts/"+blk.Hash.String()+".json", nil), &got)
	if len(got) != 3 || len(got[0]) != 0 || len(got[1]) != 1 || len(got[2]) != 1 ||
		got[1][0].ScriptPubKey.Hex != hex.EncodeToString(anyoneScript) || got[2][0].Value != 30e8 {
		t.Errorf("json %+v", got)
	}
}

// Blocks whose undo data is not available: off the active chain, or older
// than the kept block data.
func TestRESTSpentTxOutsUnavailable(t *testing.T) {
	p := params.MainNet()
	cs := prunedMainnet(t, 20, 5)
	s := newServer(t, cs, p)
	rec := do(t, s, "GET", "/rest/spenttxouts/"+mainBlock2+".bin", nil)
	if p := problemOf(t, rec); rec.Code != http.StatusNotFound || p.Detail != mainBlock2+" undo not available" {
		t.Errorf("pruned: %d %q", rec.Code, p.Detail)
	}
	if rec := do(t, s, "GET", "/rest/spenttxouts/"+mustAt(t, cs, 20).Hash.String()+".hex", nil); rec.Code != 200 {
		t.Errorf("tip: %d %s", rec.Code, rec.Body)
	}

	r := newRegtest(t, Config{})
	r.mineN(2)
	stale := r.mineOn(r.gen.Genesis, nil)
	r.mineN(1)
	if n, ok := r.cs.Lookup(stale.Hash); !ok || n.InActiveChain {
		t.Fatalf("side block: %+v %v", n, ok)
	}
	rec = do(t, r.srv, "GET", "/rest/spenttxouts/"+stale.Hash.String()+".bin", nil)
	if p := problemOf(t, rec); rec.Code != http.StatusNotFound || p.Detail != stale.Hash.String()+" undo not available" {
		t.Errorf("side block: %d %q", rec.Code, p.Detail)
	}
}

// TestRESTBlockPart checks Core 31's /rest/blockpart: ranges, and its
// errors in Core's order (offset, size, hash, block, range, format).
func TestRESTBlockPart(t *testing.T) {
	s, _, blocks := mainnetServer(t, 170)
	raw := blocks[170]
	n := len(raw)
	zero := strings.Repeat("0", 64)
	base := "/rest/blockpart/" + mainBlock170
	for _, tc := range []struct {
		target string
		ctype  string
		body   string
	}{
		{base + ".bin?offset=0&size=80", "application/octet-stream", string(raw[:80])},
		{base + ".hex?offset=80&size=1", "text/plain", hex.EncodeToString(raw[80:81]) + "\n"},
		{fmt.Sprintf("%s.bin?offset=%d&size=1", base, n-1), "application/octet-stream", string(raw[n-1:])},
		{fmt.Sprintf("%s.bin?size=%d&offset=0", base, n), "application/octet-stream", string(raw)},
		{"/rest/blockpart/" + params.MainNet().GenesisHash.String() + ".bin?offset=0&size=4", "application/octet-stream", string(params.MainNet().GenesisBlock[:4])},
	} {
		rec := do(t, s, "GET", tc.target, nil)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != tc.ctype || rec.Body.String() != tc.body {
			t.Errorf("%s: %d %q %q", tc.target, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
	for _, tc := range []struct {
		target string
		code   int
		detail string
	}{
		{"/rest/blockpart/xyz.bin", 400, "Block part offset missing or invalid"},
		{base + ".bin?offset=+1&size=1", 400, "Block part offset missing or invalid"},
		{base + ".bin?offset=0", 400, "Block part size missing or invalid"},
		{base + ".bin?offset=0&size=-1", 400, "Block part size missing or invalid"},
		{base + ".bin?offset=0&size=18446744073709551616", 400, "Block part size missing or invalid"},
		{"/rest/blockpart/xyz.bin?offset=0&size=1", 400, "Invalid hash: xyz"},
		{"/rest/blockpart/" + zero + ".bin?offset=0&size=1", 404, zero + " not found"},
		{base + ".bin?offset=0&size=0", 400, "Bad block part offset/size 0/0 for " + mainBlock170},
		{fmt.Sprintf("%s.bin?offset=%d&size=1", base, n), 400, fmt.Sprintf("Bad block part offset/size %d/1 for %s", n, mainBlock170)},
		{base + ".bin?offset=1&size=18446744073709551615", 400, "Bad block part offset/size 1/18446744073709551615 for " + mainBlock170},
		{base + ".json?offset=0&size=1", 400, "JSON output is not supported for this request type"},
		{base + "?offset=0&size=1", 404, "output format not found (available: .bin, .hex, .json)"},
	} {
		rec := do(t, s, "GET", tc.target, nil)
		if p := problemOf(t, rec); rec.Code != tc.code || p.Detail != tc.detail {
			t.Errorf("%s: %d %q, want %d %q", tc.target, rec.Code, p.Detail, tc.code, tc.detail)
		}
	}
}
