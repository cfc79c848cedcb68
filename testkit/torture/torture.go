// Package torture drives the real utxod binary through crash, full-disk,
// hostile-input and load scenarios (issue 8). The scenarios live in this
// package's tests; this file holds the reusable parts: a generated corpus
// with its clean in-memory replay (the expected gettxoutsetinfo at every tip
// the chain reaches), building the binary, and running "utxod serve" as a
// child process.
//
// Tests run in "make test" with a small corpus and at least 10 SIGKILLs per
// store; "make torture" sets UTXOD_TORTURE_KILLS (default 200 there) and a
// larger corpus. bench/results/reliability.md records the figures.
package torture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"utxod/chainstate"
	"utxod/params"
	"utxod/store"
	"utxod/testkit/btcdengine"
	"utxod/testkit/chaingen"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Corpus is a generated regtest chain (with reorg branches) and what an
// uninterrupted in-memory run makes of it.
type Corpus struct {
	File    string      // the block file (Core framing)
	Blocks  [][]byte    // raw blocks in file order
	Hashes  []wire.Hash // Hashes[i] is the hash of Blocks[i]
	Pos     map[wire.Hash]int
	Summary *chaingen.Summary
	// States maps every tip the clean run reached to the canonical JSON of
	// its gettxoutsetinfo (muhash); Final is the canonical JSON of the end
	// state with hash_serialized_3 and muhash.
	States   map[wire.Hash]string
	Final    string
	FinalTip wire.Hash
	Height   int32
	// Statuses are the clean run's ProcessBlock answers, in file order.
	Statuses []chainstate.Status

	mu sync.Mutex
}

// NewCorpus generates cfg's chain into dir/corpus.dat and replays it in
// memory.
func NewCorpus(cfg chaingen.Config, dir string) (*Corpus, error) {
	data, sum, err := chaingen.Generate(cfg)
	if err != nil {
		return nil, err
	}
	c := &Corpus{File: filepath.Join(dir, "corpus.dat"), Summary: sum, Pos: map[wire.Hash]int{}, States: map[wire.Hash]string{}}
	if err := os.WriteFile(c.File, data, 0o644); err != nil {
		return nil, err
	}
	r := wire.NewBlockFileReader(bytes.NewReader(data), params.RegTest().Magic)
	for {
		raw, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		raw = bytes.Clone(raw)
		h := wire.DoubleSHA256(raw[:wire.HeaderSize])
		c.Pos[h] = len(c.Blocks)
		c.Blocks = append(c.Blocks, raw)
		c.Hashes = append(c.Hashes, h)
	}
	cs, err := memChainstate()
	if err != nil {
		return nil, err
	}
	if err := c.record(cs); err != nil {
		return nil, err
	}
	for i, raw := range c.Blocks {
		res, err := cs.ProcessBlock(raw)
		if err != nil {
			return nil, fmt.Errorf("clean replay: block %d (%s): %w", i, c.Hashes[i], err)
		}
		c.Statuses = append(c.Statuses, res.Status)
		if err := c.record(cs); err != nil {
			return nil, err
		}
	}
	info, err := cs.Info(chainstate.HashTypeHashSerialized3)
	if err != nil {
		return nil, err
	}
	mu, err := cs.Info(chainstate.HashTypeMuHash)
	if err != nil {
		return nil, err
	}
	info.MuHash = mu.MuHash
	b, _ := json.Marshal(info)
	if c.Final, err = Canonical(b); err != nil {
		return nil, err
	}
	c.FinalTip, c.Height = cs.Tip().Hash, cs.Tip().Height
	if c.FinalTip != sum.Tip {
		return nil, fmt.Errorf("clean replay ends at %s, chaingen says %s", c.FinalTip, sum.Tip)
	}
	return c, nil
}

func memChainstate() (*chainstate.Chainstate, error) {
	p := params.RegTest()
	v := validate.New(p, btcdengine.New(), nil)
	return chainstate.New(chainstate.Config{Params: p, Validator: v, Store: store.NewMem()})
}

func (c *Corpus) record(cs *chainstate.Chainstate) error {
	info, err := cs.Info(chainstate.HashTypeMuHash)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(info)
	s, err := Canonical(b)
	if err != nil {
		return err
	}
	c.States[info.BestBlock] = s
	return nil
}

