package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"utxod/params"
	"utxod/wire"
)

// e2eServer is a running utxod serve process.
type e2eServer struct {
	cmd    *exec.Cmd
	base   string
	token  string
	stderr *bytes.Buffer
	exited chan error
}

// startServe starts bin serve on a free loopback port with datadir and
// waits until it listens.
func startServe(t *testing.T, bin, datadir string) *e2eServer {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--datadir", datadir, "--log-level", "warn")
	pr, pw := io.Pipe()
	s := &e2eServer{cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.WriteString(line + "\n")
			if _, rest, ok := strings.Cut(line, "listening on http://"); ok {
				a, _, _ := strings.Cut(rest, " ")
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		s.base = "http://" + a
	case err := <-s.exited:
		t.Fatalf("utxod serve exited: %v\n%s", err, s.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("utxod serve did not start\n%s", s.stderr)
	}
	tok, err := os.ReadFile(filepath.Join(datadir, ".cookie"))
	if err != nil {
		t.Fatal(err)
	}
	s.token = string(tok)
	return s
}

// stop sends SIGTERM and waits for a clean exit.
func (s *e2eServer) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, s.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit after SIGTERM\n%s", s.stderr)
	}
}

func (s *e2eServer) post(t *testing.T, client *http.Client, raw []byte) (status string, height int32) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.base+"/v1/blocks", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	var r struct {
		Status string `json:"status"`
		Height int32  `json:"height"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	return r.Status, r.Height
}

func (s *e2eServer) get(t *testing.T, client *http.Client, path string) map[string]any {
	t.Helper()
	resp, err := client.Get(s.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return m
}

// TestEndToEnd builds utxod, serves mainnet blocks 0-2016 over HTTP (a few
// out of order, coming back as orphans first), compares the chainstate with
// the reference digests at 2016, restarts the process on the same datadir
// and checks the answer again.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const top = 2016
	dir := t.TempDir()
	bin := filepath.Join(dir, "utxod")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var ref map[string]any
	refs, err := os.ReadFile("../../testdata/mainnet/reference-digests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(refs), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["height"] == float64(top) {
			ref = m
		}
	}
	if ref == nil {
		t.Fatalf("no reference at height %d", top)
	}
	f, err := os.Open("../../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := wire.NewBlockFileReader(f, params.MainNet().Magic)
	var blocks [][]byte
	for len(blocks) <= top {
		raw, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bytes.Clone(raw))
	}

	datadir := filepath.Join(dir, "data")
	srv := startServe(t, bin, datadir)
	client := &http.Client{Timeout: 30 * time.Second}
	// Submission order: heights in order except a few swapped pairs and a
	// run of three in reverse; the later block of each is an orphan.
	order := make([]int, 0, top+1)
	for h := 0; h <= top; h++ {
		order = append(order, h)
	}
	swaps := map[int]bool{10: true, 500: true, 1500: true}
	for h := range swaps {
		order[h], order[h+1] = order[h+1], order[h]
	}
	order[1000], order[1002] = order[1002], order[1000] // 1002, 1001, 1000
	orphans := 0
	for _, h := range order {
		status, height := srv.post(t, client, blocks[h])
		switch {
		case h == 0 && status == "duplicate":
		case status == "orphan":
			orphans++
		case status != "connected" || height != int32(h):
			t.Fatalf("block %d: %s at %d", h, status, height)
		}
	}
	if orphans != 5 {
		t.Fatalf("%d orphans, want 5", orphans)
	}
	check := func(stage string) {
		got := srv.get(t, client, "/v1/chainstate?hash_type=hash_serialized_3")
		for _, k := range []string{"height", "bestblock", "txouts", "bogosize", "transactions", "total_amount_sat", "muhash", "hash_serialized_3"} {
			if got[k] != ref[k] {
				t.Errorf("%s: %s = %v, want %v", stage, k, got[k], ref[k])
			}
		}
		if got["total_amount"].(float64) != 100800 {
			t.Errorf("%s: total_amount %v", stage, got["total_amount"])
		}
	}
	check("after POSTs")
	srv.stop(t)
	srv = startServe(t, bin, datadir)
	check("after restart")
	if tip := srv.get(t, client, "/v1/tip"); tip["height"] != float64(top) || tip["status"] != "valid" {
		t.Errorf("tip after restart %v", tip)
	}
	srv.stop(t)
}
