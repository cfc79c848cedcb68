package all_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/backends/kvtest"
)

// available returns the registered stores that open in this build.
func available(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, n := range backends.Names() {
		kv, err := backends.Open(n, t.TempDir(), backends.Options{})
		if errors.Is(err, backends.ErrUnavailable) {
			t.Logf("%s: %v", n, err)
			continue
		}
		if err != nil {
			t.Fatalf("open %s: %v", n, err)
		}
		if err := kv.Close(); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

func TestNames(t *testing.T) {
	want := []string{"bbolt", "pebble", "rocksdb"}
	if got := backends.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
}

// TestAll runs the conformance suite over every store that opens.
func TestAll(t *testing.T) {
	for _, n := range available(t) {
		t.Run(n, func(t *testing.T) {
			kvtest.TestKV(t, kvtest.Open[*testing.T](n, backends.Options{CacheBytes: 8 << 20}))
		})
	}
}

func TestOpenErrors(t *testing.T) {
	names := available(t)
	cases := []struct {
		name  string
		store string
		dir   func(t *testing.T) string
		opts  backends.Options
		want  error
	}{
		{"unknown", "nosuchstore", func(t *testing.T) string { return t.TempDir() }, backends.Options{}, backends.ErrUnknownBackend},
		{"empty-dir", "pebble", func(*testing.T) string { return "" }, backends.Options{}, backends.ErrBadOptions},
		{"bad-extra-pebble", "pebble", func(t *testing.T) string { return t.TempDir() }, backends.Options{Extra: 42}, backends.ErrBadOptions},
		{"bad-extra-bbolt", "bbolt", func(t *testing.T) string { return t.TempDir() }, backends.Options{Extra: "x"}, backends.ErrBadOptions},
		{"negative-cache", "pebble", func(t *testing.T) string { return t.TempDir() }, backends.Options{CacheBytes: -1}, backends.ErrBadOptions},
		{"readonly-missing", "pebble", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, backends.Options{ReadOnly: true}, os.ErrNotExist},
		{"readonly-missing-bbolt", "bbolt", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, backends.Options{ReadOnly: true}, os.ErrNotExist},
	}
	if slices.Contains(names, "rocksdb") {
		cases = append(cases, struct {
			name  string
			store string
			dir   func(t *testing.T) string
			opts  backends.Options
			want  error
		}{"bad-extra-rocksdb", "rocksdb", func(t *testing.T) string { return t.TempDir() }, backends.Options{Extra: 1.5}, backends.ErrBadOptions})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kv, err := backends.Open(c.store, c.dir(t), c.opts)
			if err == nil {
				kv.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want %v", err, c.want)
			}
		})
	}
}

func TestWrongBackend(t *testing.T) {
	names := available(t)
	for _, creator := range names {
		for _, other := range names {
			if other == creator {
				continue
			}
			t.Run(creator+"-then-"+other, func(t *testing.T) {
				dir := t.TempDir()
				kv, err := backends.Open(creator, dir, backends.Options{})
				if err != nil {
					t.Fatal(err)
				}
				kv.Close()
				_, err = backends.Open(other, dir, backends.Options{})
				if !errors.Is(err, backends.ErrWrongBackend) {
					t.Fatalf("Open(%s) on a %s dir: %v, want ErrWrongBackend", other, creator, err)
				}
				if !strings.Contains(err.Error(), `"`+creator+`"`) || !strings.Contains(err.Error(), `"`+other+`"`) {
					t.Fatalf("error does not name both stores: %v", err)
				}
				// Read-only opens are refused too; the creator still opens.
				if _, err := backends.Open(other, dir, backends.Options{ReadOnly: true}); !errors.Is(err, backends.ErrWrongBackend) {
					t.Fatalf("read-only Open(%s): %v", other, err)
				}
				kv, err = backends.Open(creator, dir, backends.Options{})
				if err != nil {
					t.Fatal(err)
				}
				kv.Close()
			})
		}
	}
}

func TestReadOnly(t *testing.T) {
	for _, n := range available(t) {
		t.Run(n, func(t *testing.T) {
			dir := t.TempDir()
			kv, err := backends.Open(n, dir, backends.Options{})
			if err != nil {
				t.Fatal(err)
			}
			b := backends.NewBatch()
			b.Put([]byte("k"), []byte("v"))
			if err := kv.Write(b, backends.Sync); err != nil {
				t.Fatal(err)
			}
			kv.Close()
			ro, err := backends.Open(n, dir, backends.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			if v, err := ro.Get([]byte("k")); err != nil || string(v) != "v" {
				t.Fatalf("Get = %q, %v", v, err)
			}
			if err := ro.Write(b, backends.NoSync); !errors.Is(err, backends.ErrReadOnly) {
				t.Fatalf("Write on read-only store: %v", err)
			}
			if err := ro.Sync(); err != nil {
				t.Fatalf("Sync on read-only store: %v", err)
			}
			s, err := ro.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if ok, err := s.Has([]byte("k")); !ok || err != nil {
				t.Fatalf("snapshot Has = %v, %v", ok, err)
			}
		})
	}
}

func TestMarker(t *testing.T) {
	for _, n := range available(t) {
		t.Run(n, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "new", "datadir")
			kv, err := backends.Open(n, dir, backends.Options{})
			if err != nil {
				t.Fatal(err)
			}
			kv.Close()
			got, err := os.ReadFile(filepath.Join(dir, backends.MarkerFile))
			if err != nil || string(got) != n+"\n" {
				t.Fatalf("marker = %q, %v", got, err)
			}
			if _, err := os.Stat(filepath.Join(dir, backends.MarkerFile+".tmp")); !os.IsNotExist(err) {
				t.Fatalf("temporary marker left: %v", err)
			}
		})
	}
}

func BenchmarkAll(b *testing.B) {
	for _, n := range backends.Names() {
		kv, err := backends.Open(n, b.TempDir(), backends.Options{})
		if err != nil {
			b.Logf("%s: %v", n, err)
			continue
		}
		kv.Close()
		b.Run(n, func(b *testing.B) {
			kvtest.BenchKV(b, kvtest.Open[*testing.B](n, backends.Options{}))
		})
	}
}