// Expect returns the canonical gettxoutsetinfo (muhash) of the chain ending
// at tip: from the clean run, or, for a tip it never reached (possible after
// a restart picks a stored branch), from a fresh replay of tip's ancestors.
func (c *Corpus) Expect(tip wire.Hash) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.States[tip]; ok {
		return s, nil
	}
	i, ok := c.Pos[tip]
	if !ok {
		return "", fmt.Errorf("tip %s is not in the corpus", tip)
	}
	var chain []int
	for {
		chain = append(chain, i)
		h, _ := wire.ParseHeader(c.Blocks[i])
		j, ok := c.Pos[h.PrevBlock]
		if !ok {
			break
		}
		i = j
	}
	cs, err := memChainstate()
	if err != nil {
		return "", err
	}
	for k := len(chain) - 1; k >= 0; k-- {
		if _, err := cs.ProcessBlock(c.Blocks[chain[k]]); err != nil {
			return "", err
		}
	}
	if cs.Tip().Hash != tip {
		return "", fmt.Errorf("replaying the ancestors of %s ends at %s", tip, cs.Tip().Hash)
	}
	info, _ := cs.Info(chainstate.HashTypeMuHash)
	b, _ := json.Marshal(info)
	s, err := Canonical(b)
	if err == nil {
		c.States[tip] = s
	}
	return s, err
}

// Ancestors returns the file positions of the chain ending at tip,
// genesis's child first.
func (c *Corpus) Ancestors(tip wire.Hash) []int {
	var out []int
	for i, ok := c.Pos[tip]; ok; {
		out = append(out, i)
		h, _ := wire.ParseHeader(c.Blocks[i])
		i, ok = c.Pos[h.PrevBlock]
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}

// Canonical re-encodes a JSON object with sorted keys and numbers kept as
// written, so answers compare as strings.
func Canonical(b []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return "", fmt.Errorf("%w: %q", err, b)
	}
	out, err := json.Marshal(m)
	return string(out), err
}

// CanonicalWithout is Canonical with the given keys removed.
func CanonicalWithout(b []byte, keys ...string) (string, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return "", fmt.Errorf("%w: %q", err, b)
	}
	for _, k := range keys {
		delete(m, k)
	}
	out, err := json.Marshal(m)
	return string(out), err
}

// ModuleRoot is the directory holding go.mod.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the utxod module")
	}
	return filepath.Dir(mod), nil
}

// Build compiles cmd/utxod into dir, with -tags rocksdb when that builds
// (librocksdb-dev present); rocksdb reports whether it did.
func Build(dir string) (bin string, rocksdb bool, err error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", false, err
	}
	bin = filepath.Join(dir, "utxod")
	cmd := exec.Command("go", "build", "-tags", "rocksdb", "-o", bin, "./cmd/utxod")
	cmd.Dir = root
	if err := cmd.Run(); err == nil {
		return bin, true, nil
	}
	cmd = exec.Command("go", "build", "-o", bin, "./cmd/utxod")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", false, fmt.Errorf("go build ./cmd/utxod: %v\n%s", err, out)
	}
	return bin, false, nil
}

// SyncBuffer is a goroutine-safe bytes.Buffer.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Server is a running "utxod serve" child process.
type Server struct {
	Cmd     *exec.Cmd
	Base    string // http://127.0.0.1:port
	Token   string
	Datadir string
	Stderr  *SyncBuffer
	done    chan struct{}
	waitErr error
}

// StartServer runs bin serve with args (which must include --listen with
// port 0 or a free port, and --datadir) and waits until it listens.
func StartServer(bin, datadir string, args ...string) (*Server, error) {
	return StartServerEnv(bin, datadir, nil, args...)
}

