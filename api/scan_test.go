package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // HASH160 of test keys

	"utxod/address"
	"utxod/descriptor"
	"utxod/utxo"
)

// The scenario of Core's test/functional/rpc_scantxoutset.py: outputs to
// three plain keys (P2SH-P2WPKH, P2PKH, P2WPKH) and to twelve children of
// one tprv, with amounts that are distinct powers of two times 0.001 BTC,
// so every total identifies the outputs a scan found. The expected totals
// and descriptors are the test's assertions.
const (
	scanTprv = "tprv8ZgxMBicQKsPd7Uf69XL1XwhmjHopUGep8GuEiJDZmbQz6o58LninorQAfcKZWARbtRtfnLcJ5MQ2AtHcQJCCRUcMRvmDUjyEmNUWwx8UbK"
	scanTpub = "tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B"
	// Three keys for the non-HD part (the test draws random ones).
	scanK1 = "03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd"
	scanK2 = "02c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5"
	scanK3 = "02f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9"
)

// scanHD are the test's sendtodestination calls (address, satoshis).
var scanHD = []struct {
	addr string
	sat  int64
}{
	{"mkHV1C6JLheLoUSSZYk7x3FH5tnx9bu7yc", 800_000},      // m/0'/0'/0'
	{"mipUSRmJAj2KrjSvsPQtnP8ynUon7FhpCR", 1_600_000},    // m/0'/0'/1'
	{"n37dAGe6Mq1HGM9t4b6rFEEsDGq7Fcgfqg", 3_200_000},    // m/0'/0'/1500'
	{"mqS9Rpg8nNLAzxFExsgFLCnzHBsoQ3PRM6", 6_400_000},    // m/0'/0'/0
	{"mnTg5gVWr3rbhHaKjJv7EEEc76ZqHgSj4S", 12_800_000},   // m/0'/0'/1
	{"mketCd6B9U9Uee1iCsppDJJBHfvi6U6ukC", 25_600_000},   // m/0'/0'/1500
	{"mj8zFzrbBcdaWXowCQ1oPZ4qioBVzLzAp7", 51_200_000},   // m/1/1/0'
	{"mfnKpKQEftniaoE1iXuMMePQU3PUpcNisA", 102_400_000},  // m/1/1/1'
	{"mou6cB1kaP1nNJM1sryW6YRwnd4shTbXYQ", 204_800_000},  // m/1/1/1500'
	{"mtfUoUax9L4tzXARpw1oTGxWyoogp52KhJ", 409_600_000},  // m/1/1/0
	{"mxp7w7j8S1Aq6L8StS2PqVvtt4HGxXEvdy", 819_200_000},  // m/1/1/1
	{"mpQ8rokAhp1TAtJQR6F6TaUmjAWkAWYYBq", 1638_400_000}, // m/1/1/1500
}

type scanOut struct {
	Success     bool        `json:"success"`
	TxOuts      uint64      `json:"txouts"`
	Height      uint32      `json:"height"`
	BestBlock   string      `json:"bestblock"`
	TotalAmount json.Number `json:"total_amount"`
	Unspents    []struct {
		TxID          string      `json:"txid"`
		Vout          uint32      `json:"vout"`
		ScriptPubKey  string      `json:"scriptPubKey"`
		Desc          string      `json:"desc"`
		Amount        json.Number `json:"amount"`
		Coinbase      bool        `json:"coinbase"`
		Height        uint32      `json:"height"`
		BlockHash     string      `json:"blockhash"`
		Confirmations uint32      `json:"confirmations"`
	} `json:"unspents"`
}

func keyHash(t *testing.T, k string) []byte {
	t.Helper()
	b, err := hex.DecodeString(k)
	if err != nil {
		t.Fatal(err)
	}
	h := hash160(b)
	return h[:]
}

