package api

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"
)

// TestMempoolJSClient points the published Esplora client
// @mempool/mempool.js 3.0.0 (npm) at a test server and checks what it
// returns (its getBlock and getBlocks ask mempool.space's own /v1 routes,
// which utxod does not serve; the other block calls are Esplora's). It needs node and the package: set UTXOD_MEMPOOLJS to the
// directory scripts/mempooljs.sh installs it into (make test-esplora-client
// does both); otherwise it is skipped.
func TestMempoolJSClient(t *testing.T) {
	dir := os.Getenv("UTXOD_MEMPOOLJS")
	if dir == "" {
		t.Skip("UTXOD_MEMPOOLJS unset (make test-esplora-client runs this test)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	r, want := addrChain(t, Config{})
	limited, err := New(Config{Chain: r.cs, Params: r.p, Token: testToken, UTXOLimit: 5})
	if err != nil {
		t.Fatal(err)
	}
	ts, tsLimited := httptest.NewServer(r.srv), httptest.NewServer(limited)
	defer ts.Close()
	defer tsLimited.Close()
	block1 := mustAt(t, r.cs, 1).Hash.String()
	cmd := exec.Command(node, "testdata/mempooljs_client.js", strings.TrimPrefix(ts.URL, "http://"),
		strings.TrimPrefix(tsLimited.URL, "http://"), r.addr(pkhScript), block1)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	raw, err := cmd.Output()
	if err != nil {
		var stderr []byte
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("node: %v %s", err, stderr)
	}
	var got struct {
		TipHeight int                `json:"tipHeight"`
		TipHash   string             `json:"tipHash"`
		Height1   string             `json:"height1"`
		Status    EsploraBlockStatus `json:"status"`
		Txids     []string           `json:"txids"`
		Txid0     string             `json:"txid0"`
		Header    string             `json:"header"`
		RawLength int                `json:"rawLength"`
		UTXOs     []EsploraUTXO      `json:"utxos"`
		Limited   struct {
			Status  int  `json:"status"`
			TooMany bool `json:"tooMany"`
		} `json:"limited"`
		Foreign struct {
			Status int    `json:"status"`
			Data   string `json:"data"`
		} `json:"foreign"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	tip := r.cs.Tip()
	if got.TipHeight != int(tip.Height) || got.TipHash != tip.Hash.String() || got.Height1 != block1 {
		t.Errorf("tip %d %s, height 1 %s", got.TipHeight, got.TipHash, got.Height1)
	}
	if !got.Status.InBestChain || got.Status.Height == nil || *got.Status.Height != 1 || got.Status.NextBest == nil ||
		*got.Status.NextBest != mustAt(t, r.cs, 2).Hash.String() {
		t.Errorf("status %+v", got.Status)
	}
	b1 := mustAt(t, r.cs, 1)
	blockRaw, err := r.cs.BlockData(b1.Hash)
	if err != nil {
		t.Fatal(err)
	}
	var mb btcwire.MsgBlock
	if err := mb.Deserialize(bytes.NewReader(blockRaw)); err != nil {
		t.Fatal(err)
	}
	coinbase := mb.Transactions[0].TxHash().String()
	if len(got.Txids) != len(mb.Transactions) || got.Txids[0] != coinbase || got.Txid0 != coinbase ||
		got.Header != hex.EncodeToString(b1.Header.AppendTo(nil)) || got.RawLength == 0 {
		t.Errorf("block routes: txids %v, txid/0 %s, header %s, raw %d bytes", got.Txids, got.Txid0, got.Header, got.RawLength)
	}
	if !sameSet(asSet(t, got.UTXOs), want) {
		t.Errorf("client saw %d utxos, want %d", len(got.UTXOs), len(want))
	}
	if got.Limited.Status != 400 || !got.Limited.TooMany {
		t.Errorf("over the limit: %+v", got.Limited)
	}
	if got.Foreign.Status != 400 || !strings.HasPrefix(got.Foreign.Data, "Address on invalid network") {
		t.Errorf("foreign address: %+v", got.Foreign)
	}
}
