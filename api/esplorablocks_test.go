package api

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/params"
)

// Known serde_json (ryu) renderings of f64.
func TestSerdeFloat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{1, "1.0"}, {0, "0.0"}, {0.1, "0.1"}, {12.34, "12.34"}, {1e15, "1000000000000000.0"}, {1e16, "1e16"},
		{1.234e33, "1.234e33"}, {0.001234, "0.001234"}, {1e-5, "0.00001"}, {1e-6, "1e-6"}, {-2.5, "-2.5"},
		{123456789012345680, "1.2345678901234568e17"}, {math.Inf(1), "null"},
		// Core's getblockchaininfo writes 4.656542373906925e-10 (16 digits);
		// the double needs 17.
		{difficultyFloat(0x207fffff), "4.6565423739069247e-10"},
	} {
		if got := string(appendSerdeFloat(nil, tc.v)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.v, got, tc.want)
		}
	}
	if targetMaxF64 != 0xffff*math.Pow(2, 208) {
		t.Error("targetMaxF64 is not 0xffff·2^208")
	}
	// rust-bitcoin's difficulty_float of mainnet's first retarget (block
	// 32256, bits 1d00d86a) and of block 100000 (1b04864c): one division of
	// exact doubles.
	for bits, want := range map[uint32]float64{0x1d00ffff: 1, 0x1d00d86a: 0xffff * 256.0 / 0xd86a / 256, 0x1b04864c: 0xffff * math.Pow(2, 208) / (0x04864c * math.Pow(2, 192))} {
		if got := difficultyFloat(bits); got != want {
			t.Errorf("%08x: %v, want %v", bits, got, want)
		}
	}
}

// esploraBlockJSON renders electrs' BlockValue of block h of blocks from
// btcd's parse, apart from the product's code.
func esploraBlockJSON(t *testing.T, blocks [][]byte, h int) string {
	t.Helper()
	var b btcwire.MsgBlock
	if err := b.Deserialize(bytes.NewReader(blocks[h])); err != nil {
		t.Fatal(err)
	}
	var times []int64
	for i := max(0, h-10); i <= h; i++ {
		var hdr btcwire.BlockHeader
		if err := hdr.Deserialize(bytes.NewReader(blocks[i])); err != nil {
			t.Fatal(err)
		}
		times = append(times, hdr.Timestamp.Unix())
	}
	slices.Sort(times)
	prev := "null"
	if h > 0 {
		prev = `"` + b.Header.PrevBlock.String() + `"`
	}
	stripped, size := b.SerializeSizeStripped(), b.SerializeSize()
	return fmt.Sprintf(`{"id":"%s","height":%d,"version":%d,"timestamp":%d,"tx_count":%d,"size":%d,"weight":%d,"merkle_root":"%s","previousblockhash":%s,"mediantime":%d,"nonce":%d,"bits":%d,"difficulty":1.0}`,
		b.BlockHash(), h, uint32(b.Header.Version), b.Header.Timestamp.Unix(), len(b.Transactions), size, stripped*3+size,
		b.Header.MerkleRoot, prev, times[len(times)/2], b.Header.Nonce, b.Header.Bits)
}

