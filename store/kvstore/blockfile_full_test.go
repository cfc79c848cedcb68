package kvstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"utxod/store"
	"utxod/wire"
)

// TestBlockFileFullDiskKeepsBlock: a block whose block-file append meets a
// full disk is neither lost nor refused: it goes to the KV (as without block
// files), reads back before and after the flush and a reopen, and no
// location is stored for it; the next block goes to the files again.
func TestBlockFileFullDiskKeepsBlock(t *testing.T) {
	mk := func(n byte) (wire.Hash, []byte) {
		raw := bytes.Repeat([]byte{n}, wire.HeaderSize+100)
		return wire.DoubleSHA256(raw[:wire.HeaderSize]), raw
	}
	full, rawFull := mk(1)
	ok, rawOK := mk(2)
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			kv := openKV(t, name, dir)
			s := openStore(t, kv, Options{CacheBytes: 64 << 20, BlocksDir: filepath.Join(dir, "blocks")})
			s.bf.writeAt = func(*os.File, []byte, int64) (int, error) {
				return 0, &os.PathError{Op: "write", Path: "blk00000.dat", Err: syscall.ENOSPC}
			}
			if err := s.PutBlock(full, rawFull); err != nil {
				t.Fatalf("PutBlock on a full disk: %v", err)
			}
			s.bf.writeAt = nil
			if err := s.PutBlock(ok, rawOK); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				for _, b := range []struct {
					h   wire.Hash
					raw []byte
				}{{full, rawFull}, {ok, rawOK}} {
					got, err := s.Block(b.h)
					if err != nil || !bytes.Equal(got, b.raw) {
						t.Fatalf("%s: block %x…: %v", when, b.h[:2], err)
					}
				}
			}
			check("pending")
			var st store.Stats
			if err := s.Flush(nil, &st); err != nil {
				t.Fatal(err)
			}
			check("flushed")
			if _, err := s.kv.Get(hashKey(prefixBlockLoc, full)); err == nil {
				t.Fatal("a location was stored for the block kept in the KV")
			}
			if _, err := s.kv.Get(hashKey(prefixBlock, ok)); err == nil {
				t.Fatal("the block written to a file is also in the KV")
			}
			if err := errors.Join(s.Close(), kv.Close()); err != nil {
				t.Fatal(err)
			}
			kv = openKV(t, name, dir)
			defer kv.Close()
			s = openStore(t, kv, Options{CacheBytes: 64 << 20, BlocksDir: filepath.Join(dir, "blocks")})
			defer s.Close()
			check("reopened")
			if err := s.DeleteBlock(full); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Block(full); !errors.Is(err, store.ErrNoBlock) {
				t.Fatalf("deleted block: %v", err)
			}
		})
	}
}
