package merkle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"testing"

	"utxod/wire"
)

// kernelNames lists every kernel the package knows, available or not.
var kernelNames = []string{KernelGeneric, KernelStdlib, KernelAVX2, KernelSHANI, KernelAVX512}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newKernel builds a Hasher for name or skips the test when the host lacks it.
func newKernel(tb testing.TB, name string) *Hasher {
	tb.Helper()
	h, err := New(name, quietLog())
	if errors.Is(err, ErrKernelUnsupported) {
		tb.Skipf("kernel %s not available on this host: %v", name, err)
	}
	if err != nil {
		tb.Fatalf("New(%q): %v", name, err)
	}
	if h.Name() != name {
		tb.Fatalf("New(%q) fell back to %q (self-test failed?)", name, h.Name())
	}
	return h
}

// forEachKernel runs f as a subtest per kernel; unavailable ones are skipped.
func forEachKernel(t *testing.T, f func(t *testing.T, h *Hasher)) {
	for _, name := range kernelNames {
		t.Run(name, func(t *testing.T) { f(t, newKernel(t, name)) })
	}
}

// refD64 is SHA-256d via crypto/sha256.
func refD64(in []byte) wire.Hash {
	a := sha256.Sum256(in)
	return sha256.Sum256(a[:])
}

// refRoot is a literal port of Core's ComputeMerkleRoot over crypto/sha256.
func refRoot(leaves []wire.Hash) (wire.Hash, bool) {
	hashes := append([]wire.Hash(nil), leaves...)
	mutation := false
	for len(hashes) > 1 {
		for pos := 0; pos+1 < len(hashes); pos += 2 {
			if hashes[pos] == hashes[pos+1] {
				mutation = true
			}
		}
		if len(hashes)&1 == 1 {
			hashes = append(hashes, hashes[len(hashes)-1])
		}
		for i := 0; i < len(hashes)/2; i++ {
			hashes[i] = refD64(append(hashes[2*i][:], hashes[2*i+1][:]...))
		}
		hashes = hashes[:len(hashes)/2]
	}
	if len(hashes) == 0 {
		return wire.Hash{}, mutation
	}
	return hashes[0], mutation
}

// pseudo fills n hashes deterministically from seed (xorshift64).
func pseudo(n int, seed uint64) []wire.Hash {
	out := make([]wire.Hash, n)
	x := seed | 1
	for i := range out {
		for j := range out[i] {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			out[i][j] = byte(x)
		}
	}
	return out
}

func TestZeroPairLiteral(t *testing.T) {
	want, _ := hex.DecodeString("e2f61c3f71d1defd3fa999dfa36953755c690689799962b48bebd836974e8cf9")
	if got := refD64(make([]byte, 64)); !bytes.Equal(got[:], want) {
		t.Fatalf("crypto/sha256 twice = %x", got)
	}
	forEachKernel(t, func(t *testing.T, h *Hasher) {
		var lvl [2]wire.Hash
		if n, err := h.HashLevel(lvl[:1], lvl[:]); err != nil || n != 1 {
			t.Fatalf("HashLevel = %d, %v", n, err)
		}
		if !bytes.Equal(lvl[0][:], want) {
			t.Fatalf("got %x want %x", lvl[0], want)
		}
	})
}

// TestHashLevelAllCounts checks every pair count 1..300 (every batch tail of
// every kernel) out of place and in place against crypto/sha256.
func TestHashLevelAllCounts(t *testing.T) {
	src := pseudo(600, 42)
	want := make([]wire.Hash, 300)
	for i := range want {
		want[i] = refD64(pairAt(src, i)[:])
	}
	forEachKernel(t, func(t *testing.T, h *Hasher) {
		dst := make([]wire.Hash, 300)
		buf := make([]wire.Hash, 600)
		for n := 1; n <= 300; n++ {
			clear(dst)
			if got, err := h.HashLevel(dst, src[:2*n]); err != nil || got != n {
				t.Fatalf("n=%d: HashLevel = %d, %v", n, got, err)
			}
			copy(buf, src)
			if _, err := h.HashLevel(buf, buf[:2*n]); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if dst[i] != want[i] {
					t.Fatalf("n=%d out-of-place output %d: got %x want %x", n, i, dst[i], want[i])
				}
				if buf[i] != want[i] {
					t.Fatalf("n=%d in-place output %d: got %x want %x", n, i, buf[i], want[i])
				}
			}
			for i := n; i < 300; i++ {
				if dst[i] != (wire.Hash{}) {
					t.Fatalf("n=%d: wrote past the level at %d", n, i)
				}
			}
		}
	})
}

