package snapshot

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"utxod/backends"
	"utxod/params"
	"utxod/store/kvstore/shindex"
	"utxod/testkit/mainnetgen"
	"utxod/wire"
)

// genSet writes a small mainnet-shaped regtest set with its headers.
func genSet(t testing.TB, coins uint64, height int32) (dir string, exp *mainnetgen.Expect, hash wire.Hash) {
	t.Helper()
	dir = t.TempDir()
	exp, err := mainnetgen.Generate(mainnetgen.Config{Coins: coins, Seed: 7, Network: "regtest", Height: height}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if hash, err = wire.ParseHash(exp.HashSerialized3); err != nil {
		t.Fatal(err)
	}
	return dir, exp, hash
}

func readHeaders(t testing.TB, p *params.Params, name string) *HeaderSet {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hs := NewHeaderSet(p)
	if err := hs.Read(f); err != nil {
		t.Fatal(err)
	}
	return hs
}

// TestLoadWithIndex: a load with Index builds the scripthash index in the
// same pass (in many sorted runs here), complete at the base and exactly
// what shindex.Verify asks for, on every store; a load that fails, before
// or after the rows were written, leaves neither the datadir, the staging
// directory nor a run file.
func TestLoadWithIndex(t *testing.T) {
	src, exp, h := genSet(t, 30000, 2500)
	p := params.RegTest()
	file, err := os.ReadFile(filepath.Join(src, "utxo.dat"))
	if err != nil {
		t.Fatal(err)
	}
	hs := readHeaders(t, p, filepath.Join(src, "headers.dat"))
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "loaded")
			sum, err := loadFile(t, file, LoadConfig{Network: p, Backend: name, Datadir: dir, ExpectHash: &h, Headers: hs,
				Index: true, IndexMemory: 1})
			if errors.Is(err, backends.ErrUnavailable) || errors.Is(err, backends.ErrUnknownBackend) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum.Stats.TxOuts != exp.Coins {
				t.Fatalf("%d coins, want %d", sum.Stats.TxOuts, exp.Coins)
			}
			kv := openKV(t, name, dir)
			m, err := shindex.Verify(context.Background(), kv, nil)
			if err != nil {
				t.Fatal(err)
			}
			if m.State != shindex.Complete || m.Tip.Height != 2500 || m.Tip.TxOuts != exp.Coins || m.Tip.Hash.String() != exp.BaseHash {
				t.Fatalf("index meta %+v", m)
			}
			if ix, err := shindex.Open(kv); err != nil || ix == nil {
				t.Fatalf("open the loaded index: %v", err)
			}
			kv.Close()
			assertOnly(t, root, "loaded")
			assertNoSortDirs(t, dir)

			// Failures leave nothing: a bad content hash (found after
			// every coin was sorted), a load cancelled while the rows are
			// written, and one cancelled while the coins stream in.
			bad := h
			bad[0] ^= 1
			for _, c := range []struct {
				what string
				cfg  func(*LoadConfig, context.CancelFunc)
			}{
				{"bad hash", func(c *LoadConfig, _ context.CancelFunc) { c.ExpectHash = &bad }},
				{"cancelled before the rows", func(c *LoadConfig, cancel context.CancelFunc) {
					c.Log = slog.New(cancelOn{msg: "snapshot coins verified", cancel: cancel})
				}},
				{"cancelled in the coins", func(c *LoadConfig, cancel context.CancelFunc) {
					c.Progress = func(done, _ uint64) { cancel() }
				}},
			} {
				root := t.TempDir()
				ctx, cancel := context.WithCancel(context.Background())
				cfg := LoadConfig{Network: p, Backend: name, Datadir: filepath.Join(root, "d"), ExpectHash: &h, Headers: hs,
					Index: true, IndexMemory: 1, Now: func() time.Time { return time.Unix(1<<31, 0) }}
				c.cfg(&cfg, cancel)
				if _, err := Load(ctx, bytes.NewReader(file), cfg); err == nil {
					t.Fatalf("%s: loaded", c.what)
				}
				cancel()
				assertOnly(t, root)
			}
		})
	}
}

// cancelOn is a log handler that cancels when a message is logged.
type cancelOn struct {
	msg    string
	cancel context.CancelFunc
}

func (c cancelOn) Enabled(context.Context, slog.Level) bool { return true }
func (c cancelOn) Handle(_ context.Context, r slog.Record) error {
	if r.Message == c.msg {
		c.cancel()
	}
	return nil
}
func (c cancelOn) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c cancelOn) WithGroup(string) slog.Handler      { return c }

// assertOnly checks that dir holds exactly the entries names.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("%s holds %v, want %v", dir, got, names)
	}
	for i := range got {
		if got[i] != names[i] {
			t.Fatalf("%s holds %v, want %v", dir, got, names)
		}
	}
}

func assertNoSortDirs(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			t.Errorf("directory %s left in the datadir", e.Name())
		}
	}
}
