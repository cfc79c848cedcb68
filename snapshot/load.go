package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"utxod/backends"
	"utxod/params"
	"utxod/scripthash"
	"utxod/store"
	"utxod/store/kvstore"
	"utxod/store/kvstore/shindex"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// LoadConfig configures Load.
type LoadConfig struct {
	// Network is the node's network; nil takes the snapshot's.
	Network *params.Params
	// ExpectHash is the hash_serialized_3 the coin set must have when the
	// network's assumeutxo table has no entry for the base (regtest, a
	// private chain). With an entry, both must agree.
	ExpectHash *wire.Hash
	// Headers, if not nil, holds the header chain from genesis to the
	// base; the loaded chainstate can then connect blocks from base+1.
	// Load keeps only that chain of the set (it releases the headers
	// themselves; the set still gives the chain to another Load).
	Headers *HeaderSet
	// Height is the base block's height when neither the table nor the
	// headers give it (0: unknown).
	Height int32
	// Backend and Datadir name the store to build; Datadir must not exist
	// or be empty. KVOptions are passed to backends.Open.
	Backend   string
	Datadir   string
	KVOptions backends.Options
	// Index asks for the scripthash index (store/kvstore/shindex) to be
	// built in the same pass: the rows of the coins as they are written,
	// hashed in runs of at most IndexMemory bytes (0:
	// shindex.DefaultSortMemory) into scripthash buckets in the staging
	// directory, each sorted and written once the content hash is
	// verified, complete at the base.
	Index       bool
	IndexMemory int
	// Progress, if set, is called now and then with the coins read and the
	// header's count.
	Progress func(done, total uint64)
	// Log receives progress milestones (default: discard).
	Log *slog.Logger
	// Now is the clock for the header time rule (default time.Now).
	Now func() time.Time
}

// stagingMarker is the file that marks a staging directory as Load's own,
// so that a stale one left by a crash can be removed safely. It goes with
// the directory's rename and is removed from the installed datadir after:
// removed before, a kill in between would leave a complete load that the
// next one refuses to clear. A datadir holding it was installed complete.
const stagingMarker = "SNAPSHOT-LOADING"

// StagingDir is where Load builds the store before renaming it to datadir.
func StagingDir(datadir string) string {
	return filepath.Clean(datadir) + ".snapshot-loading"
}

// Load reads the snapshot r and builds a new chainstate datadir at its base
// block: the coins, the statistics with MuHash, the tip and, with headers,
// the block index. It checks everything Core's loadtxoutset checks, with
// Core's messages where Core has one (see the sentinel errors): the
// metadata, the base against the assumeutxo table (or ExpectHash), every
// coin, the count in both directions, the end of the file, and finally the
// content hash. The store is built in StagingDir(Datadir) and renamed to
// Datadir only when complete and verified; on any error (or ctx's end) the
// staging directory is removed and Datadir is untouched.
func Load(ctx context.Context, r io.Reader, cfg LoadConfig) (*Summary, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	rd, err := NewReader(r, cfg.Network)
	if err != nil {
		return nil, err
	}
	net, m := rd.Network(), rd.Metadata()

	// The expected content hash: the table's, or the caller's for a chain
	// the table lacks (ActivateSnapshot's "not recognized" otherwise).
	entry, inTable := net.AssumeUTXOForBlockHash(m.BaseHash)
	var expected wire.Hash
	switch {
	case inTable && cfg.ExpectHash != nil && *cfg.ExpectHash != entry.HashSerialized:
		return nil, fmt.Errorf("%w: --expect-hash %s differs from the assumeutxo table's %s for block %s",
			ErrContentHash, cfg.ExpectHash, entry.HashSerialized, m.BaseHash)
	case inTable:
		expected = entry.HashSerialized
	case cfg.ExpectHash != nil:
		expected = *cfg.ExpectHash
	default:
		return nil, baseUnknownErr(net, m.BaseHash)
	}

	// The base height and, with headers, the chain to it.
	var chain []validate.IndexEntry
	height := int32(-1)
	if cfg.Headers != nil {
		if cfg.Headers.p.GenesisHash != net.GenesisHash {
			return nil, fmt.Errorf("%w: headers read for %s, snapshot is %s", ErrHeaders, cfg.Headers.p.Name, net.Name)
		}
		if chain, err = cfg.Headers.take(m.BaseHash, now()); err != nil {
			return nil, err
		}
		height = int32(len(chain))
	}
	if inTable {
		if height >= 0 && height != entry.Height {
			return nil, coreErrorf(ErrHeightUnknown, "Assumeutxo height in snapshot metadata not recognized (%d) - refusing to load snapshot", height)
		}
		height = entry.Height
	}
	if cfg.Height > 0 {
		if height >= 0 && height != cfg.Height {
			return nil, fmt.Errorf("%w: --height %d, but the base block is at height %d", ErrNoHeight, cfg.Height, height)
		}
		height = cfg.Height
	}
	if height < 0 {
		return nil, fmt.Errorf("%w: give the headers (--headers) or its height (--height)", ErrNoHeight)
	}
	if height == 0 && m.BaseHash != net.GenesisHash {
		return nil, fmt.Errorf("%w: height 0 is the genesis block, not %s", ErrNoHeight, m.BaseHash)
	}

	if err := checkTarget(cfg.Datadir); err != nil {
		return nil, err
	}
	staging := StagingDir(cfg.Datadir)
	if err := prepareStaging(staging); err != nil {
		return nil, err
	}
	sum, err := loadInto(ctx, rd, staging, expected, height, chain, cfg, log)
	if err != nil {
		if rerr := os.RemoveAll(staging); rerr != nil {
			log.Warn("removing the staging directory", "dir", staging, "err", rerr)
		}
		return nil, err
	}
	// os.Rename refuses an existing directory, even an empty one; Remove
	// removes only an empty one (checkTarget found it so).
	if err := os.Remove(cfg.Datadir); err != nil && !errors.Is(err, os.ErrNotExist) {
		os.RemoveAll(staging)
		return nil, fmt.Errorf("snapshot: replace the empty datadir: %w", err)
	}
	if err := os.Rename(staging, cfg.Datadir); err != nil {
		os.RemoveAll(staging)
		return nil, fmt.Errorf("snapshot: install the loaded datadir: %w", err)
	}
	if err := syncDir(filepath.Dir(filepath.Clean(cfg.Datadir))); err != nil {
		return nil, err
	}
	if err := os.Remove(filepath.Join(cfg.Datadir, stagingMarker)); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := syncDir(cfg.Datadir); err != nil {
		return nil, err
	}
	log.Info("snapshot loaded", "datadir", cfg.Datadir, "base", m.BaseHash, "height", height, "coins", sum.Stats.TxOuts)
	return sum, nil
}