func TestRootAllLeafCounts(t *testing.T) {
	leaves := pseudo(300, 7)
	type ref struct {
		root    wire.Hash
		mutated bool
	}
	want := make([]ref, 301)
	for n := 1; n <= 300; n++ {
		want[n].root, want[n].mutated = refRoot(leaves[:n])
	}
	forEachKernel(t, func(t *testing.T, h *Hasher) {
		for n := 1; n <= 300; n++ {
			before := append([]wire.Hash(nil), leaves[:n]...)
			root, mut := h.Root(leaves[:n])
			if root != want[n].root || mut != want[n].mutated {
				t.Fatalf("n=%d: got %x,%v want %x,%v", n, root, mut, want[n].root, want[n].mutated)
			}
			for i := range before {
				if before[i] != leaves[i] {
					t.Fatalf("n=%d: Root modified leaves", n)
				}
			}
		}
	})
}

func TestRootRules(t *testing.T) {
	l := pseudo(8, 99)
	a, b, c, d, e, f := l[0], l[1], l[2], l[3], l[4], l[5]
	six := []wire.Hash{a, b, c, d, e, f}
	sixMut := []wire.Hash{a, b, c, d, e, f, e, f}
	tests := []struct {
		name        string
		leaves      []wire.Hash
		wantMutated bool
		sameRootAs  []wire.Hash
	}{
		{"one leaf is its own root", []wire.Hash{a}, false, nil},
		{"two leaves", []wire.Hash{a, b}, false, nil},
		{"odd three", []wire.Hash{a, b, c}, false, nil},
		{"three padded by hand is mutated", []wire.Hash{a, b, c, c}, true, []wire.Hash{a, b, c}},
		{"six leaves (CVE-2012-2459 original)", six, false, nil},
		{"six leaves with last pair repeated", sixMut, true, six},
		{"equal adjacent leaves", []wire.Hash{a, a}, true, nil},
		{"equal but not a pair", []wire.Hash{a, b, b, c}, false, nil},
		{"equal on second level only", []wire.Hash{a, b, a, b}, true, nil},
		{"odd-level padding is not mutation", []wire.Hash{a, b, c, d, e}, false, nil},
	}
	forEachKernel(t, func(t *testing.T, h *Hasher) {
		for _, tc := range tests {
			root, mut := h.Root(tc.leaves)
			wantRoot, wantMut := refRoot(tc.leaves)
			if root != wantRoot || mut != wantMut || mut != tc.wantMutated {
				t.Errorf("%s: got %x,%v want %x,%v (table says mutated=%v)", tc.name, root, mut, wantRoot, wantMut, tc.wantMutated)
			}
			if len(tc.leaves) == 1 && root != tc.leaves[0] {
				t.Errorf("%s: root is not the leaf", tc.name)
			}
			if tc.sameRootAs != nil {
				if other, m := h.Root(tc.sameRootAs); other != root || m {
					t.Errorf("%s: twin root %x (mutated %v), want %x unmutated", tc.name, other, m, root)
				}
			}
		}
	})
}