// TestEsploraBlocks checks the block routes on mainnet 0-170 byte for byte
// against bodies built with btcd.
func TestEsploraBlocks(t *testing.T) {
	s, _, blocks := mainnetServer(t, 170)
	var b170 btcwire.MsgBlock
	if err := b170.Deserialize(bytes.NewReader(blocks[170])); err != nil {
		t.Fatal(err)
	}
	var hdr bytes.Buffer
	if err := b170.Header.Serialize(&hdr); err != nil {
		t.Fatal(err)
	}
	list := func(from int) string {
		var parts []string
		for h := from; h >= 0 && h > from-10; h-- {
			parts = append(parts, esploraBlockJSON(t, blocks, h))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	zero := strings.Repeat("0", 64)
	for _, tc := range []struct {
		target string
		code   int
		ctype  string
		body   string
	}{
		{"/api/block/" + mainBlock170, 200, "application/json", esploraBlockJSON(t, blocks, 170)},
		{"/api/block/" + mainBlock1, 200, "application/json", esploraBlockJSON(t, blocks, 1)},
		{"/api/block/" + params.MainNet().GenesisHash.String(), 200, "application/json", esploraBlockJSON(t, blocks, 0)},
		{"/api/block/" + mainBlock170 + "/header", 200, "text/plain", hex.EncodeToString(hdr.Bytes())},
		{"/api/block/" + mainBlock170 + "/raw", 200, "application/octet-stream", string(blocks[170])},
		{"/api/block/" + mainBlock170 + "/txids", 200, "application/json",
			`["` + b170.Transactions[0].TxHash().String() + `","` + tx170 + `"]`},
		{"/api/block/" + mainBlock170 + "/txid/1", 200, "text/plain", tx170},
		{"/api/block/" + mainBlock170 + "/txid/+0", 200, "text/plain", b170.Transactions[0].TxHash().String()},
		{"/api/block/" + mainBlock170 + "/txid/2", 404, "text/plain", "tx index out of range"},
		{"/api/block/" + mainBlock170 + "/txid/x", 400, "text/plain", "Invalid number"},
		{"/api/block/xyz/txid/x", 400, "text/plain", "Invalid hex string"},
		{"/api/block/" + zero, 404, "text/plain", "Block not found"},
		{"/api/block/" + zero + "/header", 404, "text/plain", "Block not found"},
		{"/api/block/" + zero + "/raw", 404, "text/plain", "Block not found"},
		{"/api/block/" + zero + "/txids", 404, "text/plain", "Block not found"},
		{"/api/block/" + zero + "/txid/0", 404, "text/plain", "Block not found"},
		{"/api/block/xyz", 400, "text/plain", "Invalid hex string"},
		{"/api/block/" + mainBlock170 + "/", 404, "text/plain", `endpoint does not exist "/block/` + mainBlock170 + `/"`},
		{"/api/blocks", 200, "application/json", list(170)},
		{"/api/blocks/tip", 200, "application/json", list(170)},
		{"/api/blocks/", 200, "application/json", list(170)},
		{"/api/blocks/abc", 200, "application/json", list(170)},
		{"/api/blocks/99999999999999999999999", 200, "application/json", list(170)}, // not a usize: from the tip
		{"/api/blocks/5", 200, "application/json", list(5)},
		{"/api/blocks/+12", 200, "application/json", list(12)},
		{"/api/blocks/0", 200, "application/json", list(0)},
		{"/api/blocks/171", 404, "text/plain", "Block not found"},
	} {
		rec := do(t, s, "GET", tc.target, nil)
		if rec.Code != tc.code || rec.Header().Get("Content-Type") != tc.ctype || rec.Body.String() != tc.body {
			t.Errorf("%s:\n got %d %q %.300q\nwant %d %q %.300q", tc.target, rec.Code, rec.Header().Get("Content-Type"), rec.Body, tc.code, tc.ctype, tc.body)
		}
		if cc := rec.Header().Get("Cache-Control"); (rec.Code == 200) != (cc != "") {
			t.Errorf("%s: Cache-Control %q with %d", tc.target, cc, rec.Code)
		}
	}
}

// A block whose data is no longer kept: the routes needing only the index
// answer (/block/:hash and /blocks too: the index keeps tx_count, size and
// weight), the others are electrs' 404.
func TestEsploraBlocksPruned(t *testing.T) {
	p := params.MainNet()
	cs := prunedMainnet(t, 20, 5)
	s := newServer(t, cs, p)
	if _, err := cs.BlockData(mustAt(t, cs, 2).Hash); err == nil {
		t.Skip("block 2's data is still kept")
	}
	b2 := mainBlock2
	for _, tc := range []struct {
		target string
		code   int
	}{
		{"/api/block/" + b2 + "/header", 200},
		{"/api/block/" + b2 + "/status", 200},
		{"/api/block-height/2", 200},
		{"/api/block/" + b2, 200},
		{"/api/block/" + b2 + "/raw", 404},
		{"/api/block/" + b2 + "/txids", 404},
		{"/api/block/" + b2 + "/txid/0", 404},
		{"/api/blocks/2", 200},
	} {
		rec := do(t, s, "GET", tc.target, nil)
		if rec.Code != tc.code || (tc.code == 404 && rec.Body.String() != "Block not found") {
			t.Errorf("%s: %d %q", tc.target, rec.Code, rec.Body)
		}
	}
	// Block 2 is 215 bytes, one transaction, no witness.
	var v EsploraBlock
	decodeJSON(t, do(t, s, "GET", "/api/block/"+b2, nil), &v)
	if v.ID != b2 || v.Height != 2 || v.TxCount != 1 || v.Size != 215 || v.Weight != 860 {
		t.Errorf("/api/block/%s: %+v", b2, v)
	}
	var list []EsploraBlock
	decodeJSON(t, do(t, s, "GET", "/api/blocks/2", nil), &list)
	if len(list) != 3 || list[0].ID != b2 || list[0].Size != 215 || list[0].Weight != 860 || list[2].Size != 285 {
		t.Errorf("/api/blocks/2: %+v", list)
	}
	decodeJSON(t, do(t, s, "GET", "/api/blocks/20", nil), &list)
	if len(list) != 10 || list[9].Height != 11 {
		t.Errorf("/api/blocks/20 listed %d blocks", len(list))
	}
}
