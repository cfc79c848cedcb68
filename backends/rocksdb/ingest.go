//go:build rocksdb

package rocksdb

import (
	"fmt"
	"os"
	"path/filepath"

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
	if err := d.ingestTable("append", func(w *grocksdb.SSTFileWriter) error {
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
// ingests it; op names the caller in errors. The file is removed when
// building or ingesting it fails.
func (d *DB) ingestTable(op string, fill func(*grocksdb.SSTFileWriter) error) error {
	f, err := os.CreateTemp(d.dir, appendFilePattern)
	if err != nil {
		return fmt.Errorf("rocksdb: %s: %w", op, d.fail(err))
	}
	path := f.Name()
	f.Close()
	if err := d.ingest(path, fill); err != nil {
		os.Remove(path)
		return fmt.Errorf("rocksdb: %s: %w", op, d.fail(err))
	}
	return nil
}

// ingest writes a table file at path with fill and ingests it.
func (d *DB) ingest(path string, fill func(*grocksdb.SSTFileWriter) error) error {
	eo := grocksdb.NewDefaultEnvOptions()
	defer eo.Destroy()
	w := grocksdb.NewSSTFileWriter(eo, d.opts)
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
	return d.ingestTable("write", func(w *grocksdb.SSTFileWriter) error {
		return b.ReplayLast(sstWriter{w})
	})
}