// loadInto builds the store in staging and verifies it.
func loadInto(ctx context.Context, rd *Reader, staging string, expected wire.Hash, height int32, chain []validate.IndexEntry, cfg LoadConfig, log *slog.Logger) (*Summary, error) {
	kv, err := backends.Open(cfg.Backend, staging, cfg.KVOptions)
	if err != nil {
		return nil, err
	}
	bl, err := kvstore.NewBulkLoader(kv)
	if err != nil {
		kv.Close()
		return nil, err
	}
	sum := newSummary(rd, height)
	var srt *shindex.Sorter
	if cfg.Index {
		srt = shindex.NewSorter(shindex.SorterConfig{Dir: staging, Memory: cfg.IndexMemory, Rows: rd.Metadata().Coins})
		defer srt.Close()
	}
	err = ingest(rd, sum, ingestConfig{muhash: true, progress: cfg.Progress, ctx: ctx,
		sink: func(txid wire.Hash, coins []utxo.IndexedCoin) error {
			if err := bl.AddTx(txid, coins); err != nil {
				if errors.Is(err, utxo.ErrRecordCoin) {
					return fmt.Errorf("%w: txid %s: %w", ErrMixedHeights, txid, err)
				}
				return err
			}
			if srt != nil {
				return srt.AddTx(txid, coins)
			}
			return nil
		}})
	if err == nil && sum.HashSerialized3 != expected {
		err = coreErrorf(ErrContentHash, "Bad snapshot content hash: expected %s, got %s", expected, sum.HashSerialized3)
	}
	if err == nil {
		log.Info("snapshot coins verified", "coins", sum.Stats.TxOuts, "hash_serialized_3", sum.HashSerialized3)
		tip := kvstore.BulkTip{
			Genesis: rd.Network().GenesisHash,
			Stats:   &sum.Stats,
			Index:   chain,
			Base:    store.SnapshotBase{Hash: sum.Metadata.BaseHash, Height: height, Headers: cfg.Headers != nil},
		}
		if srt != nil {
			tip.Extra = func(kv backends.KV, final *backends.Batch) error {
				start := time.Now()
				n, err := srt.Write(ctx, kv, nil)
				if err != nil {
					return err
				}
				if err := srt.Close(); err != nil {
					return err
				}
				final.Put(shindex.CompleteMeta(scripthash.Tip{Height: uint32(height), Hash: sum.Metadata.BaseHash, TxOuts: sum.Stats.TxOuts}, srt.Key()))
				log.Info("scripthash index written", "rows", n, "seconds", time.Since(start).Seconds())
				return nil
			}
		}
		err = bl.Finish(tip)
	} else {
		bl.Abort()
	}
	if cerr := kv.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("snapshot: close the loaded store: %w", cerr)
	}
	if err != nil {
		return nil, err
	}
	return sum, syncDir(staging)
}

// checkTarget refuses a datadir that exists and is not an empty directory.
func checkTarget(dir string) error {
	if dir == "" {
		return fmt.Errorf("snapshot: no target datadir")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("snapshot: target datadir: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("%w: %s", ErrDatadirExists, dir)
	}
	return nil
}

// prepareStaging creates the staging directory with its marker, removing a
// stale one a crashed load left: recognised by the marker, or empty (a load
// killed between creating the directory and writing the marker).
func prepareStaging(dir string) error {
	if entries, err := os.ReadDir(dir); err == nil {
		if _, err := os.Stat(filepath.Join(dir, stagingMarker)); err != nil && len(entries) > 0 {
			return fmt.Errorf("snapshot: %s exists and is not a staging directory of utxod snapshot load: remove it", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("snapshot: remove the stale staging directory: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("snapshot: staging directory: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, stagingMarker), []byte("utxod snapshot load: in a directory named *.snapshot-loading, a load in progress, safe to delete when none runs;\nin a datadir, left by a load killed just after it installed the complete datadir: remove this file alone\n"), 0o644)
}

// syncDir fsyncs a directory (its entries, after a create or rename).
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("snapshot: sync %s: %w", dir, err)
	}
	return nil
}
