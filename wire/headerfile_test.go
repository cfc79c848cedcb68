package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"
)

var testMagic = [4]byte{0xf9, 0xbe, 0xb4, 0xd9}

type record struct {
	off  int64
	head [HeaderSize]byte
}

// readAllBlocks and readAllHeaders run one of the two readers to its end:
// the records (offset and first 80 bytes) and whether it ended in
// ErrTruncated.
func readAllBlocks(t testing.TB, data []byte) ([]record, bool) {
	t.Helper()
	r := NewBlockFileReader(bytes.NewReader(data), testMagic)
	var out []record
	for {
		raw, off, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, false
		}
		if err != nil {
			if !errors.Is(err, ErrTruncated) {
				t.Fatalf("BlockFileReader: %v", err)
			}
			return out, true
		}
		var rec record
		rec.off = off
		copy(rec.head[:], raw)
		out = append(out, rec)
	}
}

func readAllHeaders(t testing.TB, src io.ReadSeeker, magic [4]byte) ([]record, bool) {
	t.Helper()
	r, err := NewHeaderReader(src, magic)
	if err != nil {
		t.Fatal(err)
	}
	var out []record
	for {
		h, off, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, false
		}
		if err != nil {
			if !errors.Is(err, ErrTruncated) {
				t.Fatalf("HeaderReader: %v", err)
			}
			return out, true
		}
		rec := record{off: off}
		h.AppendTo(rec.head[:0])
		out = append(out, rec)
	}
}

func frame(blocks ...[]byte) []byte {
	var out []byte
	for _, b := range blocks {
		out = append(out, testMagic[:]...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out
}

func fakeBlock(size int, fill byte) []byte {
	b := bytes.Repeat([]byte{fill}, size)
	b[0] = fill + 1 // version differs from the filler
	return b
}

// TestHeaderReaderMatchesBlockFileReader: on the mainnet sample and on
// hand-made files with padding, junk, bad lengths, large records and a
// truncated tail, HeaderReader returns exactly the records BlockFileReader
// does, at the same offsets.
func TestHeaderReaderMatchesBlockFileReader(t *testing.T) {
	sample, err := os.ReadFile("../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		t.Fatal(err)
	}
	big := fakeBlock(200_000, 7) // larger than the reader's buffer: skipped by seeking
	junk := append([]byte{0xf9, 0xbe, 0xf9, 0xbe, 0xb4}, 0, 1, 2)
	badLen := append(append([]byte{}, testMagic[:]...), 1, 0, 0, 0) // 1 < 80: not a record
	cases := map[string][]byte{
		"mainnet sample":   sample,
		"empty":            nil,
		"padding":          append(frame(fakeBlock(100, 1), fakeBlock(81, 2)), make([]byte, 5000)...),
		"junk between":     append(append(frame(fakeBlock(100, 1)), junk...), frame(fakeBlock(90, 3))...),
		"bad length":       append(append(frame(fakeBlock(100, 1)), badLen...), frame(fakeBlock(120, 4))...),
		"large records":    frame(big, fakeBlock(80, 5), big, fakeBlock(300, 6)),
		"truncated header": frame(fakeBlock(100, 1))[:8+50],
		"truncated block":  append(frame(fakeBlock(100, 1)), frame(big)[:8+1000]...),
		"truncated length": append(frame(fakeBlock(100, 1)), testMagic[0], testMagic[1], testMagic[2], testMagic[3], 0x10),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			want, wantTrunc := readAllBlocks(t, data)
			got, gotTrunc := readAllHeaders(t, bytes.NewReader(data), testMagic)
			if len(got) != len(want) || gotTrunc != wantTrunc {
				t.Fatalf("%d records (truncated %v), want %d (%v)", len(got), gotTrunc, len(want), wantTrunc)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("record %d: offset %d, want %d (or header differs)", i, got[i].off, want[i].off)
				}
			}
		})
	}
	if recs, _ := readAllBlocks(t, sample); len(recs) != 14132 {
		t.Fatalf("sample has %d records", len(recs))
	}
}

// TestHeaderReaderXOR reads an obfuscated file (Core 28+ xor.dat) through
// XORReader, whose Seek keeps the key aligned across skipped blocks.
func TestHeaderReaderXOR(t *testing.T) {
	big := fakeBlock(100_000, 9)
	plain := frame(fakeBlock(100, 1), big, fakeBlock(150, 2), big, fakeBlock(81, 3))
	key := []byte{0x13, 0x57, 0x9b, 0xdf, 0x24, 0x68, 0xac, 0xe0}
	obf := bytes.Clone(plain)
	for i := range obf {
		obf[i] ^= key[i%len(key)]
	}
	want, _ := readAllBlocks(t, plain)
	got, trunc := readAllHeaders(t, NewXORReader(bytes.NewReader(obf), key), testMagic)
	if trunc || len(got) != 5 || len(want) != 5 {
		t.Fatalf("%d records (truncated %v), want 5", len(got), trunc)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d differs", i)
		}
	}
	if _, err := NewXORReader(io.MultiReader(), key).Seek(0, io.SeekStart); err == nil {
		t.Error("Seek on a reader that cannot seek succeeded")
	}
}

// FuzzHeaderReader checks HeaderReader against BlockFileReader on arbitrary
// files: the same records at the same offsets, the same kind of ending.
func FuzzHeaderReader(f *testing.F) {
	f.Add(frame(fakeBlock(100, 1), fakeBlock(81, 2)))
	f.Add(append(frame(fakeBlock(100, 1)), 0xf9, 0xbe, 0xb4, 0xd9, 0x50, 0, 0, 0, 1))
	f.Add(append([]byte{0xf9, 0xf9, 0xbe, 0xb4, 0xd9, 0x51, 0, 0, 0}, make([]byte, 81)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantTrunc := readAllBlocks(t, data)
		got, gotTrunc := readAllHeaders(t, bytes.NewReader(data), testMagic)
		if len(got) != len(want) || gotTrunc != wantTrunc {
			t.Fatalf("%d records (truncated %v), want %d (%v)", len(got), gotTrunc, len(want), wantTrunc)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("record %d differs", i)
			}
		}
	})
}
