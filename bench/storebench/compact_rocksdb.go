//go:build rocksdb

package storebench

import "github.com/linxGnu/grocksdb"

func compactRocks(dir string) error {
	bbto := grocksdb.NewDefaultBlockBasedTableOptions()
	bbto.SetFilterPolicy(grocksdb.NewBloomFilterFull(10))
	opts := grocksdb.NewDefaultOptions()
	opts.SetBlockBasedTableFactory(bbto)
	db, err := grocksdb.OpenDb(opts, dir)
	if err != nil {
		return err
	}
	db.CompactRange(grocksdb.Range{})
	db.Close()
	opts.Destroy()
	return nil
}
