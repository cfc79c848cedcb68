package api

import (
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"utxod/scripthash"
)

// Mainnet facts used below (public chain data): block hashes from
// testdata/mainnet/reference-digests.jsonl, block 1's coinbase
// 0e3e2357…2098 (50 BTC to a P2PK key, header time 1231469665), block 170's
// transaction f4184fc5…9e16 paying 10 BTC to Hal Finney's key and 40 BTC
// back to the key of block 9's coinbase, which it spends (header time
// 1231731025).
const (
	mainBlock1    = "00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048"
	mainBlock2    = "000000006a625f06636b8bb6ac7b960a8d03705d1ace08b1a19da3fdcc99ddbd"
	mainBlock170  = "00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee"
	block1Script  = "410496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858eeac"
	halScript     = "4104ae1a62fe09c5f51b13905f07f06b99a2f7159b2225f374cd378d71302fa28414e7aab37397f554a7df5f142c21c1b7303b8a0626f1baded5c72a704f7e6cd84cac"
	block9Script  = "410411db93e1dcdb8a016b49840f8c53bc1eb68a382e97b1482ecad7b148a6909a5cb2e0eaddfb84ccf9744464f82e160bfa9b8b64f9d4c03f999b8643f656b412a3ac"
	tx170         = "f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16"
	block170Time  = "1231731025"
	ttlShortValue = "public, max-age=10"
	ttlLongValue  = "public, max-age=157784630"
)

func shOf(t *testing.T, scriptHex string) string {
	t.Helper()
	b, err := hex.DecodeString(scriptHex)
	if err != nil {
		t.Fatal(err)
	}
	return scripthash.Of(b).String()
}