// scanChain builds the scenario: block 1 pays the fifteen outputs, block
// 2 follows (the test's generate(1) after the sends).
func scanChain(t *testing.T, cfg Config) (*regtest, map[string]string) {
	r := newRegtest(t, cfg)
	p2wpkh1 := address.WitnessScript(0, keyHash(t, scanK1))
	p2shSegwit := address.P2SHScript(hash160Slice(p2wpkh1))
	legacy := address.P2PKHScript(keyHash(t, scanK2))
	bech32 := address.WitnessScript(0, keyHash(t, scanK3))
	outs := []payout{{p2shSegwit, 100_000}, {legacy, 200_000}, {bech32, 400_000}}
	for _, hd := range scanHD {
		s, err := address.Decode(hd.addr, r.p)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, payout{s, hd.sat})
	}
	r.mine(outs...)
	r.mine()
	return r, map[string]string{"p2sh-segwit": r.addr(p2shSegwit), "legacy": r.addr(legacy), "bech32": r.addr(bech32)}
}

func hash160Slice(b []byte) []byte { h := hash160(b); return h[:] }

func (r *regtest) scan(objs ...any) (int, scanOut, *bytes.Buffer) {
	r.t.Helper()
	if objs == nil {
		objs = []any{}
	}
	body, _ := json.Marshal(map[string]any{"action": "start", "scanobjects": objs})
	rec := do(r.t, r.srv, "POST", "/v1/scan", body, "Content-Type", "application/json")
	var out scanOut
	if rec.Code == 200 {
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil {
			r.t.Fatalf("scan body %s: %v", rec.Body, err)
		}
	}
	return rec.Code, out, rec.Body
}

// btc formats satoshis as Core's ValueFromAmount writes them.
func btc(sat int64) string { return fmt.Sprintf("%d.%08d", sat/1e8, sat%1e8) }

