package node

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	_ "utxod/backends/all"
	"utxod/params"
	"utxod/script"
	"utxod/store/kvstore"
	"utxod/store/kvstore/shindex"
	"utxod/store/kvstore/spindex"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
)

// TestValidatorSigCache: every engine has the signature cache; an import's
// (SigCacheLookupOnly) verifies a block's signatures again on a second pass
// because it never stores them, serve's (the default) does not.
func TestValidatorSigCache(t *testing.T) {
	for _, lookupOnly := range []bool{false, true} {
		v, err := newValidator(Options{Params: params.RegTest(), SigCacheLookupOnly: lookupOnly})
		if err != nil {
			t.Fatal(err)
		}
		e, ok := v.Engine.(*script.NativeEngine)
		if !ok {
			t.Fatalf("engine %T", v.Engine)
		}
		if e.Cache() == nil {
			t.Fatalf("lookupOnly %v: engine without a cache", lookupOnly)
		}
		if got := e.StoresSignatures(); got == lookupOnly {
			t.Fatalf("lookupOnly %v: engine stores signatures %v", lookupOnly, got)
		}
	}
}

// TestOpenInMemory: without a datadir the node has the memory store and no
// index; Close is idempotent.
func TestOpenInMemory(t *testing.T) {
	n, err := Open(context.Background(), Options{Params: params.RegTest()})
	if err != nil {
		t.Fatal(err)
	}
	if n.Index() != nil || n.Params().Name != params.RegTest().Name || n.Chain().Tip().Height != 0 {
		t.Fatalf("index %v, params %v, tip %+v", n.Index(), n.Params().Name, n.Chain().Tip())
	}
	if _, ok := n.Store().(*kvstore.Store); ok {
		t.Fatal("a kvstore without a datadir")
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestOpenIndex: a new datadir gets the index when asked, a reopen keeps it
// without being asked, and an existing datadir without it refuses Index
// with the command that builds it.
func TestOpenIndex(t *testing.T) {
	for _, backend := range []string{"pebble", "bbolt"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			open := func(index string) (*Node, error) {
				return Open(context.Background(), Options{Params: params.RegTest(), Datadir: filepath.Join(dir, "with"), Backend: backend, Index: index})
			}
			n, err := open(shindex.Name)
			if err != nil {
				t.Fatal(err)
			}
			if n.Index() == nil {
				t.Fatal("no index in a new datadir with Index")
			}
			if _, ok := n.Store().(*kvstore.Store); !ok {
				t.Fatalf("store %T", n.Store())
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			if n, err = open(""); err != nil {
				t.Fatal(err)
			}
			if n.Index() == nil {
				t.Fatal("the datadir's index not opened")
			}
			n.Close()

			without := Options{Params: params.RegTest(), Datadir: filepath.Join(dir, "without"), Backend: backend}
			n, err = Open(context.Background(), without)
			if err != nil {
				t.Fatal(err)
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			without.Index = shindex.Name
			// At genesis the datadir has no coins yet, so it may still
			// take the index; refusing needs a chainstate past genesis,
			// which the cmd/utxod index tests build.
			if n, err = Open(context.Background(), without); err != nil {
				t.Fatal(err)
			}
			n.Close()
		})
	}
}

// TestOpenRefuses: options that cannot describe a node.
func TestOpenRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no network", Options{}, "no network"},
		{"index without datadir", Options{Params: params.RegTest(), Index: shindex.Name}, "needs --datadir"},
		{"unknown index", Options{Params: params.RegTest(), Index: "txid"}, "want scripthash"},
		{"unknown kernel", Options{Params: params.RegTest(), MerkleKernel: "sse9"}, "merkle kernel"},
	} {
		_, err := Open(context.Background(), tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, Options{Params: params.RegTest()}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestBackendOptions: a quarter of the coins cache, the default budget for 0.
func TestBackendOptions(t *testing.T) {
	if got := BackendOptions("pebble", 400<<20, nil).CacheBytes; got != 100<<20 {
		t.Errorf("400 MiB: block cache %d", got)
	}
	if got := BackendOptions("pebble", 0, nil).CacheBytes; got != kvstore.DefaultCacheBytes/4 {
		t.Errorf("default: block cache %d", got)
	}
	if got := RecordedBackend(t.TempDir()); got != DefaultBackend {
		t.Errorf("no marker: %q", got)
	}
}

// TestStoreOptions: bbolt's early writes are synced (its unsynced commits
// can corrupt the file), pebble's and RocksDB's not.
func TestStoreOptions(t *testing.T) {
	for backend, unsynced := range map[string]bool{"pebble": true, "rocksdb": true, "bbolt": false} {
		if o := storeOptions(Options{Backend: backend}); o.UnsyncedEarlyWrites != unsynced {
			t.Errorf("%s: UnsyncedEarlyWrites %v", backend, o.UnsyncedEarlyWrites)
		}
	}
}

// TestOpenBothIndexes: a new datadir asked for both indexes keeps both; a
// block connects through both (the tweak index needs the block, which the
// chainstate notes to the store), and a reopen without --index opens both.
func TestOpenBothIndexes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "both")
	opts := Options{Params: params.RegTest(), Datadir: dir, Index: shindex.Name + "," + spindex.Name}
	n, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if n.Index() == nil || n.SilentPayments() == nil {
		t.Fatalf("indexes: scripthash %v, silentpayments %v", n.Index() != nil, n.SilentPayments() != nil)
	}
	for i, raw := range testchain.Generated(t, chaingen.ProfileModern, 110, 1) {
		if _, err := n.Chain().ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	opts.Index = ""
	if n, err = Open(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.Index() == nil || n.SilentPayments() == nil {
		t.Fatal("the datadir's indexes not both opened")
	}
	if tip := n.SilentPayments().Tip(); tip.Height != 110 {
		t.Errorf("tweak index at height %d after 110 blocks", tip.Height)
	}
	for _, bad := range []string{"scripthash,scripthash", "scripthash,txid"} {
		if err := CheckIndex(bad, dir); err == nil {
			t.Errorf("CheckIndex(%q) accepted", bad)
		}
	}
}
