package bbolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"utxod/backends"
)

// leafKeys parses a leaf page's keys (bbolt's page.go: elements of
// flags, pos, ksize, vsize, each uint32, the key at the element plus pos).
func leafKeys(t *testing.T, p []byte) [][]byte {
	t.Helper()
	if binary.NativeEndian.Uint16(p[8:10])&leafPageFlag == 0 {
		t.Fatalf("page %d is not a leaf (flags %#x)", binary.NativeEndian.Uint64(p[0:8]), binary.NativeEndian.Uint16(p[8:10]))
	}
	n := int(binary.NativeEndian.Uint16(p[10:12]))
	keys := make([][]byte, n)
	for i := range n {
		e := pageHeaderSize + i*leafElementSize
		pos := int(binary.NativeEndian.Uint32(p[e+4 : e+8]))
		ks := int(binary.NativeEndian.Uint32(p[e+8 : e+12]))
		keys[i] = p[e+pos : e+pos+ks]
	}
	return keys
}

// testTree writes a bucket several levels deep: a sorted load, then
// random puts (some values spanning overflow pages) and deletes, so that
// leaves split and merge and branch keys move. It returns the loaded keys.
func testTree(t *testing.T, d *DB, r *rand.Rand) [][]byte {
	t.Helper()
	b := backends.NewBatch()
	var loaded [][]byte
	for range 200_000 {
		loaded = append(loaded, testKey(r))
	}
	slices.SortFunc(loaded, bytes.Compare)
	loaded = slices.CompactFunc(loaded, bytes.Equal)
	for _, k := range loaded {
		b.Put(k, make([]byte, 40))
	}
	if err := d.WriteAppend(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b := backends.NewBatch()
		for i := range 20_000 {
			v := make([]byte, r.IntN(100))
			if i%1000 == 0 {
				v = make([]byte, 9000+r.IntN(9000))
			}
			v = append(v, byte(i))
			b.Put(testKey(r), v)
		}
		for range 5_000 {
			b.Delete(loaded[r.IntN(len(loaded))])
		}
		if err := d.Write(b, backends.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	return loaded
}

func testKey(r *rand.Rand) []byte { return fmt.Appendf(nil, "k%016x", r.Uint64()) }

// TestAdviseFindsLeaves: for keys present and absent, leaves names the
// leaf bbolt's own lookup finds the key's chunk on: the chunk floor finds
// is on that leaf, or the key lies below the leaf's first chunk (the
// floor is then the previous leaf's last, as bbolt's Seek and Prev find
// it). The tree is several levels deep, with random writes after the load
// so that leaves split and branch keys move.
func TestAdviseFindsLeaves(t *testing.T) {
	kv, err := Open(t.TempDir(), backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	d := kv.(*DB)
	r := rand.New(rand.NewPCG(1, 2))
	loaded := testTree(t, d, r)
	probes := make([][]byte, 0, 4000)
	for range 2000 {
		probes = append(probes, testKey(r), loaded[r.IntN(len(loaded))])
	}
	probes = append(probes, []byte("a"), []byte("z")) // below and above every chunk
	slices.SortFunc(probes, bytes.Compare)
	err = d.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucket)
		m := txMapping(tx, int(d.pageSize))
		leaves := m.leaves(uint64(bk.Root()), probes, false)
		if len(leaves) < 100 {
			t.Fatalf("%d leaves for %d probes: the tree is too small to test", len(leaves), len(probes))
		}
		covered := 0
		for _, s := range leaves {
			if s.lo != covered {
				t.Fatalf("span %d starts at key %d, want %d", s.id, s.lo, covered)
			}
			covered = s.hi
			lk := leafKeys(t, m.page(s.id))
			for _, k := range probes[s.lo:s.hi] {
				c := bk.Cursor()
				ck, _ := floor(c, k)
				if slices.ContainsFunc(lk, func(x []byte) bool { return bytes.Equal(x, ck) }) {
					continue
				}
				// Below the leaf's first chunk, Seek lands on it and Prev
				// goes back to the floor: the leaf must follow the floor.
				next, _ := c.Next()
				if ck == nil {
					next, _ = c.First()
				}
				if bytes.Compare(k, lk[0]) >= 0 || !bytes.Equal(next, lk[0]) {
					t.Fatalf("%q: its chunk %q is not on leaf %d (%q … %q), nor is the leaf the next", k, ck, s.id, lk[0], lk[len(lk)-1])
				}
			}
		}
		if covered != len(probes) {
			t.Fatalf("spans cover %d of %d keys", covered, len(probes))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzAdvisePages: pages of any bytes, as a corrupt file's, never make
// the descent panic or name a page outside the file.
func FuzzAdvisePages(f *testing.F) {
	const ps = 512
	page := func(flags uint16, elems ...[]byte) []byte {
		p := make([]byte, ps)
		binary.NativeEndian.PutUint16(p[8:10], flags)
		binary.NativeEndian.PutUint16(p[10:12], uint16(len(elems)))
		for i, e := range elems {
			copy(p[pageHeaderSize+i*branchElementSize:], e)
		}
		return p
	}
	elem := func(pos, ksize uint32, child uint64) []byte {
		e := make([]byte, branchElementSize)
		binary.NativeEndian.PutUint32(e[0:4], pos)
		binary.NativeEndian.PutUint32(e[4:8], ksize)
		binary.NativeEndian.PutUint64(e[8:16], child)
		return e
	}
	// A root branch (page 0) over two leaves (pages 1 and 2).
	root := page(branchPageFlag, elem(100, 1, 1), elem(90, 1, 2))
	root[pageHeaderSize+100], root[pageHeaderSize+branchElementSize+90] = 'a', 'm'
	f.Add(slices.Concat(root, page(leafPageFlag), page(leafPageFlag)), uint64(0), []byte("b"), []byte("n"))
	f.Add(slices.Concat(root, root), uint64(1), []byte("a"), []byte("z"))
	f.Fuzz(func(t *testing.T, file []byte, root uint64, k1, k2 []byte) {
		file = append(file, make([]byte, (ps-len(file)%ps)%ps)...)
		m := mapping{data: file, ps: ps}
		keys := [][]byte{k1, k2}
		slices.SortFunc(keys, bytes.Compare)
		for _, s := range m.leaves(root, keys, false) {
			if s.id >= m.pages() || s.lo < 0 || s.hi > len(keys) || s.lo >= s.hi {
				t.Fatalf("span %+v outside %d pages, %d keys", s, m.pages(), len(keys))
			}
		}
	})
}
