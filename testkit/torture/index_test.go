package torture

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"utxod/testkit/chaingen"
)

// TestCrashImportIndexed SIGKILLs "utxod import --index scripthash" at
// random moments (half the runs pipelined) and after every kill requires
// the reopened datadir's scripthash index to be exactly the one its coins
// call for ("utxod index verify": a row with the right value for every
// coin at the store's tip, no other row), then the finished import to give
// the clean answer with a verified index. A few kills per store: the index
// rides in the flush batch that TestCrashImport already kills around.
func TestCrashImportIndexed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and kills the binary")
	}
	bin, _ := binary(t)
	c := indexCorpus(t)
	nKills := max(kills()/2, 3)
	for _, store := range stores(t) {
		t.Run(store, func(t *testing.T) {
			start := time.Now()
			rng := rand.New(rand.NewPCG(uint64(len(store)), 20))
			dir := filepath.Join(t.TempDir(), store)
			args := func() []string {
				return append(importArgs(store, dir), "--index", "scripthash")
			}
			t0 := time.Now()
			runImport(t, bin, append(args(), c.File)...)
			full := time.Since(t0)
			verifyIndex(t, bin, store, dir)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			// Count only the kills that land after the first flush (a datadir
			// with a tip, so an index to check); give up after many tries.
			kills, verified, heights := 0, 0, map[int32]bool{}
			for tries := 0; verified < nKills; tries++ {
				if tries == 30*nKills {
					t.Fatalf("only %d of %d kills landed after a flush in %d runs", verified, nKills, tries)
				}
				cmd := exec.Command(bin, append(append([]string{"import"}, args()...), c.File)...)
				var stderr SyncBuffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("import exited: %v\n%s", err, stderr.String())
					}
				case <-time.After(time.Duration(rng.Int64N(int64(full)))):
					_ = cmd.Process.Signal(syscall.SIGKILL)
					if err := <-done; err != nil {
						kills++
					}
				}
				tip := checkInfo(t, c, runChainstate(t, bin, store, dir), "")
				if tip.height > 0 { // else killed before the first flush: no index yet
					verifyIndex(t, bin, store, dir)
					if tip.height < c.Height {
						verified++
						heights[tip.height] = true
					}
				}
				if tip.height == c.Height {
					if err := os.RemoveAll(dir); err != nil {
						t.Fatal(err)
					}
				}
			}
			out := runImport(t, bin, append(append(args(), "--json"), c.File)...)
			if got, err := Canonical(out); err != nil || got != c.Final {
				t.Fatalf("import after %d kills:\n%s\nwant\n%s", kills, out, c.Final)
			}
			verifyIndex(t, bin, store, dir)
			t.Logf("indexed import %s: %d kills, %d indexes verified after a kill mid-import (%d distinct heights), %.1fs",
				store, kills, verified, len(heights), time.Since(start).Seconds())
		})
	}
}

var (
	indexCorpusOnce sync.Once
	indexCorpusVal  *Corpus
	indexCorpusErr  error
)

// indexCorpus is a corpus with enough outputs that an indexed import with
// the smallest cache (1 MiB, which the index's pending rows count against)
// flushes several times.
func indexCorpus(t *testing.T) *Corpus {
	t.Helper()
	indexCorpusOnce.Do(func() {
		dir, err := os.MkdirTemp("", "utxod-torture-index-")
		if err != nil {
			indexCorpusErr = err
			return
		}
		indexCorpusVal, indexCorpusErr = NewCorpus(chaingen.Config{Profile: chaingen.ProfileEarly, Seed: 9, Blocks: 240, Reorgs: 6, MaxTxs: 60, Ramp: 120}, dir)
	})
	if indexCorpusErr != nil {
		t.Fatal(indexCorpusErr)
	}
	return indexCorpusVal
}

// verifyIndex runs utxod index verify on dir.
func verifyIndex(t *testing.T, bin, store, dir string) {
	t.Helper()
	cmd := exec.Command(bin, "index", "verify", "--backend", store, "--datadir", dir, "--log-level", "warn")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("utxod index verify: %v\n%s%s", err, out, stderr.String())
	}
}
