package pebble

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"

	"utxod/backends"
)

// An appended batch is written as a table file and ingested, pebble's
// bulk-load path: its keys skip the write-ahead log, the memtable and the
// flush that would write them out again. Ingest links the file into the
// store and records it in the MANIFEST atomically (durably); a file that
// does not overlap the store goes to the bottom level, so nothing is
// compacted either.

// appendFilePrefix names the table files WriteAppend builds; Open removes
// any a crash left behind (pebble ignores files it does not name).
const appendFilePrefix = "utxod-append-"

// WriteAppend implements backends.Appender. A batch of strictly ascending
// Puts is ingested as a table file; any other batch goes through Write.
func (d *DB) WriteAppend(b *backends.Batch, mode backends.SyncMode) error {
	if !b.AscendingPuts() {
		return d.Write(b, mode)
	}
	if err := d.enterWrite(); err != nil {
		return err
	}
	defer d.g.Exit()
	path := filepath.Join(d.dir, fmt.Sprintf("%s%d-%d.sst", appendFilePrefix, d.appendSeq.Add(1), b.Len()))
	err := d.commit("append", func() error {
		if err := d.buildTable(path, b); err != nil {
			return err
		}
		return d.db.Ingest(context.Background(), []string{path})
	})
	if err != nil {
		_ = d.opts.FS.Remove(path)
		return err
	}
	if mode == backends.Sync {
		// The ingested table is durable; earlier NoSync writes become so.
		return d.sync()
	}
	return nil
}

// buildTable writes b's Puts, ascending, into a table file at path in the
// store's format.
func (d *DB) buildTable(path string, b *backends.Batch) error {
	f, err := d.opts.FS.Create(path, "")
	if err != nil {
		return err
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), d.opts.MakeWriterOptions(len(d.opts.Levels)-1, d.db.TableFormat()))
	if err := b.Replay(tableWriter{w}); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

type tableWriter struct{ w *sstable.Writer }

func (t tableWriter) Put(k, v []byte) error { return t.w.Set(k, v) }
func (t tableWriter) Delete([]byte) error {
	return errors.New("pebble: deletion in an appended table") // AscendingPuts excludes it
}

// removeStaleAppends deletes table files a crashed WriteAppend left in dir.
func (d *DB) removeStaleAppends() error {
	names, err := d.opts.FS.List(d.dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasPrefix(n, appendFilePrefix) && strings.HasSuffix(n, ".sst") {
			if err := d.opts.FS.Remove(filepath.Join(d.dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}
