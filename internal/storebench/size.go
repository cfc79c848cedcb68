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
