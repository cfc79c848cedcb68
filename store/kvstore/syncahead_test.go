package kvstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"utxod/store"
)

// TestSyncAhead: after SyncAhead the flush finds the block and rev files
// synced and the datadir reopens with the memory replay's digests; a sync
// ahead that fails (here: the file closed under it) fails that flush and
// every later one, and the datadir stays at its last flushed tip.
func TestSyncAhead(t *testing.T) {
	blocks := mainnetBlocks(t)[:801]
	mem := newMainnet(t, store.NewMem())
	var at400 string
	for h, raw := range blocks {
		if _, err := mem.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
		if h == 400 {
			at400 = infoJSON(t, mem)
		}
	}
	want := infoJSON(t, mem)
	for _, name := range storeNames {
		for _, failing := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "", true: "/failing"}[failing], func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), name)
				open := func() *Store {
					return openStore(t, openKV(t, name, dir), Options{CacheBytes: 1 << 30,
						BlocksDir: filepath.Join(dir, "blocks"), UndoDir: filepath.Join(dir, "undo")})
				}
				st := open()
				cs := newMainnet(t, st)
				for h, raw := range blocks {
					if _, err := cs.ProcessBlock(raw); err != nil {
						t.Fatal(err)
					}
					if h == 400 {
						if err := cs.Flush(); err != nil {
							t.Fatal(err)
						}
					}
				}
				if failing {
					st.uf.mu.Lock()
					for _, h := range st.uf.files {
						h.Close()
					}
					st.uf.mu.Unlock()
				}
				cs.SyncAhead()
				err := cs.Flush()
				if failing != (err != nil) || failing && !errors.Is(err, os.ErrClosed) {
					t.Fatalf("flush after SyncAhead (rev files closed: %v): %v", failing, err)
				}
				if failing {
					// Working handles again: a retried fdatasync would now
					// succeed, but the failure must stand.
					st.uf.mu.Lock()
					for n := range st.uf.files {
						h, err := os.OpenFile(filepath.Join(st.uf.dir, st.uf.name(n)), os.O_RDWR, 0)
						if err != nil {
							t.Fatal(err)
						}
						st.uf.files[n] = h
					}
					st.uf.mu.Unlock()
					if err := cs.Flush(); !errors.Is(err, os.ErrClosed) {
						t.Fatalf("second flush after a failed SyncAhead: %v, want the same failure", err)
					}
				} else if len(st.bf.dirty)+len(st.uf.dirty) != 0 {
					t.Fatalf("files left dirty after the flush: %v %v", st.bf.dirty, st.uf.dirty)
				}
				st.Close()
				st.kv.Close()
				st = open()
				defer st.kv.Close()
				defer st.Close()
				wantNow := want
				if failing {
					wantNow = at400
				}
				if got := infoJSON(t, newMainnet(t, st)); got != wantNow {
					t.Fatalf("reopened:\n%s\nwant\n%s", got, wantNow)
				}
			})
		}
	}
}
