package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"utxod/params"
	"utxod/wire"
)

const sample = "../../testdata/mainnet/blk_0_to_14131.dat"

// referenceAt reads the independent reference values (testdata/README.md).
func referenceAt(t *testing.T, height int) map[string]any {
	f, err := os.Open("../../testdata/mainnet/reference-digests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if int(m["height"].(float64)) == height {
			return m
		}
	}
	t.Fatalf("no reference at %d", height)
	return nil
}

// writeShuffled writes the sample's blocks in a random order, optionally
// XOR-obfuscated like Core 28+ block files.
func writeShuffled(t *testing.T, path string, seed uint64, key []byte) {
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := wire.NewBlockFileReader(f, params.MainNet().Magic)
	var blocks [][]byte
	for {
		raw, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bytes.Clone(raw))
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	var out []byte
	magic := params.MainNet().Magic
	for _, b := range blocks {
		out = append(out, magic[:]...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	for i := range out {
		if len(key) > 0 {
			out[i] ^= key[i%len(key)]
		}
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportShuffledAndXOR imports the mainnet sample in file order, shuffled,
// and shuffled + XOR-obfuscated, on every store, and checks the reference
// chainstate at 14131.
func TestImportShuffledAndXOR(t *testing.T) {
	dir := t.TempDir()
	shuffled := filepath.Join(dir, "shuffled.dat")
	xored := filepath.Join(dir, "xored.dat")
	key := []byte{0x9a, 0x01, 0xfe, 0x33, 0x70, 0x0c, 0x42, 0xd5}
	writeShuffled(t, shuffled, 7, nil)
	writeShuffled(t, xored, 8, key)
	ref := referenceAt(t, 14131)
	cases := []struct {
		name string
		args []string
	}{
		{"ordered", []string{sample}},
		{"shuffled", []string{shuffled}},
		{"xor", []string{"--xor-key", "9a01fe33700c42d5", xored}},
		// Two files, every block seen twice.
		{"twice", []string{shuffled, sample}},
	}
	for _, store := range []string{"pebble", "rocksdb", "bbolt"} {
		for _, c := range cases {
			t.Run(store+"/"+c.name, func(t *testing.T) {
				var out, errb bytes.Buffer
				args := append([]string{"--network", "main", "--datadir", filepath.Join(t.TempDir(), "d"), "--backend", store, "--json", "--log-level", "warn"}, c.args...)
				code := cmdImport(args, &out, &errb)
				if code != 0 && strings.Contains(errb.String(), "not compiled in") {
					t.Skip("rocksdb not in this build")
				}
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				var got map[string]any
				if err := json.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatalf("%v: %s", err, out.String())
				}
				for _, k := range []string{"height", "bestblock", "txouts", "transactions", "bogosize", "total_amount_sat", "hash_serialized_3", "muhash"} {
					if got[k] != ref[k] {
						t.Errorf("%s = %v, want %v", k, got[k], ref[k])
					}
				}
			})
		}
	}
}

// TestImportRejectsBadBlock: a corrupted block stops the import with a
// non-zero exit and a line naming hash, height and Core's reason.
func TestImportRejectsBadBlock(t *testing.T) {
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Clone(data[:300_000])
	// Flip a byte of block 100's coinbase scriptSig: the header (and its
	// proof of work) stay valid, the merkle root no longer matches.
	r := wire.NewBlockFileReader(bytes.NewReader(data), params.MainNet().Magic)
	var off int64
	for i := 0; i <= 100; i++ {
		if _, off, err = r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	data[off+8+80+1+4+1+36+1+1] ^= 1
	path := filepath.Join(t.TempDir(), "bad.dat")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := cmdImport([]string{"--network", "main", "--log-level", "error", path}, &out, &errb)
	msg := errb.String()
	if code == 0 || !strings.Contains(msg, "rejected: bad-txnmrklroot") || !strings.Contains(msg, "height 100") ||
		!strings.Contains(msg, fmt.Sprintf("offset %d]", off)) {
		t.Fatalf("exit %d: %s", code, msg)
	}
}

// TestImportMinFreeFlag: --min-free-mb larger than any disk refuses the
// flush before writing, with the disk-full error, and exit status 1.
func TestImportMinFreeFlag(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"--network", "main", "--datadir", filepath.Join(t.TempDir(), "d"), "--backend", "bbolt",
		"--log-level", "error", "--stop-height", "10", "--min-free-mb", strconv.Itoa(1 << 30), sample}
	code := cmdImport(args, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "ENOSPC") || !strings.Contains(errb.String(), "margin") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}
