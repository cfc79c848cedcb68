package backends

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestPrefixEnd(t *testing.T) {
	cases := []struct{ in, want []byte }{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte{0xff}, nil},
		{[]byte{0xff, 0xff}, nil},
		{[]byte("a"), []byte("b")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\xfe\xff"), []byte("a\xff")},
		{[]byte{0x00}, []byte{0x01}},
	}
	for _, c := range cases {
		in := bytes.Clone(c.in)
		if got := PrefixEnd(c.in); !bytes.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", c.in, got, c.want)
		}
		if !bytes.Equal(in, c.in) {
			t.Errorf("PrefixEnd modified its argument")
		}
	}
}

func TestBounds(t *testing.T) {
	b := func(s string) []byte { return []byte(s) }
	cases := []struct {
		name         string
		r            Range
		lower, upper []byte
		empty        bool
	}{
		{"zero", Range{}, b(""), nil, false},
		{"start", Range{Start: b("k")}, b("k"), nil, false},
		{"end", Range{End: b("k")}, b(""), b("k"), false},
		{"empty-end-unbounded", Range{End: []byte{}}, b(""), nil, false},
		{"start>=end", Range{Start: b("k"), End: b("k")}, b("k"), b("k"), true},
		{"prefix", Range{Prefix: b("ab")}, b("ab"), b("ac"), false},
		{"prefix-ff", Range{Prefix: b("\xff")}, b("\xff"), nil, false},
		{"prefix-tighter-start", Range{Prefix: b("ab"), Start: b("abc")}, b("abc"), b("ac"), false},
		{"prefix-looser-start", Range{Prefix: b("ab"), Start: b("a")}, b("ab"), b("ac"), false},
		{"prefix-tighter-end", Range{Prefix: b("ab"), End: b("ab\x05")}, b("ab"), b("ab\x05"), false},
		{"prefix-looser-end", Range{Prefix: b("ab"), End: b("z")}, b("ab"), b("ac"), false},
		{"prefix-disjoint", Range{Prefix: b("ab"), Start: b("b")}, b("b"), b("ac"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lo, up, empty := c.r.Bounds()
			if !bytes.Equal(lo, c.lower) || lo == nil || !bytes.Equal(up, c.upper) || (up == nil) != (c.upper == nil) || empty != c.empty {
				t.Fatalf("Bounds() = %q, %q, %v; want %q, %q, %v", lo, up, empty, c.lower, c.upper, c.empty)
			}
		})
	}
}

type rec struct{ ops []string }

func (r *rec) Put(k, v []byte) error { r.ops = append(r.ops, "p:"+string(k)+"="+string(v)); return nil }
func (r *rec) Delete(k []byte) error { r.ops = append(r.ops, "d:"+string(k)); return nil }

func TestBatch(t *testing.T) {
	var b Batch
	if b.Len() != 0 || b.Size() != 0 || b.HasEmptyKey() {
		t.Fatal("zero batch not empty")
	}
	k, v := []byte("key"), []byte("val")
	b.Put(k, v)
	k[0], v[0] = 'X', 'X' // the batch copied them
	b.Delete([]byte("gone"))
	b.Put(nil, nil)
	if b.Len() != 3 || b.Size() != 3+3+4 || !b.HasEmptyKey() {
		t.Fatalf("Len=%d Size=%d HasEmptyKey=%v", b.Len(), b.Size(), b.HasEmptyKey())
	}
	var r rec
	if err := b.Replay(&r); err != nil {
		t.Fatal(err)
	}
	want := []string{"p:key=val", "d:gone", "p:="}
	if len(r.ops) != 3 || r.ops[0] != want[0] || r.ops[1] != want[1] || r.ops[2] != want[2] {
		t.Fatalf("Replay = %q, want %q", r.ops, want)
	}
	b.Reset()
	if b.Len() != 0 || b.Size() != 0 || b.HasEmptyKey() {
		t.Fatal("Reset batch not empty")
	}
}

func TestRegisterMisuse(t *testing.T) {
	open := func(string, Options) (KV, error) { return nil, errors.New("x") }
	for _, c := range []struct {
		name string
		fn   func()
	}{
		{"empty", func() { Register("", open) }},
		{"nil", func() { Register("test-nil", nil) }},
		{"slash", func() { Register("a/b", open) }},
		{"dup", func() {
			name := fmt.Sprintf("test-dup-%d", rand.Uint64())
			Register(name, open)
			Register(name, open)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			c.fn()
		})
	}
}

func TestOpenFailureKeepsDirUnclaimed(t *testing.T) {
	// Unique per run: the registry outlives a test under -count=N.
	name := fmt.Sprintf("test-failing-%d", rand.Uint64())
	Register(name, func(string, Options) (KV, error) { return nil, errors.New("boom") })
	dir := filepath.Join(t.TempDir(), "d")
	if _, err := Open(name, dir, Options{}); err == nil || !bytes.Contains([]byte(err.Error()), []byte("boom")) {
		t.Fatalf("Open = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, MarkerFile)); !os.IsNotExist(err) {
		t.Fatalf("marker left after failed open: %v", err)
	}
	if _, err := Open("test-unknown", dir, Options{}); !errors.Is(err, ErrUnknownBackend) {
		t.Fatalf("unknown: %v", err)
	}
}

func TestAvailable(t *testing.T) {
	// Unique per run: the registry outlives a test under -count=N.
	ok := fmt.Sprintf("test-avail-%d", rand.Uint64())
	gone := fmt.Sprintf("test-gone-%d", rand.Uint64())
	Register(ok, func(string, Options) (KV, error) { return nil, errors.New("unused") })
	reason := fmt.Errorf("%w: build with -tags x", ErrUnavailable)
	RegisterUnavailable(gone, reason)
	if err := Available(ok); err != nil {
		t.Fatalf("Available(%s) = %v", ok, err)
	}
	if err := Available(gone); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Available(%s) = %v, want ErrUnavailable", gone, err)
	}
	if _, err := Open(gone, t.TempDir(), Options{}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open(%s) = %v, want ErrUnavailable", gone, err)
	}
	if err := Available("test-never-registered"); !errors.Is(err, ErrUnknownBackend) {
		t.Fatalf("Available(unknown) = %v, want ErrUnknownBackend", err)
	}
}
