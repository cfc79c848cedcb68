//go:build rocksdb

package rocksdb

import (
	"errors"
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
	f, err := os.CreateTemp(d.dir, appendFilePattern)
	if err != nil {
		return fmt.Errorf("rocksdb: append: %w", d.fail(err))
	}
	path := f.Name()
	f.Close()
	if err := d.ingest(path, b); err != nil {
		os.Remove(path)
		return fmt.Errorf("rocksdb: append: %w", d.fail(err))
	}
	if mode == backends.Sync {
		// The ingested file is durable; earlier NoSync writes become so.
		return d.sync()
	}
	return nil
}

// ingest writes b's Puts into a table file at path and ingests it.
func (d *DB) ingest(path string, b *backends.Batch) error {
	eo := grocksdb.NewDefaultEnvOptions()
	defer eo.Destroy()
	w := grocksdb.NewSSTFileWriter(eo, d.opts)
	defer w.Destroy()
	if err := w.Open(path); err != nil {
		return err
	}
	if err := b.Replay(sstWriter{w}); err != nil {
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
func (s sstWriter) Delete([]byte) error {
	return errors.New("rocksdb: deletion in an appended table") // AscendingPuts excludes it
}

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
