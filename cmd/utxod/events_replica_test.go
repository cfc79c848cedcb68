package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/address"
	"utxod/params"
	"utxod/scripthash"
	"utxod/testkit/blockgen"
)

// sseEvent is one event of a stream as a client sees it.
type sseEvent struct {
	Kind, ID, Data string
}

// sseClient reads a GET /v1/events stream on a goroutine.
type sseClient struct {
	t    *testing.T
	resp *http.Response
	ch   chan sseEvent
}

func dialSSE(t *testing.T, target, lastID string) *sseClient {
	t.Helper()
	req, _ := http.NewRequest("GET", target, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s (Last-Event-ID %q): %d %s", target, lastID, resp.StatusCode, b)
	}
	c := &sseClient{t: t, resp: resp, ch: make(chan sseEvent, 10000)}
	t.Cleanup(c.close)
	go func() {
		defer close(c.ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Kind != "" {
					c.ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.Kind = line[7:]
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "data: "):
				ev.Data = line[6:]
			}
		}
	}()
	return c
}

func (c *sseClient) close() { c.resp.Body.Close() }

func (c *sseClient) next() sseEvent {
	c.t.Helper()
	select {
	case ev, ok := <-c.ch:
		if !ok {
			c.t.Fatal("stream ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		c.t.Fatal("no event within 20 s")
	}
	return sseEvent{}
}

// until reads events up to and including the block_connected of id.
func (c *sseClient) until(id string) []sseEvent {
	c.t.Helper()
	var got []sseEvent
	for {
		ev := c.next()
		got = append(got, ev)
		if ev.Kind == "block_connected" && ev.ID == id {
			return got
		}
	}
}

// quiet checks that nothing more arrives for d.
func (c *sseClient) quiet(d time.Duration) {
	c.t.Helper()
	select {
	case ev, ok := <-c.ch:
		if ok {
			c.t.Errorf("unexpected event %+v", ev)
		}
	case <-time.After(d):
	}
}

// tipHash is a node's /v1/tip hash ("" if it does not answer).
func tipHash(base string) string {
	resp, err := http.Get(base + "/v1/tip")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var tip struct {
		Hash string `json:"hash"`
	}
	json.NewDecoder(resp.Body).Decode(&tip)
	return tip.Hash
}

func waitTip(t *testing.T, p *proc, n *blockgen.Node) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for tipHash(p.base) != n.Hash.String() {
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached %d %s (at %q)\n%s", p.name, n.Height, n.Hash, tipHash(p.base), p.logs())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sseCursor(n *blockgen.Node) string { return fmt.Sprintf("%d:%s", n.Height, n.Hash) }

// TestEventsResumeOnReplica: a client reads a primary's event stream, goes
// away, and while it is away the primary connects more blocks and
// reorganises two blocks deep (the client's last block among those it
// leaves); the client comes back on a replica that follows the primary,
// with its Last-Event-ID, and receives exactly what an uninterrupted stream
// on the primary received after that block, in the same order: the
// reversals of the stale branch first (newest block first), then the new
// branch. A second client cut off inside a block resumes on the replica
// with the block's whole events. Separate utxod serve processes.
func TestEventsResumeOnReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs utxod processes")
	}
	bin := utxodBinary(t)
	dir := t.TempDir()
	reg := []string{"--network", "regtest"}
	primary := startProc(t, bin, "primary", "127.0.0.1:0", filepath.Join(dir, "p"), reg...)
	replica := startProc(t, bin, "replica", "127.0.0.1:0", filepath.Join(dir, "r"),
		append(reg, "--follow", primary.base, "--follow-poll", "20ms")...)
	tok, err := os.ReadFile(filepath.Join(dir, "p", ".cookie"))
	if err != nil {
		t.Fatal(err)
	}
	post := func(ns ...*blockgen.Node) {
		t.Helper()
		for _, n := range ns {
			req, _ := http.NewRequest("POST", primary.base+"/v1/blocks", bytes.NewReader(n.Raw))
			req.Header.Set("Authorization", "Bearer "+string(tok))
			req.Header.Set("Content-Type", "application/octet-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("POST block %d: %d %s", n.Height, resp.StatusCode, b)
			}
		}
	}

	g, err := blockgen.NewChain(params.RegTest())
	if err != nil {
		t.Fatal(err)
	}
	// watched is P2WSH(OP_TRUE): anyone spends it with the witness [OP_TRUE].
	wh := sha256.Sum256([]byte{0x51})
	watched := address.WitnessScript(0, wh[:])
	other := address.WitnessScript(0, make([]byte, 32))
	nonce := 0
	mine := func(parent *blockgen.Node, outs map[int64][]byte, txs ...*btcwire.MsgTx) *blockgen.Node {
		tpl := g.Template(parent, nil)
		cb := tpl.Coinbase()
		if len(outs) > 0 {
			cb.TxOut = nil
			for _, v := range []int64{20e8, 10e8, 7e8, 3e8} { // a fixed order
				if s, ok := outs[v]; ok {
					cb.AddTxOut(&btcwire.TxOut{Value: v, PkScript: s})
				}
			}
		}
		nonce++
		cb.TxIn[0].SignatureScript = blockgen.CoinbaseScript(tpl.Height, []byte{byte(nonce), byte(nonce >> 8)})
		return tpl.AddTx(txs...).Finish()
	}
	spend := func(prev []btcwire.OutPoint, value int64, to []byte) *btcwire.MsgTx {
		tx := btcwire.NewMsgTx(2)
		for _, op := range prev {
			tx.AddTxIn(&btcwire.TxIn{PreviousOutPoint: op, Sequence: 0xffffffff, Witness: btcwire.TxWitness{{0x51}}})
		}
		tx.AddTxOut(&btcwire.TxOut{Value: value, PkScript: to})
		return tx
	}

	// Block 1 pays the watched script twice; 100 blocks mature it.
	b1 := mine(nil, map[int64][]byte{20e8: watched, 10e8: watched})
	cb1 := b1.Block.Transactions[0].TxHash()
	chain := []*blockgen.Node{b1}
	for range 100 {
		chain = append(chain, mine(chain[len(chain)-1], nil))
	}
	post(chain...)
	waitTip(t, replica, chain[100])

	q := url.Values{"scripthash": {scripthash.Of(watched).String()}, "outpoint": {fmt.Sprintf("%s:1", cb1)}, "blocks": {"true"}}
	path := "/v1/events?" + q.Encode()
	ref := dialSSE(t, primary.base+path, "")    // uninterrupted
	client := dialSSE(t, primary.base+path, "") // goes away
	cutter := dialSSE(t, primary.base+path, "") // goes away inside a block

	// 102 pays the watched script; 103 (the fork) spends block 1's first
	// output to it; the stale branch: 104a spends the watched outpoint,
	// 105a pays the watched script.
	b102 := mine(chain[100], map[int64][]byte{7e8: watched})
	fork := mine(b102, nil, spend([]btcwire.OutPoint{{Hash: cb1, Index: 0}}, 19e8, watched))
	a1 := mine(fork, nil, spend([]btcwire.OutPoint{{Hash: cb1, Index: 1}}, 9e8, other))
	a2 := mine(a1, map[int64][]byte{3e8: watched})
	post(b102, fork, a1, a2)
	seen := client.until(sseCursor(a2))
	client.close()
	waitTip(t, replica, a2) // the replica has seen the stale branch

	// The new branch from the fork: 104b spends the watched outpoint to
	// the watched script, 105b ties, 106b reorganises (depth 2); then 107
	// pays the watched script and 108 is empty.
	n1 := mine(fork, nil, spend([]btcwire.OutPoint{{Hash: cb1, Index: 1}}, 9e8, watched))
	n2 := mine(n1, map[int64][]byte{20e8: other})
	n3 := mine(n2, nil)
	n4 := mine(n3, map[int64][]byte{7e8: watched, 3e8: watched})
	n5 := mine(n4, nil)
	post(n1, n2, n3)
	// The cutter reads into block 107: its first output_created only.
	cutter.until(sseCursor(n3))
	post(n4, n5)
	ev := cutter.next()
	if ev.Kind != "output_created" || ev.ID != sseCursor(n3) {
		t.Fatalf("the cutter's first event of 107: %+v", ev)
	}
	cutter.close()
	all := ref.until(sseCursor(n5))
	waitTip(t, replica, n5)

	// What the uninterrupted stream got after each cursor's block_connected.
	after := func(cursor string) []sseEvent {
		for i, e := range all {
			if e.Kind == "block_connected" && e.ID == cursor {
				return all[i+1:]
			}
		}
		t.Fatalf("the reference stream has no block_connected %s", cursor)
		return nil
	}
	wantKinds := []string{
		"output_removed", "block_disconnected", // 105a, newest first
		"output_restored", "unspent", "block_disconnected", // 104a
		"output_spent", "spent", "output_created", "block_connected", // 104b
		"block_connected", "block_connected", // 105b, 106b
		"output_created", "output_created", "block_connected", // 107
		"block_connected", // 108
	}
	if got := after(sseCursor(a2)); fmt.Sprint(kindList(got)) != fmt.Sprint(wantKinds) {
		t.Fatalf("the uninterrupted stream after 105a: %v, want %v", kindList(got), wantKinds)
	}

	for _, c := range []struct {
		name, cursor string
	}{
		{"stale cursor (reorganised two deep)", seen[len(seen)-1].ID},
		{"cut inside a block", ev.ID},
	} {
		want := after(c.cursor)
		r := dialSSE(t, replica.base+path, c.cursor)
		for i, w := range want {
			if got := r.next(); got != w {
				t.Fatalf("%s: event %d from the replica %+v, the primary's stream had %+v", c.name, i, got, w)
			}
		}
		r.quiet(300 * time.Millisecond)
		r.close()
		t.Logf("%s: %d events resumed on the replica from %s", c.name, len(want), c.cursor)
	}

	// Both stay live: a block after the resumes reaches a replica stream.
	r := dialSSE(t, replica.base+path, sseCursor(n5))
	n6 := mine(n5, map[int64][]byte{7e8: watched})
	post(n6)
	if got := r.until(sseCursor(n6)); fmt.Sprint(kindList(got)) != "[output_created block_connected]" {
		t.Errorf("live on the replica: %v", kindList(got))
	}
	replica.signal(t, syscall.SIGTERM)
	primary.signal(t, syscall.SIGTERM)
}

func kindList(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}
