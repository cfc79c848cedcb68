package sha256x

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
)

// want is the reference: crypto/sha256 twice.
func want(m []byte) [32]byte {
	first := sha256.Sum256(m)
	return sha256.Sum256(first[:])
}

// hashers are every kernel this host runs.
func hashers() []*Hasher {
	hs := []*Hasher{NewStdlib()}
	if h := NewAuto(); h.Kernel() != KernelStdlib {
		hs = append(hs, h)
	}
	return hs
}

// TestKnownVector: SHA-256d of the empty string and of "abc" (published:
// Bitcoin's Hash of "" is 5df6e0e2…456, of "abc" 4f8b42c2…358).
func TestKnownVector(t *testing.T) {
	msgs := [][]byte{nil, []byte("abc"), nil, nil, []byte("abc")}
	for _, h := range hashers() {
		out := make([][32]byte, len(msgs))
		h.DoubleSums(out, msgs)
		if got := fmt.Sprintf("%x", out[0]); got != "5df6e0e2761359d30a8275058e299fcc0381534545f55cf43e41983f5d4c9456" {
			t.Errorf("%s: SHA-256d(\"\") = %s", h.Kernel(), got)
		}
		if got := fmt.Sprintf("%x", out[1]); got != "4f8b42c22dd3729b519ba6f68d2da7cc5b2d606d05daed5ad5128cc03e6c6358" {
			t.Errorf("%s: SHA-256d(\"abc\") = %s", h.Kernel(), got)
		}
	}
}

// TestDoubleSumsMatchStdlib hashes batches of every size up to 40 with
// lengths around every padding edge (55/56, 63/64, 119/120) and long ones,
// on every kernel, against crypto/sha256.
func TestDoubleSumsMatchStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	edges := []int{0, 1, 31, 32, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 183, 184, 191, 192, 250, 1000, 4097}
	for _, h := range hashers() {
		for n := 0; n <= 40; n++ {
			msgs := make([][]byte, n)
			for i := range msgs {
				l := edges[rng.IntN(len(edges))]
				if rng.IntN(3) == 0 {
					l = rng.IntN(700)
				}
				msgs[i] = make([]byte, l)
				for j := range msgs[i] {
					msgs[i][j] = byte(rng.Uint32())
				}
			}
			out := make([][32]byte, n)
			h.DoubleSums(out, msgs)
			for i, m := range msgs {
				if out[i] != want(m) {
					t.Fatalf("%s: batch of %d, message %d (%d bytes): %x, want %x", h.Kernel(), n, i, len(m), out[i], want(m))
				}
			}
		}
	}
}

// TestDoubleSumsAliasedMessages: messages may overlap each other (they are
// only read), as transactions share their block's bytes.
func TestDoubleSumsAliasedMessages(t *testing.T) {
	buf := make([]byte, 3000)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	var msgs [][]byte
	for i := 0; i < 50; i++ {
		msgs = append(msgs, buf[i*13:i*13+i*37%900])
	}
	for _, h := range hashers() {
		out := make([][32]byte, len(msgs))
		h.DoubleSums(out, msgs)
		for i, m := range msgs {
			if out[i] != want(m) {
				t.Fatalf("%s: message %d: %x, want %x", h.Kernel(), i, out[i], want(m))
			}
		}
	}
}

// FuzzDoubleSums cuts the input into messages (each led by a length byte)
// and checks every kernel against crypto/sha256.
func FuzzDoubleSums(f *testing.F) {
	f.Add([]byte{3, 'a', 'b', 'c', 0, 55}, uint8(5))
	f.Add(make([]byte, 600), uint8(17))
	f.Fuzz(func(t *testing.T, data []byte, copies uint8) {
		var msgs [][]byte
		for len(data) > 0 {
			n := min(int(data[0]), len(data)-1)
			msgs = append(msgs, data[1:1+n])
			data = data[1+n:]
		}
		for i := 0; i < int(copies%20) && len(msgs) > 0; i++ {
			msgs = append(msgs, msgs[i%len(msgs)])
		}
		for _, h := range hashers() {
			out := make([][32]byte, len(msgs))
			h.DoubleSums(out, msgs)
			for i, m := range msgs {
				if out[i] != want(m) {
					t.Fatalf("%s: message %d (%d bytes)", h.Kernel(), i, len(m))
				}
			}
		}
	})
}

// TestSetDefault: New hashes with crypto/sha256 unless SetDefault chose
// auto; an unknown name is refused and changes nothing.
func TestSetDefault(t *testing.T) {
	defer SetDefault(KernelStdlib)
	if got := New().Kernel(); got != KernelStdlib {
		t.Fatalf("default kernel %s", got)
	}
	if err := SetDefault(KernelAuto); err != nil {
		t.Fatal(err)
	}
	if got, want := New().Kernel(), NewAuto().Kernel(); got != want {
		t.Fatalf("auto: kernel %s, want %s", got, want)
	}
	if err := SetDefault("avx9"); err == nil {
		t.Fatal("unknown kernel accepted")
	}
	if got, want := New().Kernel(), NewAuto().Kernel(); got != want {
		t.Fatalf("after a refused name: kernel %s, want %s", got, want)
	}
}
