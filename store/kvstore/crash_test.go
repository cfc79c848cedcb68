package kvstore

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/store"
	"utxod/utxo"
)

const (
	envCrashDir   = "UTXOD_CRASH_CHILD_DIR"
	envCrashStore = "UTXOD_CRASH_CHILD_STORE"
	envCrashFast  = "UTXOD_CRASH_CHILD_FAST"
	crashBlocks   = 14131
)

// TestCrashChild is the child process of TestCrashRecovery: it imports
// mainnet blocks into the datadir with a tiny cache (a flush every few
// blocks) until killed. It does nothing when run normally.
func TestCrashChild(t *testing.T) {
	dir, name := os.Getenv(envCrashDir), os.Getenv(envCrashStore)
	if dir == "" {
		t.Skip("child process of TestCrashRecovery")
	}
	kv := openKV(t, name, dir)
	var cs *chainstate.Chainstate
	if os.Getenv(envCrashFast) != "" {
		s, _ := fastStore(t, name, dir, kv, 32<<10)
		cs = newMainnet(t, s)
	} else {
		cs = newMainnet(t, reopenStore(t, dir, kv))
	}
	for _, raw := range mainnetBlocks(t)[:crashBlocks+1] {
		res, err := cs.ProcessBlock(raw)
		if err != nil {
			t.Fatal(err)
		}
		// Progress lines tell the parent the import is under way.
		if res.Status == chainstate.StatusConnected && res.Height%25 == 0 {
			fmt.Println("progress", res.Height)
		}
	}
	if err := cs.Flush(); err != nil {
		t.Fatal(err)
	}
	kv.Close()
}

// reopenStore is a store over kv with a 32 KiB cache, with the block files of dir if a fast
// child created them (as utxod uses DATADIR/blocks whenever it exists).
func reopenStore(t *testing.T, dir string, kv backends.KV) *Store {
	t.Helper()
	opts := Options{CacheBytes: 32 << 10}
	if _, err := os.Stat(filepath.Join(dir, "blocks")); err == nil {
		opts.BlocksDir = filepath.Join(dir, "blocks")
	}
	st := openStore(t, kv, opts)
	return st
}

// TestCrashRecovery kills an importing child process with SIGKILL at random
// moments, at least 10 times per store (every other child with the fast
// path: unsynced early batches, trusted cache misses); after every kill the store must
// reopen at a consistent tip (statistics and MuHash equal a clean in-memory
// replay at that height), and finishing the import must reach the same
// final state as an uninterrupted run.
func TestCrashRecovery(t *testing.T) {
	if os.Getenv(envCrashDir) != "" {
		t.Skip("in child")
	}
	blocks := mainnetBlocks(t)[:crashBlocks+1]
	// The clean replay: the gettxoutsetinfo object at every height.
	mem := newMainnet(t, store.NewMem())
	want := make([]utxo.ChainstateInfo, len(blocks))
	for h, raw := range blocks {
		if _, err := mem.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
		want[h], _ = mem.Info(chainstate.HashTypeMuHash)
	}
	final := infoJSON(t, mem)
	kills := 10
	if !testing.Short() {
		kills = 12
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			probe := openKV(t, name, dir) // skips stores not in this build
			probe.Close()
			heights := map[int32]bool{}
			for k := 0; k < kills; k++ {
				cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashStore+"="+name)
				if k%2 == 1 {
					// Every other child runs the fast path (unsynced early
					// batches, trusted cache misses on a new datadir).
					cmd.Env = append(cmd.Env, envCrashFast+"=1")
				}
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				// Kill after a random number of progress lines (the child is
				// connecting blocks, flushing every few), plus a random delay.
				sc := bufio.NewScanner(out)
				for n := 1 + rng.IntN(40); n > 0 && sc.Scan(); {
					if strings.HasPrefix(sc.Text(), "progress") {
						n--
					}
				}
				time.Sleep(time.Duration(rng.IntN(5000)) * time.Microsecond)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				go io.Copy(io.Discard, out)
				_ = cmd.Wait()

				kv := openKV(t, name, dir)
				cs := newMainnet(t, reopenStore(t, dir, kv))
				h := cs.Tip().Height
				got, err := cs.Info(chainstate.HashTypeMuHash)
				if err != nil {
					t.Fatal(err)
				}
				a, _ := json.Marshal(got)
				b, _ := json.Marshal(want[h])
				if string(a) != string(b) {
					t.Fatalf("kill %d: reopened at %d with\n%s\nwant\n%s", k, h, a, b)
				}
				heights[h] = true
				t.Logf("kill %d: reopened at height %d", k, h)
				kv.Close()
				if int(h) == crashBlocks {
					// The child finished before the kill: start over so
					// later kills land mid-import.
					if err := os.RemoveAll(dir); err != nil {
						t.Fatal(err)
					}
				}
			}
			delete(heights, crashBlocks)
			delete(heights, 0)
			t.Logf("%s: %d kills, reopened at %d distinct intermediate heights", name, kills, len(heights))
			if len(heights) < kills/2 {
				t.Fatalf("only %d kills landed mid-import", len(heights))
			}
			kv := openKV(t, name, dir)
			defer kv.Close()
			cs := newMainnetKV(t, kv, 32<<10)
			for _, raw := range blocks {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatal(err)
				}
			}
			if got := infoJSON(t, cs); got != final {
				t.Fatalf("final state after kills:\n%s\nwant\n%s", got, final)
			}
		})
	}
}