// StartServerEnv is StartServer with extra environment variables
// ("NAME=value") added to this process's environment.
func StartServerEnv(bin, datadir string, env []string, args ...string) (*Server, error) {
	all := append([]string{"serve", "--datadir", datadir}, args...)
	cmd := exec.Command(bin, all...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	s := &Server{Cmd: cmd, Datadir: datadir, Stderr: &SyncBuffer{}, done: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	cmd.Stdout = s.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.waitErr = cmd.Wait()
		pw.Close()
		close(s.done)
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.Stderr.Write([]byte(line + "\n"))
			if _, rest, ok := strings.Cut(line, "listening on http://"); ok {
				a, _, _ := strings.Cut(rest, " ")
				select {
				case addr <- a:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case a := <-addr:
		s.Base = "http://" + a
	case <-s.done:
		return nil, fmt.Errorf("utxod serve exited: %v\n%s", s.waitErr, s.Stderr)
	case <-time.After(60 * time.Second):
		s.Kill()
		return nil, fmt.Errorf("utxod serve did not start\n%s", s.Stderr)
	}
	tok, err := os.ReadFile(filepath.Join(datadir, ".cookie"))
	if err != nil {
		s.Kill()
		return nil, err
	}
	s.Token = strings.TrimSpace(string(tok))
	return s, nil
}

// Kill sends SIGKILL and waits for the process to be gone.
func (s *Server) Kill() {
	_ = s.Cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// Stop sends SIGTERM and waits up to timeout for a clean exit.
func (s *Server) Stop(timeout time.Duration) error {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.waitErr
	case <-time.After(timeout):
		s.Kill()
		return fmt.Errorf("no exit %v after SIGTERM", timeout)
	}
}

// Done is closed when the process has ended; Err is then its wait error.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is the process's wait error (nil for exit status 0); valid after
// Done is closed.
func (s *Server) Err() error { return s.waitErr }

// Exited reports whether the process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Response is a completed HTTP exchange.
type Response struct {
	Status int
	Body   []byte
	Header http.Header
}

// Do sends one request; token "" sends no Authorization header.
func (s *Server) Do(ctx context.Context, c *http.Client, method, path string, body []byte, contentType, token string) (Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.Base+path, rd)
	if err != nil {
		return Response{}, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, err
	}
	return Response{Status: resp.StatusCode, Body: b, Header: resp.Header}, nil
}

// Post submits a raw block with the server's token.
func (s *Server) Post(ctx context.Context, c *http.Client, raw []byte) (Response, error) {
	return s.Do(ctx, c, http.MethodPost, "/v1/blocks", raw, "application/octet-stream", s.Token)
}

// Get fetches path.
func (s *Server) Get(ctx context.Context, c *http.Client, path string) (Response, error) {
	return s.Do(ctx, c, http.MethodGet, path, nil, "", "")
}

// BlockAnswer is the JSON of a POST /v1/blocks success.
type BlockAnswer struct {
	Hash          string `json:"hash"`
	Height        int32  `json:"height"`
	Status        string `json:"status"`
	FlushedHeight int32  `json:"flushed_height"`
	FlushedHash   string `json:"flushed_hash"`
	Durable       bool   `json:"durable"`
}

// StableOutpoints returns up to max outpoints created by the blocks at file
// positions below upto that stay unspent on the active chain after every
// later block of the clean run: a server holding those blocks answers 200
// for them whatever it receives later, at every moment.
func (c *Corpus) StableOutpoints(upto, max int) ([]string, error) {
	cs, err := memChainstate()
	if err != nil {
		return nil, err
	}
	for _, raw := range c.Blocks[:upto] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			return nil, err
		}
	}
	// Candidates: the unspent outputs of the active chain's blocks so far.
	var cands []utxo.Outpoint
	for _, raw := range c.Blocks[:upto] {
		b, err := wire.ParseBlock(bytes.Clone(raw))
		if err != nil {
			return nil, err
		}
		if n, ok := cs.Lookup(b.Hash); !ok || !n.InActiveChain {
			continue
		}
		for _, tx := range b.Txs {
			for i := range tx.Outputs {
				op := utxo.Outpoint{Hash: tx.TxID, Index: uint32(i)}
				if _, ok, err := cs.Coin(op); err == nil && ok {
					cands = append(cands, op)
				}
			}
		}
	}
	// Kept: those unspent after every later block, in the order they are
	// submitted. A reorg among the later blocks can disconnect a candidate's
	// block or spend it on a branch for a while, and a coin unspent at the
	// end only is then missing in between.
	for _, raw := range c.Blocks[upto:] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			return nil, err
		}
		kept := cands[:0]
		for _, op := range cands {
			if _, ok, err := cs.Coin(op); err == nil && ok {
				kept = append(kept, op)
			}
		}
		cands = kept
	}
	var out []string
	for _, op := range cands[:min(len(cands), max)] {
		out = append(out, fmt.Sprintf("%s/%d", op.Hash, op.Index))
	}
	return out, nil
}
