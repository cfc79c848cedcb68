package api

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"utxod/events"
)

// TestEventsStreamEnds: the ends of a stream on its taken connection. A
// WebSocket client's ping gets its pong; the Hub's end (shutdown, or a
// cut-off) ends the SSE body cleanly (its last chunk: io.EOF, not an
// unexpected EOF) and closes the WebSocket with 1013; a client that leaves
// (or closes its WebSocket, which gets its answer) frees its stream.
func TestEventsStreamEnds(t *testing.T) {
	n := newEventsNet(t, 0, events.Config{})
	n.waitHub()
	q := url.Values{"address": {n.addr(watchedScript)}, "blocks": {"true"}}
	target := n.ts.URL + "/v1/events?" + q.Encode()

	resp, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("SSE answer %d, transfer encoding %v", resp.StatusCode, resp.TransferEncoding)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wc, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(target, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.CloseNow()
	leaving := openSSE(t, target, nil)
	closing, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(target, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	waitStreams(t, n, 4)
	if err := closing.Close(websocket.StatusNormalClosure, ""); err != nil { // the server answers the close
		t.Errorf("ws close: %v", err)
	}
	waitStreams(t, n, 3)

	b := n.mine(payout{watchedScript, 1e6})
	msgs := make(chan string, 10)
	readErr := make(chan error, 1)
	go func() {
		for {
			_, m, err := wc.Read(ctx)
			if err != nil {
				readErr <- err
				return
			}
			msgs <- string(m)
		}
	}()
	for range 2 { // output_created, block_connected
		select {
		case m := <-msgs:
			if !strings.Contains(m, `"id":"`) {
				t.Errorf("ws message %s", m)
			}
		case err := <-readErr:
			t.Fatal(err)
		}
	}
	if err := wc.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	br := bufio.NewReader(resp.Body)
	want := "id: " + cursorOf(b) + "\n"
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("SSE before %q: %v", want, err)
		}
		if line == want {
			break
		}
	}

	leaving.close()
	waitStreams(t, n, 2)

	n.hub.Close()
	if rest, err := io.ReadAll(br); err != nil { // the rest of the block's event, then the last chunk
		t.Errorf("SSE end: %q, %v; want a clean end", rest, err)
	}
	select {
	case err := <-readErr:
		if got := websocket.CloseStatus(err); got != websocket.StatusTryAgainLater {
			t.Errorf("ws end: %v, want close status 1013", err)
		}
	case <-ctx.Done():
		t.Fatal("the WebSocket did not end")
	}
}

func waitStreams(t *testing.T, n *eventsNet, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, streams := n.hub.Watched(); streams == want {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%d streams open, want %d", streams, want)
		}
	}
}

// TestEventPoolKeepalive: a pass with the keepalive flag writes a comment
// to a stream idle for half the keepalive period, and nothing to one
// written since. The connection is a pipe (no socket to write without
// waiting), so the write goes the slow way.
func TestEventPoolKeepalive(t *testing.T) {
	n := newEventsNet(t, 0, events.Config{})
	f, err := events.Compile(context.Background(), events.Spec{Blocks: true}, n.p, events.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := n.hub.Subscribe(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := n.srv.events
	server, client := net.Pipe()
	defer client.Close()
	c := newEventConn(st, server, sseChunked) // not attached: the test makes the passes

	e.pool.pass([]*eventConn{c}, true) // written at its creation: no keepalive
	c.last = time.Now().Add(-eventKeepalive / 2)
	e.pool.pass([]*eventConn{c}, true)
	want := "d\r\n: keepalive\n\n\r\n"
	got := make([]byte, len(want))
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != want {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}
	client.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	e.pool.pass([]*eventConn{c}, true) // just written
	client.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if k, err := client.Read(got); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a second keepalive: %q, %v", got[:k], err)
	}
}