// TestEsploraMainnet checks every Esplora route on mainnet 0-170, byte for
// byte: status, Content-Type, Cache-Control and body (no newline).
func TestEsploraMainnet(t *testing.T) {
	s, _, _ := mainnetServer(t, 170)
	zero := strings.Repeat("0", 64)
	for _, tc := range []struct {
		method, target string
		code           int
		ctype, cache   string
		body           string
	}{
		{"GET", "/api/blocks/tip/height", 200, "text/plain", ttlShortValue, "170"},
		{"GET", "/api/blocks/tip/hash", 200, "text/plain", ttlShortValue, mainBlock170},
		{"GET", "/api/block-height/1", 200, "text/plain", ttlLongValue, mainBlock1},
		{"GET", "/api/block-height/+2", 200, "text/plain", ttlLongValue, mainBlock2}, // Rust's usize parser takes '+'
		{"GET", "/api/block-height/170", 200, "text/plain", ttlShortValue, mainBlock170},
		{"GET", "/api/block-height/171", 404, "text/plain", "", "Block not found"},
		{"GET", "/api/block-height/99999999999", 404, "text/plain", "", "Block not found"},
		{"GET", "/api/block-height/-1", 400, "text/plain", "", "Invalid number"},
		{"GET", "/api/block-height/1x", 400, "text/plain", "", "Invalid number"},
		{"GET", "/api/block-height/99999999999999999999999", 400, "text/plain", "", "Invalid number"},
		{"GET", "/api/block/" + mainBlock1 + "/status", 200, "application/json", ttlLongValue,
			`{"in_best_chain":true,"height":1,"next_best":"` + mainBlock2 + `"}`},
		{"GET", "/api/block/" + mainBlock170 + "/status", 200, "application/json", ttlShortValue,
			`{"in_best_chain":true,"height":170,"next_best":null}`},
		{"GET", "/api/block/" + zero + "/status", 200, "application/json", ttlShortValue,
			`{"in_best_chain":false,"height":null,"next_best":null}`},
		{"GET", "/api/block/xyz/status", 400, "text/plain", "", "Invalid hex string"},
		{"GET", "/api/scripthash/" + shOf(t, block1Script) + "/utxo", 200, "application/json", ttlShortValue,
			`[{"txid":"0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098","vout":0,"status":{"confirmed":true,"block_height":1,"block_hash":"` + mainBlock1 + `","block_time":1231469665},"value":5000000000}]`},
		{"GET", "/api/scripthash/" + shOf(t, halScript) + "/utxo", 200, "application/json", ttlShortValue,
			`[{"txid":"` + tx170 + `","vout":0,"status":{"confirmed":true,"block_height":170,"block_hash":"` + mainBlock170 + `","block_time":` + block170Time + `},"value":1000000000}]`},
		// Block 9's coinbase is spent; the change of block 170 remains.
		{"GET", "/api/scripthash/" + shOf(t, block9Script) + "/utxo", 200, "application/json", ttlShortValue,
			`[{"txid":"` + tx170 + `","vout":1,"status":{"confirmed":true,"block_height":170,"block_hash":"` + mainBlock170 + `","block_time":` + block170Time + `},"value":4000000000}]`},
		{"GET", "/api/scripthash/" + strings.ToUpper(shOf(t, halScript)) + "/utxo", 200, "application/json", ttlShortValue,
			`[{"txid":"` + tx170 + `","vout":0,"status":{"confirmed":true,"block_height":170,"block_hash":"` + mainBlock170 + `","block_time":` + block170Time + `},"value":1000000000}]`},
		{"GET", "/api/scripthash/" + zero + "/utxo", 200, "application/json", ttlShortValue, `[]`},
		{"GET", "/api/scripthash/abc/utxo", 400, "text/plain", "", "Invalid scripthash"},
		// A valid address never paid: the empty list.
		{"GET", "/api/address/1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa/utxo", 200, "application/json", ttlShortValue, `[]`},
		{"GET", "/api/address/bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4/utxo", 200, "application/json", ttlShortValue, `[]`},
		// Unknown routes as electrs words them; no trailing-slash leniency.
		{"GET", "/api/blocks/tip/height/", 404, "text/plain", "", `endpoint does not exist "/blocks/tip/height/"`},
		{"GET", "/api/nothing", 404, "text/plain", "", `endpoint does not exist "/nothing"`},
		{"POST", "/api/blocks/tip/hash", 404, "text/plain", "", `endpoint does not exist "/blocks/tip/hash"`},
	} {
		rec := do(t, s, tc.method, tc.target, nil)
		h := rec.Header()
		if rec.Code != tc.code || h.Get("Content-Type") != tc.ctype || h.Get("Cache-Control") != tc.cache || rec.Body.String() != tc.body {
			t.Errorf("%s %s:\n got %d %q %q %q\nwant %d %q %q %q", tc.method, tc.target,
				rec.Code, h.Get("Content-Type"), h.Get("Cache-Control"), rec.Body.String(),
				tc.code, tc.ctype, tc.cache, tc.body)
		}
	}
}

// Bad addresses: 400 text/plain; another network's says so.
func TestEsploraAddressErrors(t *testing.T) {
	s, _, _ := mainnetServer(t, 1)
	for _, tc := range []struct{ addr, prefix string }{
		{"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", "Address on invalid network: "},
		{"mzK2FFDEhxqHcmrJw1ysqFkVyhUULo45hZ", "Address on invalid network: "},
		{"bcrt1pfeesnyr2tx", "Address on invalid network: "},
		{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", "Invalid Bitcoin address: bad address checksum"},
		{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", "Invalid Bitcoin address: bad address checksum"},
		{"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", "Invalid Bitcoin address: bad address checksum"},
		{"not-an-address", "Invalid Bitcoin address: malformed address"},
		{strings.Repeat("1", 200), "Invalid Bitcoin address: malformed address"},
	} {
		rec := do(t, s, "GET", "/api/address/"+tc.addr+"/utxo", nil)
		if rec.Code != http.StatusBadRequest || rec.Header().Get("Content-Type") != "text/plain" ||
			!strings.HasPrefix(rec.Body.String(), tc.prefix) || rec.Header().Get("Cache-Control") != "" {
			t.Errorf("%s: %d %q %q", tc.addr, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
}
