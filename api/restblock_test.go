package api

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/wire"
)

// TestRESTBlock: /rest/block answers are the block's bytes as they appear
// in the block file (bin) and their hex plus a newline, as Core's
// rest_block writes them; errors carry Core's messages.
func TestRESTBlock(t *testing.T) {
	s, _, blocks := mainnetServer(t, 400) // blocks below 400-288 are pruned
	hash := func(i int) string { return wire.DoubleSHA256(blocks[i][:80]).String() }
	for _, h := range []int{0, 170, 399, 400} {
		bin := do(t, s, "GET", "/rest/block/"+hash(h)+".bin", nil)
		if bin.Code != 200 || bin.Header().Get("Content-Type") != "application/octet-stream" || !bytes.Equal(bin.Body.Bytes(), blocks[h]) {
			t.Fatalf("block %d bin: %d %q, %d bytes", h, bin.Code, bin.Header().Get("Content-Type"), bin.Body.Len())
		}
		hx := do(t, s, "GET", "/rest/block/"+hash(h)+".hex", nil)
		if hx.Code != 200 || hx.Header().Get("Content-Type") != "text/plain" || hx.Body.String() != hex.EncodeToString(blocks[h])+"\n" {
			t.Fatalf("block %d hex: %d %q", h, hx.Code, hx.Header().Get("Content-Type"))
		}
		nt := do(t, s, "GET", "/rest/block/notxdetails/"+hash(h)+".bin", nil)
		if !bytes.Equal(nt.Body.Bytes(), blocks[h]) {
			t.Fatalf("block %d notxdetails bin differs", h)
		}
	}
	for _, tc := range []struct {
		target string
		code   int
		detail string
	}{
		{"/rest/block/" + hash(100) + ".bin", 404, hash(100) + " not available (pruned data)"},
		{"/rest/block/" + strings.Repeat("ab", 32) + ".bin", 404, strings.Repeat("ab", 32) + " not found"},
		{"/rest/block/" + hash(1)[:20] + ".bin", 400, "Invalid hash: " + hash(1)[:20]},
		{"/rest/block/" + hash(170), 404, "output format not found (available: .bin, .hex, .json)"},
		{"/rest/block/" + hash(170) + ".xml", 400, "Invalid hash"},
		{"/rest/block/" + hash(170) + ".json", 404, "not served by utxod"},
		{"/rest/blockpart/" + hash(100) + ".bin?offset=0&size=80", 404, hash(100) + " not available (pruned data)"},
	} {
		rec := do(t, s, "GET", tc.target, nil)
		if rec.Code != tc.code || !strings.Contains(problemOf(t, rec).Detail, tc.detail) {
			t.Errorf("%s: %d %s", tc.target, rec.Code, rec.Body)
		}
	}
}

// TestRESTBlockNoTxDetailsJSON checks getblock verbosity 1 for mainnet
// block 170 (the first block with a payment) against published values and
// btcd's independent decoding.
func TestRESTBlockNoTxDetailsJSON(t *testing.T) {
	s, _, blocks := mainnetServer(t, 171)
	const h170 = "00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee"
	rec := do(t, s, "GET", "/rest/block/notxdetails/"+h170+".json", nil)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	want := []string{"hash", "confirmations", "height", "version", "versionHex", "merkleroot", "time", "mediantime", "nonce", "bits",
		"target", "difficulty", "chainwork", "nTx", "previousblockhash", "nextblockhash", "strippedsize", "size", "weight", "coinbase_tx", "tx"}
	if got := jsonKeys(t, rec.Body.Bytes()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("keys %v\nwant %v", got, want)
	}
	var bj BlockJSON
	decodeJSON(t, rec, &bj)
	var mb btcwire.MsgBlock
	if err := mb.Deserialize(bytes.NewReader(blocks[170])); err != nil {
		t.Fatal(err)
	}
	if bj.Hash != h170 || bj.Height != 170 || bj.Confirmations != 2 || bj.NTx != 2 ||
		bj.MerkleRoot != "7dac2c5666815c17a3b36427de37bb9d2e2c5ccec3f8633eb91a4205cb4c10ff" ||
		bj.PreviousBlockHash != "000000002a22cfee1f2c846adbd12b3e183d4f97683f85dad08a79780a84bd55" ||
		bj.NextBlockHash != wire.DoubleSHA256(blocks[171][:80]).String() ||
		bj.ChainWork != "000000000000000000000000000000000000000000000000000000ab00ab00ab" ||
		bj.Size != mb.SerializeSize() || bj.StrippedSize != mb.SerializeSizeStripped() || bj.Weight != 4*mb.SerializeSizeStripped() {
		t.Fatalf("%+v", bj)
	}
	// The coinbase and the first payment (Satoshi to Hal Finney).
	if len(bj.Tx) != 2 || bj.Tx[0] != "b1fea52486ce0c62bb442b530a3f0132b826c74e473d1f2c220bfa78111c5082" ||
		bj.Tx[1] != "f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16" {
		t.Fatalf("tx %v", bj.Tx)
	}
	cb := mb.Transactions[0]
	if bj.CoinbaseTx != (CoinbaseTx{Version: cb.Version, LockTime: cb.LockTime, Sequence: cb.TxIn[0].Sequence, Coinbase: hex.EncodeToString(cb.TxIn[0].SignatureScript)}) {
		t.Fatalf("coinbase_tx %+v", bj.CoinbaseTx)
	}
}
