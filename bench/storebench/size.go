package storebench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	bolt "go.etcd.io/bbolt"

	"utxod/backends"
	"utxod/utxo"
)

// SizeResult is a datadir's size before and after a full compaction.
type SizeResult struct {
	Backend          string  `json:"backend"`
	Bytes            int64   `json:"bytes"` // apparent size, as the replay left it
	Alloc            int64   `json:"alloc"`
	CompactedBytes   int64   `json:"compacted_bytes"`
	CompactedAlloc   int64   `json:"compacted_alloc"`
	CompactMs        float64 `json:"compact_ms"`
	CompactionMethod string  `json:"compaction"`
}

// Size measures dir, compacts the store fully and measures again. pebble
// and RocksDB compact in place (the engine's full-range manual compaction,
// opened with the wrapper's options); bbolt never shrinks its file, so
// its compacted size is that of bbolt.Compact's copy into a new file
// (dir/compact.tmp, removed afterwards).
func Size(backend, dir string) (*SizeResult, error) {
	res := &SizeResult{Backend: backend}
	var err error
	if res.Bytes, res.Alloc, err = DirSize(dir); err != nil {
		return nil, err
	}
	t := time.Now()
	switch backend {
	case "pebble":
		res.CompactionMethod = "pebble DB.Compact over the whole key range"
		opts := &pebble.Options{FormatMajorVersion: pebble.FormatNewest, Logger: quiet{}}
		for i := range opts.Levels {
			opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
			opts.Levels[i].FilterType = pebble.TableFilter
		}
		db, err := pebble.Open(dir, opts)
		if err != nil {
			return nil, err
		}
		if err := db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff}, true); err != nil {
			db.Close()
			return nil, err
		}
		if err := db.Close(); err != nil {
			return nil, err
		}
		res.CompactedBytes, res.CompactedAlloc, err = DirSize(dir)
	case "rocksdb":
		res.CompactionMethod = "RocksDB CompactRange over the whole key range"
		if err := compactRocks(dir); err != nil {
			return nil, err
		}
		res.CompactedBytes, res.CompactedAlloc, err = DirSize(dir)
	case "bbolt":
		res.CompactionMethod = "bbolt.Compact into a fresh file"
		src, err := bolt.Open(filepath.Join(dir, "bbolt.db"), 0o644, &bolt.Options{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		defer src.Close()
		tmp := filepath.Join(dir, "compact.tmp")
		dst, err := bolt.Open(tmp, 0o644, &bolt.Options{NoSync: true})
		if err != nil {
			return nil, err
		}
		defer os.Remove(tmp)
		if err := bolt.Compact(dst, src, 64<<20); err != nil {
			dst.Close()
			return nil, err
		}
		if err := dst.Close(); err != nil {
			return nil, err
		}
		fi, err := os.Stat(tmp)
		if err != nil {
			return nil, err
		}
		// The rest of the datadir (BACKEND marker) plus the compacted file.
		orig, _ := os.Stat(filepath.Join(dir, "bbolt.db"))
		res.CompactedBytes = res.Bytes - orig.Size() + fi.Size()
		res.CompactedAlloc = res.Alloc - allocated(orig) + allocated(fi)
	default:
		return nil, fmt.Errorf("storebench: unknown store %q", backend)
	}
	res.CompactMs = ms(time.Since(t))
	return res, err
}

type quiet struct{}

func (quiet) Infof(string, ...any)         {}
func (quiet) Errorf(string, ...any)        {}
func (quiet) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

// CoinsOnlyResult is the on-disk size of the UTXO set alone: the `c`
// records copied into a fresh store of the same kind, then fully compacted.
type CoinsOnlyResult struct {
	Backend        string  `json:"backend"`
	Records        int64   `json:"records"`
	Outputs        int64   `json:"outputs"`
	LogicalBytes   int64   `json:"logical_bytes"` // keys + values
	Bytes          int64   `json:"bytes"`         // compacted datadir (apparent)
	BytesPerOutput float64 `json:"bytes_per_output"`
}

// SizeCoinsOnly copies the coin records of the store in dir into a new
// store in dst (10,000-key batches), compacts it and measures it.
func SizeCoinsOnly(backend, dir, dst string) (*CoinsOnlyResult, error) {
	src, err := backends.Open(backend, dir, backends.Options{})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	out, err := backends.Open(backend, dst, backends.Options{})
	if err != nil {
		return nil, err
	}
	it, err := src.NewIterator(backends.PrefixRange([]byte{'c'}))
	if err != nil {
		out.Close()
		return nil, err
	}
	res := &CoinsOnlyResult{Backend: backend}
	b := backends.NewBatch()
	for it.Next() {
		k, v := it.Key(), it.Value()
		res.Records++
		res.LogicalBytes += int64(len(k) + len(v))
		var rec utxo.Record
		if rec, err = utxo.ParseRecord(v); err != nil {
			break
		}
		res.Outputs += int64(rec.Len())
		b.Put(k, v)
		if b.Len() == 10_000 {
			if err = out.Write(b, backends.NoSync); err != nil {
				break
			}
			b = backends.NewBatch()
		}
	}
	if err == nil {
		err = it.Err()
	}
	it.Close()
	if err == nil {
		err = out.Write(b, backends.Sync)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	sz, err := Size(backend, dst)
	if err != nil {
		return nil, err
	}
	res.Bytes = sz.CompactedBytes
	if res.Outputs > 0 {
		res.BytesPerOutput = float64(res.Bytes) / float64(res.Outputs)
	}
	return res, nil
}
