package kvstore

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"utxod/backends"
	"utxod/store"
	"utxod/store/kvstore/undorec/undotest"
	"utxod/utxo"
	"utxod/wire"
)

// TestUndoFiles: with Options.UndoDir, undo records go to rev files and the
// store keeps only their locations; they read back pending, after the
// flush and after a reopen; a disconnect forgets them (durably after its
// flush); a damaged record is an error, as is a store reopened without the
// files; a record whose append meets a full disk goes to the KV instead.
func TestUndoFiles(t *testing.T) {
	coin := func(h uint32) utxo.Coin {
		return utxo.Coin{Value: int64(h) * 10, Height: h, Script: []byte{0x51, byte(h)}}
	}
	op := func(b byte, i uint32) utxo.Outpoint { return utxo.Outpoint{Hash: wire.Hash{b}, Index: i} }
	blocks := []*utxo.Delta{
		{Created: []utxo.Entry{{Outpoint: op(1, 0), Coin: coin(1)}, {Outpoint: op(1, 1), Coin: coin(1)}}},
		{Spent: []utxo.Entry{{Outpoint: op(1, 0), Coin: coin(1)}},
			Created: []utxo.Entry{{Outpoint: op(2, 0), Coin: coin(2)}}},
		{Spent: []utxo.Entry{{Outpoint: op(2, 0), Coin: coin(2)}, {Outpoint: op(1, 1), Coin: coin(1)}},
			Created: []utxo.Entry{{Outpoint: op(3, 0), Coin: coin(3)}}},
	}
	hash := func(i int) wire.Hash { return wire.Hash{0xb0 + byte(i)} }
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			undoDir := filepath.Join(dir, "undo")
			kv := openKV(t, name, dir)
			s := openStore(t, kv, Options{CacheBytes: 64 << 20, UndoDir: undoDir})
			var g store.Stats
			g.SetTip(0, wire.Hash{0xee})
			if err := s.SetGenesis(wire.Hash{0xee}, &g); err != nil {
				t.Fatal(err)
			}
			// Block 2's first append meets a full disk: its record goes
			// to the KV.
			for i, d := range blocks {
				if i == 1 {
					s.uf.writeAt = func(*os.File, []byte, int64) (int, error) {
						return 0, &os.PathError{Op: "write", Path: "rev00000.dat", Err: syscall.ENOSPC}
					}
				}
				if err := s.Connect(hash(i), d); err != nil {
					t.Fatal(err)
				}
				s.uf.writeAt = nil
			}
			check := func(when string, i int) {
				t.Helper()
				d, err := s.Undo(hash(i))
				if err != nil {
					t.Fatalf("%s: undo of block %d: %v", when, i, err)
				}
				undotest.SameEntries(t, when+": spent", d.Spent, blocks[i].Spent, true)
				undotest.SameEntries(t, when+": created", d.Created, blocks[i].Created, true)
			}
			check("pending", 2)
			st := g
			st.SetTip(3, hash(2))
			if err := s.Flush(nil, &st); err != nil {
				t.Fatal(err)
			}
			check("flushed", 2)
			// Blocks 1 and 3 have locations, block 2 its record in the KV.
			for i, want := range []bool{true, false, true} {
				_, err := kv.Get(hashKey(prefixUndoLoc, hash(i)))
				if got := err == nil; got != want {
					t.Fatalf("block %d: location stored %v, want %v (%v)", i, got, want, err)
				}
				_, err = kv.Get(hashKey(prefixUndo, hash(i)))
				if got := err == nil; got == want {
					t.Fatalf("block %d: record in the KV %v, want %v", i, got, !want)
				}
			}
			s.Close()
			kv.Close()

			kv = openKV(t, name, dir)
			s = openStore(t, kv, Options{CacheBytes: 64 << 20})
			if _, err := s.Undo(hash(0)); !errors.Is(err, errNoUndoFiles) {
				t.Fatalf("a store opened without its rev files, a record in them: %v, want errNoUndoFiles", err)
			}
			s.Close()
			s = openStore(t, kv, Options{CacheBytes: 64 << 20, UndoDir: undoDir})
			if _, err := s.Load(); err != nil {
				t.Fatal(err)
			}
			check("reopened", 2)
			if err := s.Disconnect(hash(2), hash(1), blocks[2]); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Undo(hash(2)); !errors.Is(err, store.ErrNoUndo) {
				t.Fatalf("undo of a disconnected block: %v, want ErrNoUndo", err)
			}
			st.SetTip(2, hash(1))
			if err := s.Flush(nil, &st); err != nil {
				t.Fatal(err)
			}
			if _, err := kv.Get(hashKey(prefixUndoLoc, hash(2))); !errors.Is(err, backends.ErrNotFound) {
				t.Fatalf("the disconnected block's location survived the flush: %v", err)
			}
			check("the new tip's, kept in the KV", 1)
			// Damage block 1's record (its bytes in rev00000.dat).
			loc, err := kv.Get(hashKey(prefixUndoLoc, hash(0)))
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(filepath.Join(undoDir, "rev00000.dat"), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			off := int64(loc[4]) | int64(loc[5])<<8
			if _, err := f.WriteAt([]byte{0xff}, off+undoFrameLen); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if _, err := s.Undo(hash(0)); !errors.Is(err, errBadUndoFile) {
				t.Fatalf("a damaged record: %v, want errBadUndoFile", err)
			}
			s.Close()
			kv.Close()
		})
	}
}