func TestScanCoreScenario(t *testing.T) {
	r, addrs := scanChain(t, Config{})
	obj := func(desc string, rng any) map[string]any { return map[string]any{"desc": desc, "range": rng} }
	for _, tc := range []struct {
		objs []any
		want int64 // satoshis
	}{
		{[]any{"pkh(" + scanK1 + ")", "pkh(" + scanK2 + ")", "pkh(" + scanK3 + ")"}, 200_000},
		{[]any{"wpkh(" + scanK1 + ")", "wpkh(" + scanK2 + ")", "wpkh(" + scanK3 + ")"}, 400_000},
		{[]any{"sh(wpkh(" + scanK1 + "))", "sh(wpkh(" + scanK2 + "))", "sh(wpkh(" + scanK3 + "))"}, 100_000},
		{[]any{"combo(" + scanK1 + ")", "combo(" + scanK2 + ")", "combo(" + scanK3 + ")"}, 700_000},
		{[]any{"addr(" + addrs["p2sh-segwit"] + ")", "addr(" + addrs["legacy"] + ")", "addr(" + addrs["bech32"] + ")"}, 700_000},
		{[]any{"addr(" + addrs["p2sh-segwit"] + ")", "addr(" + addrs["legacy"] + ")", "combo(" + scanK3 + ")"}, 700_000},
		{[]any{"combo(" + scanTprv + "/0'/0h/0h)"}, 800_000},
		{[]any{"combo(" + scanTprv + "/0'/0'/1h)"}, 1_600_000},
		{[]any{"combo(" + scanTprv + "/0h/0'/1500')"}, 3_200_000},
		{[]any{"combo(" + scanTprv + "/0h/0h/0)"}, 6_400_000},
		{[]any{"combo(" + scanTprv + "/0'/0h/1)"}, 12_800_000},
		{[]any{"combo(" + scanTprv + "/0h/0'/1500)"}, 25_600_000},
		{[]any{obj("combo("+scanTprv+"/0'/0h/*h)", 1499)}, 2_400_000},
		{[]any{obj("combo("+scanTprv+"/0'/0'/*h)", 1500)}, 5_600_000},
		{[]any{obj("combo("+scanTprv+"/0h/0'/*)", 1499)}, 19_200_000},
		{[]any{obj("combo("+scanTprv+"/0'/0h/*)", 1500)}, 44_800_000},
		{[]any{"combo(" + scanTprv + "/1/1/0')"}, 51_200_000},
		{[]any{"combo(" + scanTprv + "/1/1/1')"}, 102_400_000},
		{[]any{"combo(" + scanTprv + "/1/1/1500h)"}, 204_800_000},
		{[]any{"combo(" + scanTprv + "/1/1/0)"}, 409_600_000},
		{[]any{"combo(" + scanTprv + "/1/1/1)"}, 819_200_000},
		{[]any{"combo(" + scanTprv + "/1/1/1500)"}, 1638_400_000},
		{[]any{"combo(" + scanTpub + "/1/1/0)"}, 409_600_000},
		{[]any{"combo([abcdef88/1/2'/3/4h]" + scanTpub + "/1/1/1)"}, 819_200_000},
		{[]any{"combo(" + scanTpub + "/1/1/1500)"}, 1638_400_000},
		{[]any{obj("combo("+scanTprv+"/1/1/*')", 1499)}, 153_600_000},
		{[]any{obj("combo("+scanTprv+"/1/1/*')", 1500)}, 358_400_000},
		{[]any{obj("combo("+scanTprv+"/1/1/*)", 1499)}, 1228_800_000},
		{[]any{obj("combo("+scanTprv+"/1/1/*)", 1500)}, 2867_200_000},
		{[]any{obj("combo("+scanTpub+"/1/1/*)", 1499)}, 1228_800_000},
		{[]any{obj("combo("+scanTpub+"/1/1/*)", 1500)}, 2867_200_000},
		{[]any{obj("combo("+scanTpub+"/1/1/*)", []int{1500, 1500})}, 1638_400_000},
		{[]any{map[string]any{"desc": "pkh(" + scanTpub + "/1/1/<0;1>)"}}, 1228_800_000},
	} {
		code, out, body := r.scan(tc.objs...)
		if code != 200 || !out.Success || out.TotalAmount.String() != btc(tc.want) {
			t.Errorf("%.100v: %d total %s, want %s (%.200s)", tc.objs, code, out.TotalAmount, btc(tc.want), body)
		}
	}

	// The reported descriptors (sorted, as the test compares them).
	descs := func(objs ...any) []string {
		_, out, _ := r.scan(objs...)
		var d []string
		for _, u := range out.Unspents {
			d = append(d, u.Desc)
		}
		sort.Strings(d)
		return d
	}
	for _, tc := range []struct {
		objs []any
		want []string
	}{
		{[]any{obj("combo("+scanTprv+"/0h/0h/*)", 1499)}, []string{
			"pkh([0c5f9a1e/0h/0h/0]026dbd8b2315f296d36e6b6920b1579ca75569464875c7ebe869b536a7d9503c8c)#rthll0rg",
			"pkh([0c5f9a1e/0h/0h/1]033e6f25d76c00bedb3a8993c7d5739ee806397f0529b1b31dda31ef890f19a60c)#mcjajulr"}},
		{[]any{"combo(" + scanTprv + "/1/1/0)"}, []string{
			"pkh([0c5f9a1e/1/1/0]03e1c5b6e650966971d7e71ef2674f80222752740fc1dfd63bbbd220d2da9bd0fb)#cxmct4w8"}},
		{[]any{obj("combo("+scanTpub+"/1/1/*)", 1500)}, []string{
			"pkh([0c5f9a1e/1/1/0]03e1c5b6e650966971d7e71ef2674f80222752740fc1dfd63bbbd220d2da9bd0fb)#cxmct4w8",
			"pkh([0c5f9a1e/1/1/1500]03832901c250025da2aebae2bfb38d5c703a57ab66ad477f9c578bfbcd78abca6f)#vchwd07g",
			"pkh([0c5f9a1e/1/1/1]030d820fc9e8211c4169be8530efbc632775d8286167afd178caaf1089b77daba7)#z2t3ypsa"}},
	} {
		if got := descs(tc.objs...); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%.80v:\n got %v\nwant %v", tc.objs, got, tc.want)
		}
	}

	// An empty scan: the whole set, at the chainstate's tip.
	code, out, _ := r.scan()
	info, _ := r.cs.Info("none")
	if code != 200 || !out.Success || out.Height != info.Height || out.TxOuts != info.TxOuts || out.BestBlock != info.BestBlock.String() {
		t.Errorf("empty scan: %d %+v vs %+v", code, out, info)
	}

	// blockhash and confirmations, two blocks later.
	r.mine()
	r.mine()
	_, out, _ = r.scan("addr(mpQ8rokAhp1TAtJQR6F6TaUmjAWkAWYYBq)")
	if len(out.Unspents) != 1 {
		t.Fatalf("%+v", out)
	}
	u := out.Unspents[0]
	if u.Height != 1 || u.BlockHash != mustAt(t, r.cs, 1).Hash.String() || u.Confirmations != 4 || u.Coinbase != true ||
		u.Amount.String() != "16.38400000" || u.Desc != "addr(mpQ8rokAhp1TAtJQR6F6TaUmjAWkAWYYBq)#"+mustChecksum(t, "addr(mpQ8rokAhp1TAtJQR6F6TaUmjAWkAWYYBq)") {
		t.Errorf("unspent %+v", u)
	}
}