func TestEmptyAndErrors(t *testing.T) {
	h := newKernel(t, KernelGeneric)
	if root, mut := h.Root(nil); root != (wire.Hash{}) || mut {
		t.Fatalf("Root(nil) = %x, %v", root, mut)
	}
	if _, _, err := h.RootChecked(nil); !errors.Is(err, ErrNoLeaves) {
		t.Fatalf("RootChecked(nil) err = %v", err)
	}
	one := pseudo(1, 3)
	if root, mut, err := h.RootChecked(one); err != nil || mut || root != one[0] {
		t.Fatalf("RootChecked(one) = %x %v %v", root, mut, err)
	}
	for _, tc := range []struct{ dst, src int }{{1, 3}, {0, 2}, {2, 6}} {
		if _, err := h.HashLevel(make([]wire.Hash, tc.dst), make([]wire.Hash, tc.src)); !errors.Is(err, ErrLevelSize) {
			t.Errorf("HashLevel(%d,%d) err = %v", tc.dst, tc.src, err)
		}
	}
	if n, err := h.HashLevel(nil, nil); n != 0 || err != nil {
		t.Errorf("HashLevel(nil,nil) = %d, %v", n, err)
	}
	if _, err := New("sse9", nil); !errors.Is(err, ErrUnknownKernel) {
		t.Errorf("New(sse9) err = %v", err)
	}
	for _, name := range []string{"", KernelAuto} {
		a, err := New(name, quietLog())
		if err != nil || a.Name() != Available()[0] {
			t.Errorf("New(%q) = %v, %v; Available = %v", name, a, err, Available())
		}
	}
}

func TestAvailableAndDefault(t *testing.T) {
	av := Available()
	if len(av) < 2 || av[len(av)-1] != KernelStdlib {
		t.Fatalf("Available() = %v", av)
	}
	for _, name := range av {
		if _, err := New(name, quietLog()); err != nil {
			t.Errorf("available kernel %q: %v", name, err)
		}
	}
	for _, name := range kernelNames {
		_, err := New(name, quietLog())
		listed := false
		for _, a := range av {
			listed = listed || a == name
		}
		if listed != (err == nil) {
			t.Errorf("kernel %q: listed=%v but New err=%v", name, listed, err)
		}
		if err != nil && !errors.Is(err, ErrKernelUnsupported) {
			t.Errorf("kernel %q: err %v does not wrap ErrKernelUnsupported", name, err)
		}
	}
	l := pseudo(5, 1)
	r1, m1 := Root(l)
	r2, m2 := refRoot(l)
	if r1 != r2 || m1 != m2 || Default() != Default() {
		t.Fatal("package Root disagrees with reference")
	}
}

func TestSelfTestDetectsBrokenKernel(t *testing.T) {
	broken := func(dst, src []wire.Hash) {
		hashPairsGeneric(dst, src)
		if len(dst) > 9 {
			dst[9][0] ^= 1
		}
	}
	if err := selfTest(broken); !errors.Is(err, errSelfTest) {
		t.Fatalf("selfTest(broken) = %v", err)
	}
	for _, name := range Available() {
		fn, _ := lookup(name)
		if err := selfTest(fn); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestRootNoAllocs(t *testing.T) {
	leaves := pseudo(1000, 5)
	forEachKernel(t, func(t *testing.T, h *Hasher) {
		h.Root(leaves) // warm the pool
		dst := make([]wire.Hash, 500)
		if a := testing.AllocsPerRun(20, func() { h.Root(leaves) }); a > 0 {
			t.Errorf("Root allocates %.1f per call", a)
		}
		if a := testing.AllocsPerRun(20, func() { _, _ = h.HashLevel(dst, leaves) }); a > 0 {
			t.Errorf("HashLevel allocates %.1f per call", a)
		}
	})
}

// FuzzKernels compares every available kernel with crypto/sha256 on
// arbitrary 64-byte inputs (data is cut to a multiple of 64 bytes).
func FuzzKernels(f *testing.F) {
	f.Add(make([]byte, 64))
	f.Add(bytes.Repeat([]byte{0xff}, 64*17))
	f.Add(bytes.Repeat([]byte("merkle"), 200))
	var hs []*Hasher
	for _, name := range Available() {
		h, err := New(name, quietLog())
		if err != nil {
			f.Fatal(err)
		}
		hs = append(hs, h)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 64
		if n > 64 {
			n = 64
		}
		src := make([]wire.Hash, 2*n)
		for i := range src {
			copy(src[i][:], data[32*i:])
		}
		dst := make([]wire.Hash, n)
		for _, h := range hs {
			if _, err := h.HashLevel(dst, src); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if want := refD64(data[64*i : 64*i+64]); dst[i] != want {
					t.Fatalf("%s: pair %d of %d: got %x want %x", h.Name(), i, n, dst[i], want)
				}
			}
		}
	})
}
