package api

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestExplorerClient points the published Esplora client
// @bitcoinerlab/explorer 1.0.0 (npm; EsploraExplorer, whose
// fetchBlockStatus asks GET /block-height/:h and GET /block/:hash) at a
// test server. Opt-in like TestMempoolJSClient: UTXOD_MEMPOOLJS names the
// directory scripts/mempooljs.sh installs both clients into.
func TestExplorerClient(t *testing.T) {
	dir := os.Getenv("UTXOD_MEMPOOLJS")
	if dir == "" {
		t.Skip("UTXOD_MEMPOOLJS unset (make test-esplora-client runs this test)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	r := newRegtest(t, Config{})
	r.mineN(6)
	ts := httptest.NewServer(r.srv)
	defer ts.Close()
	cmd := exec.Command(node, "testdata/explorer_client.js", ts.URL+"/api", "2")
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
	type status struct {
		BlockHeight  int    `json:"blockHeight"`
		BlockHash    string `json:"blockHash"`
		BlockTime    uint32 `json:"blockTime"`
		Irreversible bool   `json:"irreversible"`
	}
	var got struct {
		Connected bool   `json:"connected"`
		TipHeight int    `json:"tipHeight"`
		Status    status `json:"status"`
		TipStatus status `json:"tipStatus"`
		Beyond    bool   `json:"beyond"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	tip, b2 := r.cs.Tip(), mustAt(t, r.cs, 2)
	if !got.Connected || got.TipHeight != int(tip.Height) || !got.Beyond {
		t.Errorf("connected %v, tip %d, beyond the tip %v", got.Connected, got.TipHeight, got.Beyond)
	}
	if want := (status{2, b2.Hash.String(), b2.Header.Time, true}); got.Status != want {
		t.Errorf("block 2: %+v, want %+v", got.Status, want)
	}
	if want := (status{int(tip.Height), tip.Hash.String(), tip.Header.Time, false}); got.TipStatus != want {
		t.Errorf("tip: %+v, want %+v", got.TipStatus, want)
	}
}