// Core's argument errors, with its messages.
func TestScanErrors(t *testing.T) {
	r, _ := scanChain(t, Config{})
	for _, tc := range []struct {
		body   string
		code   int
		reason string
		detail string
	}{
		{`{"action":"start","scanobjects":[{"desc":"desc","range":-1}]}`, 400, "bad-range", "End of range is too high"},
		{`{"action":"start","scanobjects":[{"desc":"desc","range":[-1,10]}]}`, 400, "bad-range", "Range should be greater or equal than 0"},
		{fmt.Sprintf(`{"action":"start","scanobjects":[{"desc":"desc","range":[%d,%d]}]}`, (2<<32)-1000000, 2<<32), 400, "bad-range", "End of range is too high"},
		{`{"action":"start","scanobjects":[{"desc":"desc","range":[2,1]}]}`, 400, "bad-range", "Range specified as [begin,end] must not have begin after end"},
		{`{"action":"start","scanobjects":[{"desc":"desc","range":[0,1000001]}]}`, 400, "bad-range", "Range is too large"},
		{`{"action":"start","scanobjects":[{"desc":"desc","range":"x"}]}`, 400, "bad-scan-object", "Range must be specified as end or as [begin,end]"},
		{`{"action":"start","scanobjects":[{"desc":"desc","range":1.5}]}`, 400, "bad-scan-object", "JSON integer out of range"},
		{`{"action":"start","scanobjects":[{"range":5}]}`, 400, "bad-scan-object", "Descriptor needs to be provided in scan object"},
		{`{"action":"start","scanobjects":[5]}`, 400, "bad-scan-object", "Scan object needs to be either a string or an object"},
		{`{"action":"start","scanobjects":[{"desc":"raw(00)","extra":1}]}`, 400, "bad-scan-object", "Scan object needs to be either a string or an object"},
		{`{"action":"start"}`, 400, "bad-scan-request", "scanobjects argument is required for the start action"},
		{`{"action":"invalid_command"}`, 400, "bad-scan-request", "Invalid action 'invalid_command'"},
		{`{"scanobjects":[]}`, 400, "bad-scan-request", "action is required"},
		{`{"action":"start","scanobjects":["desc"]}`, 400, "bad-descriptor", "'desc' is not a valid descriptor function"},
		{`{"action":"start","scanobjects":["pkh(` + scanTpub + `/*')"]}`, 400, "needs-private-key", ""},
		{`{"action":"start","scanobjects":["multi(1,` + scanK1 + `)"]}`, 400, "unsupported-descriptor", "multi()"},
		{`{"action":"start","scanobjects":["raw(00)#aaaaaaaa"]}`, 400, "bad-descriptor", "Provided checksum 'aaaaaaaa' does not match computed checksum"},
		{`{"action":"start","scanobjects":["addr(bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4)"]}`, 400, "bad-descriptor", "Address is not valid"},
		{`{"action":"start","scanobjects":[{"desc":"combo(` + scanTpub + `/*)","range":[0,99999]}]}`, 413, "too-many-scripts", ""},
		{`{"action":"start","scanobjects":[` + strings.Repeat(`"raw(00)",`, MaxScanObjects) + `"raw(00)"]}`, 413, "bad-scan-object", ""},
		{`{"action":`, 400, "bad-json", ""},
	} {
		rec := do(t, r.srv, "POST", "/v1/scan", []byte(tc.body), "Content-Type", "application/json")
		if rec.Code != tc.code {
			t.Errorf("%.100s: %d %s", tc.body, rec.Code, rec.Body)
			continue
		}
		if p := problemOf(t, rec); p.Reason != tc.reason || !strings.Contains(p.Detail, tc.detail) {
			t.Errorf("%.100s: %s %q, want %s %q", tc.body, p.Reason, p.Detail, tc.reason, tc.detail)
		}
	}
	// No scan running: status null, abort false, by action and by route.
	for _, tc := range []struct{ method, target, body, want string }{
		{"POST", "/v1/scan", `{"action":"status"}`, "null\n"},
		{"POST", "/v1/scan", `{"action":"abort"}`, "false\n"},
		{"GET", "/v1/scan/status", "", "null\n"},
		{"DELETE", "/v1/scan", "", "false\n"},
	} {
		rec := do(t, r.srv, tc.method, tc.target, []byte(tc.body), "Content-Type", "application/json")
		if rec.Code != 200 || rec.Body.String() != tc.want {
			t.Errorf("%s %s %s: %d %q", tc.method, tc.target, tc.body, rec.Code, rec.Body)
		}
	}
}

