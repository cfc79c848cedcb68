//go:build !rocksdb

package storebench

import "errors"

func compactRocks(dir string) error { return errors.New("storebench: built without -tags rocksdb") }
