//go:build rocksdb

package rocksdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/DataDog/zstd"
	"github.com/linxGnu/grocksdb"

	"utxod/backends"
)

// An appended batch is written as a table file and ingested, RocksDB's own
// bulk-load path: its keys skip the write-ahead log, the memtable and the
// flush that would write them out again. The file is built beside the
// store's files and moved into it by IngestExternalFile, which syncs it and
// records it in the MANIFEST atomically; non-overlapping appends land in
// the bottom level, so there is nothing to compact either.

// appendFilePattern names the table files WriteAppend builds; Open removes
// any a crash left behind (RocksDB ignores files it does not name).
const appendFilePattern = "utxod-append-*.sst"

// WriteAppend implements backends.Appender. A batch of strictly ascending
// Puts is ingested as a table file; any other batch (deletions, keys out
// of order or repeated) goes through Write.
func (d *DB) WriteAppend(b *backends.Batch, mode backends.SyncMode) error {
	if !b.AscendingPuts() {
		return d.Write(b, mode)
	}
	if err := d.enterWrite(); err != nil {
		return err
	}
	defer d.g.Exit()
	opts := d.plainOpts
	if compressible(b) {
		opts = d.opts
	}
	if err := d.ingestTable("append", opts, func(w *grocksdb.SSTFileWriter) error {
		return b.Replay(sstWriter{w})
	}); err != nil {
		return err
	}
	if mode == backends.Sync {
		// The ingested file is durable; earlier NoSync writes become so.
		return d.sync()
	}
	return nil
}

// ingestTable builds a table file beside the store's files with fill and
// opts and ingests it; op names the caller in errors. The file is removed
// when building or ingesting it fails.
func (d *DB) ingestTable(op string, opts *grocksdb.Options, fill func(*grocksdb.SSTFileWriter) error) error {
	f, err := os.CreateTemp(d.dir, appendFilePattern)
	if err != nil {
		return fmt.Errorf("rocksdb: %s: %w", op, d.fail(err))
	}
	path := f.Name()
	f.Close()
	if err := d.ingest(path, opts, fill); err != nil {
		os.Remove(path)
		return fmt.Errorf("rocksdb: %s: %w", op, d.fail(err))
	}
	return nil
}

// ingest writes a table file at path with fill and opts and ingests it.
func (d *DB) ingest(path string, opts *grocksdb.Options, fill func(*grocksdb.SSTFileWriter) error) error {
	eo := grocksdb.NewDefaultEnvOptions()
	defer eo.Destroy()
	w := grocksdb.NewSSTFileWriter(eo, opts)
	defer w.Destroy()
	if err := w.Open(path); err != nil {
		return err
	}
	if err := fill(w); err != nil {
		return err
	}
	if err := w.Finish(); err != nil {
		return err
	}
	io := grocksdb.NewDefaultIngestExternalFileOptions()
	defer io.Destroy()
	io.SetMoveFiles(true)
	return d.db.IngestExternalFile([]string{path}, io)
}

type sstWriter struct{ w *grocksdb.SSTFileWriter }

func (s sstWriter) Put(k, v []byte) error { return s.w.Put(k, v) }
func (s sstWriter) Delete(k []byte) error { return s.w.Delete(k) }

// removeStaleAppends deletes table files a crashed WriteAppend left in dir.
func removeStaleAppends(dir string) error {
	stale, err := filepath.Glob(filepath.Join(dir, appendFilePattern))
	if err != nil {
		return err
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

// ingestFlushBytes is the size from which a synced Write is ingested as a
// table file instead of going through the log and the memtable (a
// variable for tests).
var ingestFlushBytes = 1 << 20

// writeIngest writes b, a large synced batch, as one table file that it
// ingests: RocksDB's bulk path, taken here for a flush. The keys skip the
// log, the memtable (and the copy of the batch for it) and the flush at
// close that would write them again. Ingesting one file is atomic, as a
// batch is; the earlier unsynced writes are synced first, so the batch
// never becomes durable before what it refers to.
func (d *DB) writeIngest(b *backends.Batch) error {
	if err := d.sync(); err != nil {
		return err
	}
	// Uncompressed: the flush's table lands above the last level, and the
	// compaction that takes its keys down compresses them.
	return d.ingestTable("write", d.plainOpts, func(w *grocksdb.SSTFileWriter) error {
		return b.ReplayLast(sstWriter{w})
	})
}

// sampleBytes is how much of an appended batch compressible tries.
const sampleBytes = 64 << 10

// errSampled stops compressible's replay.
var errSampled = errors.New("sampled")

// compressible reports whether an appended batch's table is worth
// compressing: whether zstd at RocksDB's level shrinks its first entries,
// laid out as a data block's (key, the 8-byte trailer, value), by the
// eighth RocksDB asks of a block before it keeps one compressed. Else, as
// for coin records (64 KB of this set's shrink by 9 %, their 4 KB blocks by
// less), compressing every block would spend CPU for nothing; the
// scripthash index's rows shrink by 16 % (13 % a block).
func compressible(b *backends.Batch) bool {
	s := sampler{buf: make([]byte, 0, sampleBytes+4096)}
	if err := b.Replay(&s); err != nil && !errors.Is(err, errSampled) {
		return false
	}
	out, err := zstd.CompressLevel(nil, s.buf, zstdLevel)
	return err == nil && len(out) <= len(s.buf)-len(s.buf)/8
}

// zstdLevel is RocksDB's default zstd level, which its tables get.
const zstdLevel = 3

type sampler struct{ buf []byte }

func (s *sampler) Put(k, v []byte) error {
	s.buf = append(s.buf, k...)
	s.buf = append(s.buf, 1, 0, 0, 0, 0, 0, 0, 0)
	s.buf = append(s.buf, v...)
	if len(s.buf) >= sampleBytes {
		return errSampled
	}
	return nil
}

func (s *sampler) Delete([]byte) error { return nil }
