package node

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"utxod/backends"
	"utxod/store/kvstore"
	"utxod/store/kvstore/shindex"
	"utxod/store/kvstore/spindex"
)

// BackendOptions are the options every command opens a datadir's backend
// with: a block cache of a quarter of the coins cache budget cacheBytes
// (0: kvstore.DefaultCacheBytes) and the logger tagged with the store's
// name.
func BackendOptions(backend string, cacheBytes int64, log *slog.Logger) backends.Options {
	if cacheBytes <= 0 {
		cacheBytes = kvstore.DefaultCacheBytes
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return backends.Options{CacheBytes: cacheBytes / 4, Logger: log.With("store", backend)}
}

// OpenBackend opens the key-value store backend in datadir with
// BackendOptions.
func OpenBackend(backend, datadir string, cacheBytes int64, log *slog.Logger) (backends.KV, error) {
	return backends.Open(backend, datadir, BackendOptions(backend, cacheBytes, log))
}

// RecordedBackend is the store the datadir's marker file names, or
// DefaultBackend when it has none.
func RecordedBackend(datadir string) string {
	if b, err := os.ReadFile(filepath.Join(datadir, backends.MarkerFile)); err == nil {
		return string(bytes.TrimSpace(b))
	}
	return DefaultBackend
}

// openStore opens the datadir's backend, its index and the kvstore over
// them into n; on an error it closes what it opened.
func (n *Node) openStore(opts Options) error {
	kv, err := OpenBackend(opts.Backend, opts.Datadir, opts.CacheBytes, opts.Log)
	if err != nil {
		return err
	}
	ix, err := openIndex(kv, opts)
	if err != nil {
		return errors.Join(err, kv.Close())
	}
	sp, err := openSilentPayments(kv, opts)
	if err != nil {
		if ix != nil {
			ix.Close()
		}
		return errors.Join(err, kv.Close())
	}
	kopts := storeOptions(opts)
	if ix != nil {
		kopts.Indexes = append(kopts.Indexes, ix)
		opts.Log.Info("scripthash index on", "datadir", opts.Datadir)
	}
	if sp != nil {
		kopts.Indexes = append(kopts.Indexes, sp)
		opts.Log.Info("silent-payments index on", "datadir", opts.Datadir)
	}
	kvs, err := kvstore.Open(kv, kopts)
	if err != nil {
		if ix != nil {
			ix.Close()
		}
		return errors.Join(err, kv.Close())
	}
	n.kv, n.index, n.sp, n.store = kv, ix, sp, kvs
	return nil
}

// heapBeyondCache is what the Go heap may hold beyond its share of the
// cache budget: the block index, the flush's batch and the store's copy
// of it, requests. The process's goal is the budget plus 1.5 GiB.
const heapBeyondCache = 1280 << 20

// HeapLimit is the soft limit for the Go heap of a process whose store is
// backend with a coins cache of cacheBytes: heapBeyondCache plus half the
// budget on pebble and RocksDB, whose block cache and memtables take the
// other half outside the Go heap, and plus all of it on bbolt, which has
// neither (it reads through its mapped file). Without a limit the
// collector lets the heap grow to twice what was live at its last cycle,
// and a flush took serve past its goal.
func HeapLimit(backend string, cacheBytes int64) int64 {
	if backend == "bbolt" {
		return cacheBytes + heapBeyondCache
	}
	return cacheBytes/2 + heapBeyondCache
}

// storeOptions are the kvstore options of a datadir.
func storeOptions(opts Options) kvstore.Options {
	return kvstore.Options{
		CacheBytes:   opts.CacheBytes,
		MinFreeBytes: opts.MinFreeBytes,
		// Raw blocks and undo records go to flat files, as Core's blk and
		// rev files; the KV keeps their locations. A record whose append
		// meets a full disk goes to the KV, and records an older datadir
		// kept in the KV stay readable.
		BlocksDir: filepath.Join(opts.Datadir, "blocks"),
		UndoDir:   filepath.Join(opts.Datadir, "undo"),
		// pebble and RocksDB write the early batches of undo records and
		// blocks unsynced; the next flush's synced batch makes them
		// durable, as Core syncs its block and undo files only when it
		// flushes. bbolt always syncs: its unsynced commits can corrupt
		// the file on power loss.
		UnsyncedEarlyWrites: opts.Backend != "bbolt",
		// On a datadir without coins the cache answers misses without
		// reading the store until a flush over the budget empties it.
		TrustCacheMisses: true,
		Log:              opts.Log,
	}
}

// openIndex opens the datadir's scripthash index: the one it keeps
// (whatever opts.Index says), a new one for a new datadir with
// opts.Index, or none. opts.Index on an existing datadir without a
// complete index is refused with the command that builds it.
func openIndex(kv backends.KV, opts Options) (*shindex.Index, error) {
	m, ok, err := shindex.ReadMeta(kv)
	if err != nil {
		return nil, err
	}
	if ok && m.State == shindex.Complete {
		ix, err := shindex.Open(kv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", opts.Datadir, err)
		}
		return ix, nil
	}
	if !wants(opts.Index, shindex.Name) {
		return nil, nil
	}
	ix, err := shindex.Create(kv, opts.Params.GenesisHash)
	if errors.Is(err, shindex.ErrNotNew) {
		return nil, fmt.Errorf("--index %s: the datadir %s has a chainstate but no complete scripthash index; build it with: utxod index build --datadir %s --backend %s",
			shindex.Name, opts.Datadir, opts.Datadir, opts.Backend)
	}
	return ix, err
}

// openSilentPayments opens the datadir's silent-payments index as openIndex
// does the scripthash index: the one it keeps, a new one for a new datadir
// that asks for it, or none.
func openSilentPayments(kv backends.KV, opts Options) (*spindex.Index, error) {
	m, ok, err := spindex.ReadMeta(kv)
	if err != nil {
		return nil, err
	}
	if ok && m.State == spindex.Complete {
		sp, err := spindex.Open(kv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", opts.Datadir, err)
		}
		return sp, nil
	}
	if !wants(opts.Index, spindex.Name) {
		return nil, nil
	}
	sp, err := spindex.Create(kv, opts.Params.GenesisHash)
	if errors.Is(err, spindex.ErrNotNew) {
		return nil, fmt.Errorf("--index %s: the datadir %s has a chainstate but no complete silent-payments index; build it (for the blocks whose data it keeps) with: utxod index build --index %s --datadir %s --backend %s",
			spindex.Name, opts.Datadir, spindex.Name, opts.Datadir, opts.Backend)
	}
	return sp, err
}
