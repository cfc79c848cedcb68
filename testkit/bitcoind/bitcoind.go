// Package bitcoind starts a real regtest Bitcoin Core node (a bitcoind built
// from source: bench/scripts/build-core.sh) and talks to it over JSON-RPC.
// Only opt-in benchmarks and tests use it (valbench's core arm,
// bench/cmd/corebench, testkit/coreinterop); nothing in `make test` needs
// a bitcoind.
package bitcoind

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// BaseArgs are the flags every node started here gets besides -datadir:
// regtest, no network, and regtest's costly consistency checks off
// (../shared/README.md: -loadblock into a fresh datadir aborts with them).
var BaseArgs = []string{"-regtest", "-listen=0", "-connect=0", "-dnsseed=0", "-fixedseeds=0", "-discover=0",
	"-checkblockindex=0", "-checkmempool=0", "-printtoconsole=0", "-natpmp=0"}

// Node is a running bitcoind.
type Node struct {
	Bin, Datadir string
	RPCPort      int
	cmd          *exec.Cmd
	done         chan struct{}
	waitErr      error
	client       http.Client
	auth         string
}

// FreePort returns a TCP port that was free a moment ago on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start runs bin on datadir (created if missing) with BaseArgs, -server,
// -rest and a free RPC port, plus extra, and waits until RPC answers.
func Start(ctx context.Context, bin, datadir string, extra ...string) (*Node, error) {
	if err := os.MkdirAll(datadir, 0o755); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"-datadir=" + datadir, "-server=1", "-rest=1", "-rpcbind=127.0.0.1",
		"-rpcallowip=127.0.0.1", "-rpcport=" + strconv.Itoa(port), "-rpcthreads=8", "-rpcworkqueue=256"}, BaseArgs...)
	args = append(args, extra...)
	n := &Node{Bin: bin, Datadir: datadir, RPCPort: port, done: make(chan struct{}),
		client: http.Client{Timeout: 30 * time.Minute}}
	n.cmd = exec.Command(bin, args...)
	n.cmd.Stdout, n.cmd.Stderr = io.Discard, io.Discard
	if err := n.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { n.waitErr = n.cmd.Wait(); close(n.done) }()
	if err := n.waitReady(ctx); err != nil {
		n.Kill()
		return nil, err
	}
	return n, nil
}

// URL is the node's RPC and REST base URL.
func (n *Node) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", n.RPCPort) }

// Pid is the process id.
func (n *Node) Pid() int { return n.cmd.Process.Pid }

// Done is closed when the process has exited.
func (n *Node) Done() <-chan struct{} { return n.done }

func (n *Node) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	cookie := filepath.Join(n.Datadir, "regtest", ".cookie")
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-n.done:
			return fmt.Errorf("bitcoind exited before RPC was ready: %v (see %s)", n.waitErr, filepath.Join(n.Datadir, "regtest", "debug.log"))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if n.auth == "" {
			b, err := os.ReadFile(cookie)
			if err != nil {
				last = err
				continue
			}
			n.auth = strings.TrimSpace(string(b))
		}
		if _, last = n.Call(ctx, "getblockcount"); last == nil {
			return nil
		}
		var re *RPCError
		if errors.As(last, &re) && re.Code == -28 { // warming up
			continue
		}
		if errors.Is(last, syscall.ECONNREFUSED) || strings.Contains(last.Error(), "connection refused") {
			continue
		}
		if strings.Contains(last.Error(), "401") { // stale cookie of a previous run
			n.auth = ""
			continue
		}
	}
	return fmt.Errorf("bitcoind RPC not ready: %v", last)
}

// RPCError is an error a JSON-RPC call answered.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("RPC error %d: %s", e.Code, e.Message) }

// Call runs method with params and returns its result.
func (n *Node) Call(ctx context.Context, method string, params ...any) (json.RawMessage, error) {
	if params == nil {
		params = []any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, "POST", n.URL()+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	user, pass, _ := strings.Cut(n.auth, ":")
	req.SetBasicAuth(user, pass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d: %.200s", method, resp.StatusCode, b)
	}
	if out.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, out.Error)
	}
	return out.Result, nil
}

// CallInto runs method and decodes its result into out.
func (n *Node) CallInto(ctx context.Context, out any, method string, params ...any) error {
	r, err := n.Call(ctx, method, params...)
	if err != nil {
		return err
	}
	return json.Unmarshal(r, out)
}

// Stop asks the node to stop over RPC and waits for it to exit (killing it
// after a minute).
func (n *Node) Stop(ctx context.Context) error {
	select {
	case <-n.done:
		return nil
	default:
	}
	_, _ = n.Call(ctx, "stop")
	select {
	case <-n.done:
		return nil
	case <-time.After(time.Minute):
		n.Kill()
		return errors.New("bitcoind did not stop within a minute; killed")
	}
}

// Kill ends the process at once and waits for it.
func (n *Node) Kill() {
	_ = n.cmd.Process.Kill()
	<-n.done
}

// ProcCPU is the process's user+system CPU time so far, in seconds, from
// /proc (0 where unavailable).
func (n *Node) ProcCPU() float64 { return ProcCPU(n.Pid()) }

// ProcCPU reads pid's utime+stime from /proc/PID/stat (clock ticks of 1/100 s).
func ProcCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// TxOutSetInfo is gettxoutsetinfo's answer, with the field names utxod's
// --json output shares (bench.Digests).
type TxOutSetInfo struct {
	Height          int     `json:"height"`
	BestBlock       string  `json:"bestblock"`
	TxOuts          uint64  `json:"txouts"`
	Transactions    uint64  `json:"transactions"`
	BogoSize        uint64  `json:"bogosize"`
	TotalAmount     float64 `json:"total_amount"`
	MuHash          string  `json:"muhash,omitempty"`
	HashSerialized3 string  `json:"hash_serialized_3,omitempty"`
}

// TxOutSetInfo runs gettxoutsetinfo with hashType (muhash or
// hash_serialized_3).
func (n *Node) TxOutSetInfo(ctx context.Context, hashType string) (*TxOutSetInfo, error) {
	var t TxOutSetInfo
	if err := n.CallInto(ctx, &t, "gettxoutsetinfo", hashType); err != nil {
		return nil, err
	}
	return &t, nil
}

// WaitHeight polls getblockcount until it reaches height (or the process
// exits, or timeout passes).
func (n *Node) WaitHeight(ctx context.Context, height int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var h int
		err := n.CallInto(ctx, &h, "getblockcount")
		if err == nil && h >= height {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bitcoind at height %d after %v, want %d (last error %v)", h, timeout, height, err)
		}
		select {
		case <-n.done:
			return fmt.Errorf("bitcoind exited at height %d, want %d", h, height)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