func mustChecksum(t *testing.T, d string) string {
	t.Helper()
	sum, ok := descriptor.Checksum(d)
	if !ok {
		t.Fatal("checksum")
	}
	return sum
}

// hash160 is RIPEMD-160(SHA-256(b)).
func hash160(b []byte) [20]byte {
	s := sha256.Sum256(b)
	r := ripemd160.New()
	r.Write(s[:])
	return [20]byte(r.Sum(nil))
}

// gatedCoins pads the coin walk with dummy coins and stops after the first
// hundred until released, so a scan can be watched and aborted.
type gatedCoins struct {
	r       *regtest
	started chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func (g *gatedCoins) ScanCoins(fn func(utxo.Entry) error) (utxo.Stats, error) {
	dummy := utxo.Entry{Coin: utxo.Coin{Script: []byte{0x51}, Value: 1}}
	return g.r.cs.ScanCoins(func(e utxo.Entry) error {
		for i := range 20_000 {
			if i == 100 {
				g.once.Do(func() { close(g.started) })
				<-g.gate
			}
			if err := fn(dummy); err != nil {
				return err
			}
		}
		return fn(e)
	})
}

func TestScanStatusAndAbort(t *testing.T) {
	g := &gatedCoins{started: make(chan struct{}), gate: make(chan struct{})}
	r, _ := scanChain(t, Config{Coins: g})
	g.r = r
	type result struct {
		code int
		out  scanOut
	}
	done := make(chan result)
	go func() {
		code, out, _ := r.scan("addr(mpQ8rokAhp1TAtJQR6F6TaUmjAWkAWYYBq)")
		done <- result{code, out}
	}()
	<-g.started
	for _, tc := range []struct{ method, target, body, want string }{
		{"GET", "/v1/scan/status", "", `{"progress":0}` + "\n"},
		{"POST", "/v1/scan", `{"action":"status"}`, `{"progress":0}` + "\n"},
	} {
		if rec := do(t, r.srv, tc.method, tc.target, []byte(tc.body)); rec.Code != 200 || rec.Body.String() != tc.want {
			t.Errorf("%s %s: %d %q", tc.method, tc.target, rec.Code, rec.Body)
		}
	}
	if code, _, body := r.scan("raw(00)"); code != http.StatusConflict || !strings.Contains(body.String(), "Scan already in progress") {
		t.Errorf("second scan: %d %s", code, body)
	}
	if rec := do(t, r.srv, "DELETE", "/v1/scan", nil); rec.Body.String() != "true\n" {
		t.Errorf("abort: %q", rec.Body)
	}
	close(g.gate)
	res := <-done
	if res.code != 200 || res.out.Success || res.out.TxOuts == 0 || res.out.TxOuts >= 20_000 {
		t.Errorf("aborted scan: %d success=%v txouts=%d", res.code, res.out.Success, res.out.TxOuts)
	}
	// Released: the next scan runs to the end.
	g2 := &gatedCoins{r: r, started: make(chan struct{}), gate: make(chan struct{})}
	close(g2.gate)
	r.srv.addr.coins = g2
	code, out, _ := r.scan("addr(mpQ8rokAhp1TAtJQR6F6TaUmjAWkAWYYBq)")
	if code != 200 || !out.Success || len(out.Unspents) != 1 {
		t.Errorf("after abort: %d %+v", code, out)
	}
}
