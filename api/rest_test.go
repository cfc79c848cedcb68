package api

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/wire"
)

// The binary answers are decoded with btcd's wire package, an independent
// implementation of Bitcoin's serialization (no Go client library for
// Core's REST interface exists on the module proxy; the known ones are Rust
// and JavaScript).

func TestRESTChainInfo(t *testing.T) {
	s, cs, blocks := mainnetServer(t, 14)
	rec := do(t, s, "GET", "/rest/chaininfo.json", nil)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" || !strings.HasSuffix(rec.Body.String(), "}\n") {
		t.Fatalf("%d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	// Core 29's getblockchaininfo keys, in Core's order.
	want := []string{"chain", "blocks", "headers", "bestblockhash", "bits", "target", "difficulty", "time", "mediantime",
		"verificationprogress", "initialblockdownload", "chainwork", "size_on_disk", "pruned", "warnings"}
	if got := jsonKeys(t, rec.Body.Bytes()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("keys %v\nwant %v", got, want)
	}
	var ci map[string]any
	decodeJSON(t, rec, &ci)
	tip := wire.DoubleSHA256(blocks[14][:80]).String()
	for k, v := range map[string]any{"chain": "main", "blocks": 14.0, "headers": 14.0, "bestblockhash": tip, "bits": "1d00ffff",
		"target": "00000000ffff0000000000000000000000000000000000000000000000000000", "difficulty": 1.0,
		"chainwork": fmt.Sprintf("%064x", 15*0x100010001), "initialblockdownload": true, "pruned": false} {
		if ci[k] != v {
			t.Errorf("%s = %v, want %v", k, ci[k], v)
		}
	}
	// Headers known ahead of their blocks (headers-first) count in
	// "headers", as Core's m_best_header, not in "blocks".
	var hs []wire.Header
	for _, raw := range blocks[15:40] {
		h, err := wire.ParseHeader(raw)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if hr := cs.AcceptHeaders(hs); hr.Added != len(hs) {
		t.Fatalf("headers: %+v", hr)
	}
	decodeJSON(t, do(t, s, "GET", "/rest/chaininfo.json", nil), &ci)
	if ci["blocks"] != 14.0 || ci["headers"] != 39.0 {
		t.Errorf("after headers-first: blocks %v headers %v, want 14 and 39", ci["blocks"], ci["headers"])
	}
	for _, target := range []string{"/rest/chaininfo", "/rest/chaininfo.bin", "/rest/chaininfo.hex", "/rest/chaininfo.xml"} {
		rec := do(t, s, "GET", target, nil)
		if rec.Code != 404 || !strings.Contains(problemOf(t, rec).Detail, "available: json") {
			t.Errorf("%s: %d %s", target, rec.Code, rec.Body)
		}
	}
}

// jsonKeys returns the top-level keys of a JSON object in order.
func jsonKeys(t testing.TB, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestRESTBlockHashByHeight(t *testing.T) {
	s, _, blocks := mainnetServer(t, 3)
	h2 := wire.DoubleSHA256(blocks[2][:80])
	for _, tc := range []struct {
		target, ctype, body string
		code                int
		detail              string
	}{
		{"/rest/blockhashbyheight/2.bin", "application/octet-stream", string(h2[:]), 200, ""},
		{"/rest/blockhashbyheight/2.hex", "text/plain", h2.String() + "\n", 200, ""},
		{"/rest/blockhashbyheight/2.json", "application/json", `{"blockhash":"` + h2.String() + `"}` + "\n", 200, ""},
		{"/rest/blockhashbyheight/4.json", "", "", 404, "Block height out of range"},
		{"/rest/blockhashbyheight/-1.json", "", "", 400, "Invalid height: -1"},
		{"/rest/blockhashbyheight/+2.json", "", "", 400, "Invalid height: 2"}, // Core's ToIntegral refuses '+'; SAFE_CHARS_DEFAULT drops it
		{"/rest/blockhashbyheight/abc.json", "", "", 400, "Invalid height: abc"},
		{"/rest/blockhashbyheight/2", "", "", 404, "output format not found"},
		{"/rest/blockhashbyheight/2.txt", "", "", 400, "Invalid height: 2.txt"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			rec := do(t, s, "GET", tc.target, nil)
			if rec.Code != tc.code {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if tc.code != 200 {
				if p := problemOf(t, rec); !strings.Contains(p.Detail, tc.detail) {
					t.Fatalf("detail %q", p.Detail)
				}
				return
			}
			if rec.Header().Get("Content-Type") != tc.ctype || rec.Body.String() != tc.body {
				t.Fatalf("%q %q", rec.Header().Get("Content-Type"), rec.Body)
			}
		})
	}
	// The bin answer decodes with btcd as the block's hash.
	var h chainhash.Hash
	copy(h[:], do(t, s, "GET", "/rest/blockhashbyheight/2.bin", nil).Body.Bytes())
	var hdr btcwire.BlockHeader
	if err := hdr.Deserialize(bytes.NewReader(blocks[2])); err != nil || hdr.BlockHash() != h {
		t.Fatalf("btcd: %v %s", err, h)
	}
}

func TestRESTHeaders(t *testing.T) {
	s, _, blocks := mainnetServer(t, 20)
	hash := func(i int) string { return wire.DoubleSHA256(blocks[i][:80]).String() }
	for _, tc := range []struct {
		target string
		from   int
		n      int
	}{
		{"/rest/headers/" + hash(3) + ".bin", 3, 5},
		{"/rest/headers/" + hash(3) + ".bin?count=1", 3, 1},
		{"/rest/headers/" + hash(0) + ".bin?count=2000", 0, 21},
		{"/rest/headers/" + hash(18) + ".bin?count=10", 18, 3},
		{"/rest/headers/7/" + hash(2) + ".bin", 2, 7},
		{"/rest/headers/" + strings.Repeat("ab", 32) + ".bin", 0, 0},
	} {
		t.Run(tc.target, func(t *testing.T) {
			bin := do(t, s, "GET", tc.target, nil)
			if bin.Code != 200 || bin.Header().Get("Content-Type") != "application/octet-stream" {
				t.Fatalf("%d %s", bin.Code, bin.Body)
			}
			if bin.Body.Len() != 80*tc.n {
				t.Fatalf("%d bytes, want %d headers", bin.Body.Len(), tc.n)
			}
			// Independent decoding with btcd: each header is the block's.
			r := bytes.NewReader(bin.Body.Bytes())
			for i := 0; i < tc.n; i++ {
				var h btcwire.BlockHeader
				if err := h.Deserialize(r); err != nil {
					t.Fatal(err)
				}
				if h.BlockHash().String() != hash(tc.from+i) || !bytes.Equal(blocks[tc.from+i][:80], bin.Body.Bytes()[80*i:80*i+80]) {
					t.Fatalf("header %d is not block %d", i, tc.from+i)
				}
			}
			hexRec := do(t, s, "GET", strings.Replace(tc.target, ".bin", ".hex", 1), nil)
			if hexRec.Header().Get("Content-Type") != "text/plain" || hexRec.Body.String() != hex.EncodeToString(bin.Body.Bytes())+"\n" {
				t.Fatalf("hex %q", hexRec.Body)
			}
			var js []BlockHeader
			decodeJSON(t, do(t, s, "GET", strings.Replace(tc.target, ".bin", ".json", 1), nil), &js)
			if len(js) != tc.n {
				t.Fatalf("json has %d headers", len(js))
			}
			for i, h := range js {
				if h.Hash != hash(tc.from+i) || h.Height != int32(tc.from+i) || h.Confirmations != int32(20-tc.from-i+1) {
					t.Fatalf("json header %d: %+v", i, h)
				}
			}
		})
	}
	// Core's blockheaderToJSON fields for block 1, in order (nTx is
	// CBlockIndex::nTx, the one transaction of block 1).
	rec := do(t, s, "GET", "/rest/headers/"+hash(1)+".json?count=1", nil)
	body := strings.TrimSuffix(rec.Body.String(), "\n")
	want := `[{"hash":"00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048","confirmations":20,"height":1,"version":1,"versionHex":"00000001",` +
		`"merkleroot":"0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098","time":1231469665,"mediantime":1231469665,"nonce":2573394689,` +
		`"bits":"1d00ffff","target":"00000000ffff0000000000000000000000000000000000000000000000000000","difficulty":1,` +
		`"chainwork":"0000000000000000000000000000000000000000000000000000000200020002","nTx":1,` +
		`"previousblockhash":"000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f","nextblockhash":"000000006a625f06636b8bb6ac7b960a8d03705d1ace08b1a19da3fdcc99ddbd"}]`
	if body != want {
		t.Fatalf("json\n got %s\nwant %s", body, want)
	}
	if js := do(t, s, "GET", "/rest/headers/"+strings.Repeat("ab", 32)+".json", nil).Body.String(); js != "[]\n" {
		t.Fatalf("unknown block json %q", js)
	}
	for _, tc := range []struct {
		target string
		code   int
		detail string
	}{
		{"/rest/headers/" + hash(1) + ".bin?count=0", 400, "Header count is invalid or out of acceptable range (1-2000): 0"},
		{"/rest/headers/" + hash(1) + ".bin?count=2001", 400, "(1-2000): 2001"},
		{"/rest/headers/" + hash(1) + ".bin?count=x", 400, "(1-2000): x"},
		{"/rest/headers/" + hash(1) + ".bin?count=", 400, "(1-2000): "},
		{"/rest/headers/0/" + hash(1) + ".bin", 400, "(1-2000): 0"},
		{"/rest/headers/" + hash(1)[:10] + ".bin", 400, "Invalid hash: " + hash(1)[:10]},
		{"/rest/headers/a/b/c.bin", 400, "Invalid URI format"},
		{"/rest/headers/" + hash(1), 404, "output format not found"},
		{"/rest/headers/" + hash(1) + ".xml", 400, "Invalid hash"},
	} {
		rec := do(t, s, "GET", tc.target, nil)
		if rec.Code != tc.code || !strings.Contains(problemOf(t, rec).Detail, tc.detail) {
			t.Errorf("%s: %d %s", tc.target, rec.Code, rec.Body)
		}
	}
}

// decodedUTXOs is a BIP64 binary answer decoded with btcd.
type decodedUTXOs struct {
	height int32
	tip    chainhash.Hash
	bitmap []byte
	coins  []struct {
		height uint32
		out    btcwire.TxOut
	}
}

func decodeBIP64(t testing.TB, b []byte) decodedUTXOs {
	t.Helper()
	r := bytes.NewReader(b)
	var d decodedUTXOs
	if err := binary.Read(r, binary.LittleEndian, &d.height); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, d.tip[:]); err != nil {
		t.Fatal(err)
	}
	var err error
	if d.bitmap, err = btcwire.ReadVarBytes(r, 0, 1000, "bitmap"); err != nil {
		t.Fatal(err)
	}
	n, err := btcwire.ReadVarInt(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.coins = make([]struct {
		height uint32
		out    btcwire.TxOut
	}, n)
	for i := range d.coins {
		var dummy uint32
		if err := binary.Read(r, binary.LittleEndian, &dummy); err != nil || dummy != 0 {
			t.Fatalf("nTxVerDummy %d %v", dummy, err)
		}
		if err := binary.Read(r, binary.LittleEndian, &d.coins[i].height); err != nil {
			t.Fatal(err)
		}
		if err := btcwire.ReadTxOut(r, 0, 0, &d.coins[i].out); err != nil {
			t.Fatal(err)
		}
	}
	if r.Len() != 0 {
		t.Fatalf("%d trailing bytes", r.Len())
	}
	return d
}

func TestRESTGetUTXOs(t *testing.T) {
	s, _, blocks := mainnetServer(t, 170)
	b170, _ := wire.ParseBlock(blocks[170])
	b9, _ := wire.ParseBlock(blocks[9])
	tx := b170.Txs[1].TxID.String()
	cb9 := b9.Txs[0].TxID.String() // spent by block 170
	b1, _ := wire.ParseBlock(blocks[1])
	cb1 := b1.Txs[0].TxID.String()
	tip := wire.DoubleSHA256(blocks[170][:80])
	path := fmt.Sprintf("/rest/getutxos/%s-0/%s-0/%s-1/%s-0", tx, cb9, tx, cb1)

	bin := do(t, s, "GET", path+".bin", nil)
	if bin.Code != 200 || bin.Header().Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("%d %s", bin.Code, bin.Body)
	}
	d := decodeBIP64(t, bin.Body.Bytes())
	if d.height != 170 || d.tip != chainhash.Hash(tip) || !bytes.Equal(d.bitmap, []byte{0b1101}) || len(d.coins) != 3 {
		t.Fatalf("decoded %+v", d)
	}
	for i, want := range []struct {
		height uint32
		value  int64
	}{{170, 10e8}, {170, 40e8}, {1, 50e8}} {
		if c := d.coins[i]; c.height != want.height || c.out.Value != want.value || len(c.out.PkScript) == 0 {
			t.Fatalf("coin %d: %+v", i, c)
		}
	}
	hexRec := do(t, s, "GET", path+".hex", nil)
	if hexRec.Header().Get("Content-Type") != "text/plain" || hexRec.Body.String() != hex.EncodeToString(bin.Body.Bytes())+"\n" {
		t.Fatalf("hex %q", hexRec.Body)
	}
	// checkmempool: no mempool, same answer.
	if cm := do(t, s, "GET", strings.Replace(path, "getutxos/", "getutxos/checkmempool/", 1)+".bin", nil); !bytes.Equal(cm.Body.Bytes(), bin.Body.Bytes()) {
		t.Fatal("checkmempool answer differs")
	}

	js := do(t, s, "GET", path+".json", nil)
	var g GetUTXOs
	decodeJSON(t, js, &g)
	if g.ChainHeight != 170 || g.ChaintipHash != tip || g.Bitmap != "1011" || len(g.UTXOs) != 3 {
		t.Fatalf("json %+v", g)
	}
	// Block 1's coinbase: pay-to-pubkey, as Core renders it.
	wantCB1 := `{"height":1,"value":50.00000000,"scriptPubKey":{"asm":"0496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858ee OP_CHECKSIG",` +
		`"desc":"pk(0496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858ee)#qnv32gt7",` +
		`"hex":"410496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858eeac","type":"pubkey"}}]}`
	if !strings.HasSuffix(js.Body.String(), wantCB1+"\n") {
		t.Fatalf("json %s", js.Body)
	}
	if got := jsonKeys(t, js.Body.Bytes()); strings.Join(got, ",") != "chainHeight,chaintipHash,bitmap,utxos" {
		t.Fatalf("keys %v", got)
	}

	// A BIP64 binary request body: bool checkmempool, vector<COutPoint>.
	var req bytes.Buffer
	req.WriteByte(1)
	req.WriteByte(2)
	for _, op := range []struct {
		txid string
		n    uint32
	}{{tx, 0}, {cb9, 0}} {
		h, _ := wire.ParseHash(op.txid)
		req.Write(h[:])
		_ = binary.Write(&req, binary.LittleEndian, op.n)
	}
	post := do(t, s, "POST", "/rest/getutxos.bin", req.Bytes())
	if post.Code != 200 {
		t.Fatalf("POST bin: %d %s", post.Code, post.Body)
	}
	if d := decodeBIP64(t, post.Body.Bytes()); !bytes.Equal(d.bitmap, []byte{1}) || len(d.coins) != 1 || d.coins[0].out.Value != 10e8 {
		t.Fatalf("POST bin decoded %+v", d)
	}
	postHex := do(t, s, "POST", "/rest/getutxos.hex", []byte(hex.EncodeToString(req.Bytes())))
	if postHex.Body.String() != hex.EncodeToString(post.Body.Bytes())+"\n" {
		t.Fatalf("POST hex %q", postHex.Body)
	}

	many := "/rest/getutxos"
	for i := 0; i < 16; i++ {
		many += fmt.Sprintf("/%s-%d", tx, i)
	}
	for _, tc := range []struct {
		method, target string
		body           []byte
		code           int
		detail         string
	}{
		{"GET", many + ".json", nil, 400, "Error: max outpoints exceeded (max: 15, tried: 16)"},
		{"GET", "/rest/getutxos/" + tx + ".json", nil, 400, "Parse error"},
		{"GET", "/rest/getutxos/" + tx + "-x.json", nil, 400, "Parse error"},
		{"GET", "/rest/getutxos/" + tx + "-1-2.json", nil, 400, "Parse error"},
		{"GET", "/rest/getutxos/" + tx[:62] + "-1.json", nil, 400, "Parse error"},
		{"GET", "/rest/getutxos/" + tx + "--1.json", nil, 400, "Parse error"},
		{"GET", "/rest/getutxos.json", nil, 400, "Error: empty request"},
		{"GET", "/rest/getutxos/checkmempool.json", nil, 400, "Error: empty request"},
		{"POST", "/rest/getutxos.json", req.Bytes(), 400, "Error: empty request"},
		{"POST", "/rest/getutxos/" + tx + "-0.bin", req.Bytes(), 400, "Combination of URI scheme inputs and raw post data is not allowed"},
		{"POST", "/rest/getutxos.bin", []byte{1, 5, 0}, 400, "Parse error"},
		{"GET", "/rest/getutxos/" + tx + "-0", nil, 404, "output format not found"},
		{"GET", "/rest/getutxos/" + tx + "-0.xml", nil, 400, "Parse error"},
	} {
		rec := do(t, s, tc.method, tc.target, tc.body)
		if rec.Code != tc.code || !strings.Contains(problemOf(t, rec).Detail, tc.detail) {
			t.Errorf("%s %.80s: %d %s", tc.method, tc.target, rec.Code, rec.Body)
		}
	}
	// Other Core REST endpoints are not served.
	if rec := do(t, s, "GET", "/rest/tx/"+tx+".json", nil); rec.Code != 404 {
		t.Errorf("/rest/tx: %d", rec.Code)
	}
}

func TestDescribeScript(t *testing.T) {
	main, test := addrParamsFor("main"), addrParamsFor("testnet3")
	mustHex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		script string
		ap     addrParams
		want   ScriptPubKey
	}{
		// Core's doc/REST-interface.md example.
		{"76a9141c7cebb529b86a04c683dfa87be49de35bcf589e88ac", test, ScriptPubKey{
			Asm:  "OP_DUP OP_HASH160 1c7cebb529b86a04c683dfa87be49de35bcf589e OP_EQUALVERIFY OP_CHECKSIG",
			Desc: "addr(mi7as51dvLJsizWnTMurtRmrP8hG2m1XvD)#gj9tznmy", Address: "mi7as51dvLJsizWnTMurtRmrP8hG2m1XvD", Type: "pubkeyhash"}},
		// The genesis address.
		{"76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", main, ScriptPubKey{Address: "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", Type: "pubkeyhash"}},
		// BIP173 and BIP350 vectors.
		{"0014751e76e8199196d454941c45d1b3a323f1433bd6", main, ScriptPubKey{Asm: "0 751e76e8199196d454941c45d1b3a323f1433bd6",
			Address: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", Type: "witness_v0_keyhash"}},
		{"512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", main, ScriptPubKey{
			Address: "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", Type: "witness_v1_taproot",
			Desc: "rawtr(79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798)#"}},
		{"a914e9c3dd0c07aac76179ebc76a6c78d4d67c6c160a87", main, ScriptPubKey{Address: "3P14159f73E4gFr7JterCCQh9QjiTjiZrG", Type: "scripthash"}},
		{"51024e73", main, ScriptPubKey{Asm: "1 29518", Address: "bc1pfeessrawgf", Type: "anchor"}},
		// OP_RETURN with small pushes shown as numbers.
		{"6a0401020304", main, ScriptPubKey{Asm: "OP_RETURN 67305985", Type: "nulldata", Desc: "raw(6a0401020304)#"}},
		{"6a4c", main, ScriptPubKey{Asm: "OP_RETURN [error]", Type: "nonstandard"}},
		{"deadbeef", main, ScriptPubKey{Desc: "raw(deadbeef)#89f8spxm", Type: "nonstandard"}},
		{"008f", main, ScriptPubKey{Asm: "0 OP_NEGATE", Type: "nonstandard"}},
		{"0181", main, ScriptPubKey{Asm: "-1", Type: "nonstandard"}},
		{"4f60ba", main, ScriptPubKey{Asm: "-1 16 OP_CHECKSIGADD", Type: "nonstandard"}},
	} {
		got := describeScript(mustHex(tc.script), tc.ap)
		if got.Hex != tc.script || got.Type != tc.want.Type || got.Address != tc.want.Address ||
			(tc.want.Asm != "" && got.Asm != tc.want.Asm) || (tc.want.Desc != "" && !strings.HasPrefix(got.Desc, tc.want.Desc)) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.script, got, tc.want)
		}
		if i := strings.LastIndexByte(got.Desc, '#'); i < 0 || len(got.Desc)-i != 9 {
			t.Errorf("%s: desc %q lacks a checksum", tc.script, got.Desc)
		}
	}
	// 1-of-2 bare multisig with valid keys: multi().
	k1 := "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
	k2 := "02c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5"
	ms := describeScript(mustHex("5121"+k1+"21"+k2+"52ae"), main)
	if ms.Type != "multisig" || !strings.HasPrefix(ms.Desc, "multi(1,"+k1+","+k2+")#") || ms.Address != "" {
		t.Errorf("multisig %+v", ms)
	}
	// A key off the curve: still "pubkey", and pk() because Core's
	// InferPubkey checks only the header byte (CPubKey::IsValidNonHybrid,
	// script/descriptor.cpp), not the point.
	bad := "21" + "02" + strings.Repeat("00", 32) + "ac"
	if pk := describeScript(mustHex(bad), main); pk.Type != "pubkey" || !strings.HasPrefix(pk.Desc, "pk(02"+strings.Repeat("00", 32)+")#") {
		t.Errorf("invalid pubkey %+v", pk)
	}
	// A hybrid key is raw() (descriptor_tests.cpp CheckInferDescriptor).
	hybrid := "4106" + "9228de6902abb4f541791f6d7f925b10e2078ccb1298856e5ea5cc5fd667f930eac37a00cc07f9a91ef3c2d17bf7a17db04552ff90ac312a5b8b4caca6c97aa4" + "ac"
	if pk := describeScript(mustHex(hybrid), main); pk.Type != "pubkey" || !strings.HasPrefix(pk.Desc, "raw("+hybrid+")#") {
		t.Errorf("hybrid pubkey %+v", pk)
	}
}
