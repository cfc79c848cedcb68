package torture

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/store/kvstore/shindex"
	"utxod/store/kvstore/spindex"
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
	crashImportIndexed(t, indexCorpus(t), []string{"scripthash"}, 20)
}

// crashImportIndexed kills "utxod import --index <indexes>" of corpus c at
// random moments, max(kills()/2, 3) times per store after the first flush,
// verifying every index (utxod index verify --index NAME) after each kill,
// and requires the import resumed to the end to give the clean answer with
// verified indexes whose keys are byte for byte those of an import without
// kills (sameIndexes).
func crashImportIndexed(t *testing.T, c *Corpus, indexes []string, seed uint64) {
	bin, _ := binary(t)
	nKills := max(kills()/2, 3)
	for _, store := range stores(t) {
		t.Run(store, func(t *testing.T) {
			start := time.Now()
			rng := rand.New(rand.NewPCG(uint64(len(store)), seed))
			dir := filepath.Join(t.TempDir(), store)
			clean := filepath.Join(t.TempDir(), store+"-clean")
			args := func(dir string) []string {
				return append(importArgs(store, dir), "--index", strings.Join(indexes, ","))
			}
			verify := func(dir string) {
				t.Helper()
				for _, ix := range indexes {
					verifyIndex(t, bin, store, dir, ix)
				}
			}
			t0 := time.Now()
			runImport(t, bin, append(args(clean), c.File)...)
			full := time.Since(t0)
			verify(clean)
			// Count only the kills that land after the first flush (a datadir
			// with a tip, so an index to check); give up after many tries.
			kills, verified, heights := 0, 0, map[int32]bool{}
			for tries := 0; verified < nKills; tries++ {
				if tries == 30*nKills {
					t.Fatalf("only %d of %d kills landed after a flush in %d runs", verified, nKills, tries)
				}
				cmd := exec.Command(bin, append(append([]string{"import"}, args(dir)...), c.File)...)
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
					verify(dir)
					if tip.height < c.Height {
						verified++
						heights[tip.height] = true
					}
				}
				if tip.height == c.Height {
					sameIndexes(t, store, dir, clean, indexes)
					if err := os.RemoveAll(dir); err != nil {
						t.Fatal(err)
					}
				}
			}
			out := runImport(t, bin, append(append(args(dir), "--json"), c.File)...)
			if got, err := Canonical(out); err != nil || got != c.Final {
				t.Fatalf("import after %d kills:\n%s\nwant\n%s", kills, out, c.Final)
			}
			verify(dir)
			sameIndexes(t, store, dir, clean, indexes)
			t.Logf("indexed import (%s) %s: %d kills, %d indexes verified after a kill mid-import (%d distinct heights), final index equal to an import without kills, %.1fs",
				strings.Join(indexes, ","), store, kills, verified, len(heights), time.Since(start).Seconds())
		})
	}
}

// TestCrashImportSilentPayments is TestCrashImportIndexed for the tweak
// index (with the scripthash index beside it) on a taproot-rich
// modern-profile corpus with reorganisations: after every kill both indexes
// verify (utxod index verify recomputes every row from the kept block and
// undo data), and the resumed import ends with indexes equal, key for key,
// to those of an import without kills.
func TestCrashImportSilentPayments(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and kills the binary")
	}
	crashImportIndexed(t, spCorpus(t), []string{"scripthash", "silentpayments"}, 44)
}

var (
	spCorpusOnce sync.Once
	spCorpusVal  *Corpus
	spCorpusErr  error
)

// spCorpus is a modern-profile corpus (taproot key and script paths,
// spends within a block, reorganisations) that an indexed import with a
// 1 MiB cache flushes several times; larger in the long mode.
func spCorpus(t *testing.T) *Corpus {
	t.Helper()
	spCorpusOnce.Do(func() {
		dir, err := os.MkdirTemp("", "utxod-torture-sp-")
		if err != nil {
			spCorpusErr = err
			return
		}
		cfg := chaingen.Config{Profile: chaingen.ProfileModern, Seed: 44, Blocks: 200, Reorgs: 4, MaxTxs: 40}
		if long() {
			cfg = chaingen.Config{Profile: chaingen.ProfileModern, Seed: 44, Blocks: 500, Reorgs: 10, MaxTxs: 80}
		}
		spCorpusVal, spCorpusErr = NewCorpus(cfg, dir)
	})
	if spCorpusErr != nil {
		t.Fatal(spCorpusErr)
	}
	return spCorpusVal
}

// sameIndexes compares every key and value of the given indexes (their key
// prefixes; the scripthash rows without their ids) in two datadirs of store.
func sameIndexes(t *testing.T, store, dir, clean string, indexes []string) {
	t.Helper()
	for _, ix := range indexes {
		prefix := map[string]byte{"scripthash": shindex.Prefix, "silentpayments": spindex.Prefix}[ix]
		a, na := indexDigest(t, store, dir, prefix)
		b, nb := indexDigest(t, store, clean, prefix)
		if a != b || na != nb {
			t.Fatalf("%s index after kills: %d keys (digest %x), without kills: %d keys (%x)", ix, na, a, nb, b)
		}
	}
}

// indexDigest hashes every key and value under prefix in the datadir.
func indexDigest(t *testing.T, store, dir string, prefix byte) ([32]byte, int) {
	t.Helper()
	kv, err := backends.Open(store, dir, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	it, err := kv.NewIterator(backends.PrefixRange([]byte{prefix}))
	if err != nil {
		t.Fatal(err)
	}
	// The scripthash index keys its rows by an id under a key of its own
	// (random per index: utxod index verify checks the ids): its rows are
	// compared without their ids and meta key, in the order that leaves.
	var rows [][]byte
	for it.Next() {
		k, v := it.Key(), it.Value()
		if prefix == shindex.Prefix {
			if len(k) < 9 {
				continue
			}
			k = k[9:]
		}
		row := []byte{byte(len(k) >> 8), byte(len(k)), byte(len(v) >> 8), byte(len(v))}
		rows = append(rows, append(append(row, k...), v...))
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		t.Fatal(err)
	}
	if prefix == shindex.Prefix {
		slices.SortFunc(rows, bytes.Compare)
	}
	h := sha256.New()
	for _, r := range rows {
		h.Write(r)
	}
	return [32]byte(h.Sum(nil)), len(rows)
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

// verifyIndex runs utxod index verify --index name on dir.
func verifyIndex(t *testing.T, bin, store, dir, name string) {
	t.Helper()
	cmd := exec.Command(bin, "index", "verify", "--index", name, "--backend", store, "--datadir", dir, "--log-level", "warn")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("utxod index verify: %v\n%s%s", err, out, stderr.String())
	}
}
