package torture

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"utxod/testkit/chaingen"
)

// Environment knobs of the long mode ("make torture").
const (
	envKills  = "UTXOD_TORTURE_KILLS"  // SIGKILLs per store and mode (default 10)
	envStores = "UTXOD_TORTURE_STORES" // comma-separated subset of pebble,rocksdb,bbolt
)

// kills is the number of SIGKILLs per store for each of serve and import.
func kills() int {
	if n, err := strconv.Atoi(os.Getenv(envKills)); err == nil && n > 0 {
		return n
	}
	return 10
}

// long reports the long mode (more kills: a bigger corpus).
func long() bool { return kills() >= 50 }

var (
	buildOnce  sync.Once
	buildBin   string
	buildRocks bool
	buildErr   error
	buildDir   string

	corpusOnce sync.Once
	corpus     *Corpus
	corpusErr  error
	corpusDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if corpusDir != "" {
		os.RemoveAll(corpusDir)
	}
	os.Exit(code)
}

// binary builds utxod once per test run (with RocksDB when it builds).
func binary(t testing.TB) (string, bool) {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "utxod-torture-bin-")
		if buildErr != nil {
			return
		}
		start := time.Now()
		buildBin, buildRocks, buildErr = Build(buildDir)
		if buildErr == nil {
			t.Logf("built %s (rocksdb %v) in %.1fs", buildBin, buildRocks, time.Since(start).Seconds())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin, buildRocks
}

// stores are the stores to torture in this build.
func stores(t testing.TB) []string {
	_, rocks := binary(t)
	all := []string{"pebble", "rocksdb", "bbolt"}
	if v := os.Getenv(envStores); v != "" {
		all = strings.Split(v, ",")
	}
	var out []string
	for _, s := range all {
		if s == "rocksdb" && !rocks {
			t.Logf("rocksdb skipped: go build -tags rocksdb failed (librocksdb-dev missing?); the binary was built without it")
			continue
		}
		out = append(out, s)
	}
	return out
}

// testCorpus is the generated chain shared by the tests: early profile with
// reorgs; small in the default mode, larger in the long mode.
func testCorpus(t testing.TB) *Corpus {
	t.Helper()
	corpusOnce.Do(func() {
		corpusDir, corpusErr = os.MkdirTemp("", "utxod-torture-corpus-")
		if corpusErr != nil {
			return
		}
		cfg := chaingen.Config{Profile: chaingen.ProfileEarly, Seed: 8, Blocks: 160, Reorgs: 6, MaxTxs: 8}
		if long() {
			cfg = chaingen.Config{Profile: chaingen.ProfileEarly, Seed: 8, Blocks: 400, Reorgs: 16, MaxTxs: 25, Ramp: 300}
		}
		start := time.Now()
		corpus, corpusErr = NewCorpus(cfg, corpusDir)
		if corpusErr == nil {
			s := corpus.Summary
			t.Logf("corpus: %d blocks (%d stale, %d reorgs), height %d, %d txs, %d inputs, %d bytes; generated and replayed in %.1fs",
				s.Blocks, s.StaleBlocks, s.Reorgs, s.Height, s.Txs, s.Inputs, s.Bytes, time.Since(start).Seconds())
		}
	})
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return corpus
}

func newClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
}
