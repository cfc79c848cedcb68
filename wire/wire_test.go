package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"

	bwire "github.com/btcsuite/btcd/wire/v2"
)

var mainMagic = [4]byte{0xf9, 0xbe, 0xb4, 0xd9}

func readMainnetBlocks(t testing.TB) [][]byte {
	t.Helper()
	f, err := os.Open("../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewBlockFileReader(f, mainMagic)
	var out [][]byte
	for {
		raw, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(raw))
	}
	return out
}

// compareWithBtcd checks our view of tx against btcd's independent decoder.
func compareWithBtcd(t *testing.T, tx *Tx, ref *bwire.MsgTx) {
	t.Helper()
	if tx.TxID != Hash(ref.TxHash()) {
		t.Fatalf("txid %s, btcd %s", tx.TxID, ref.TxHash())
	}
	if tx.WTxID != Hash(ref.WitnessHash()) {
		t.Fatalf("wtxid %s, btcd %s", tx.WTxID, ref.WitnessHash())
	}
	if tx.Version != ref.Version || tx.LockTime != ref.LockTime || len(tx.Inputs) != len(ref.TxIn) || len(tx.Outputs) != len(ref.TxOut) {
		t.Fatalf("shape differs from btcd")
	}
	if tx.HasWitness != ref.HasWitness() {
		t.Fatalf("HasWitness %v, btcd %v", tx.HasWitness, ref.HasWitness())
	}
	if tx.BaseSize() != ref.SerializeSizeStripped() || tx.Size() != ref.SerializeSize() {
		t.Fatalf("sizes %d/%d, btcd %d/%d", tx.BaseSize(), tx.Size(), ref.SerializeSizeStripped(), ref.SerializeSize())
	}
	for i, in := range tx.Inputs {
		r := ref.TxIn[i]
		if in.PrevHash != Hash(r.PreviousOutPoint.Hash) || in.PrevIndex != r.PreviousOutPoint.Index ||
			!bytes.Equal(in.Script, r.SignatureScript) || in.Sequence != r.Sequence || len(in.Witness) != len(r.Witness) {
			t.Fatalf("input %d differs from btcd", i)
		}
		for j := range in.Witness {
			if !bytes.Equal(in.Witness[j], r.Witness[j]) {
				t.Fatalf("input %d witness %d differs", i, j)
			}
		}
	}
	for i, out := range tx.Outputs {
		if out.Value != ref.TxOut[i].Value || !bytes.Equal(out.Script, ref.TxOut[i].PkScript) {
			t.Fatalf("output %d differs from btcd", i)
		}
	}
}

// TestMainnetBlocksMatchBtcd parses mainnet 0–14131 and compares every field
// and hash with btcd's decoder (an independent implementation).
func TestMainnetBlocksMatchBtcd(t *testing.T) {
	blocks := readMainnetBlocks(t)
	if len(blocks) != 14132 {
		t.Fatalf("read %d blocks, want 14132", len(blocks))
	}
	var b Block
	for h, raw := range blocks {
		if err := b.Parse(raw); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		var ref bwire.MsgBlock
		if err := ref.Deserialize(bytes.NewReader(raw)); err != nil {
			t.Fatal(err)
		}
		if b.Hash != Hash(ref.BlockHash()) || b.Header.BlockHash() != b.Hash {
			t.Fatalf("height %d: hash %s, btcd %s", h, b.Hash, ref.BlockHash())
		}
		if len(b.Txs) != len(ref.Transactions) {
			t.Fatalf("height %d: tx count", h)
		}
		for i := range b.Txs {
			compareWithBtcd(t, &b.Txs[i], ref.Transactions[i])
		}
	}
	// Genesis and tip hashes as published (Core's chainparams.cpp; block explorers).
	if got := DoubleSHA256(blocks[0][:80]).String(); got != "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f" {
		t.Fatalf("genesis %s", got)
	}
	if got := DoubleSHA256(blocks[14131][:80]).String(); got != "00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c" {
		t.Fatalf("tip %s", got)
	}
}

// TestSegwitVectorsMatchBtcd parses every transaction of Core's tx_valid.json
// and tx_invalid.json (many segwit) and compares with btcd's decoder.
func TestSegwitVectorsMatchBtcd(t *testing.T) {
	n, segwit := 0, 0
	for _, file := range []string{"tx_valid.json", "tx_invalid.json"} {
		data, err := os.ReadFile("../testdata/core-vectors/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var cases [][]any
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if len(c) < 3 {
				continue // comment
			}
			hexTx, ok := c[1].(string)
			if !ok {
				continue
			}
			raw, err := hex.DecodeString(hexTx)
			if err != nil {
				t.Fatal(err)
			}
			var ref bwire.MsgTx
			refErr := ref.Deserialize(bytes.NewReader(raw))
			tx, err := ParseTx(raw)
			if refErr != nil {
				if err == nil {
					t.Logf("btcd refuses %s (%v) but we parse it", hexTx[:min(40, len(hexTx))], refErr)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			compareWithBtcd(t, tx, &ref)
			n++
			if tx.HasWitness {
				segwit++
			}
		}
	}
	if n < 200 || segwit < 30 {
		t.Fatalf("only %d transactions (%d segwit) compared", n, segwit)
	}
}

func TestParseErrors(t *testing.T) {
	// Block 170 (first non-coinbase spend) from the mainnet sample.
	blocks := readMainnetBlocks(t)
	raw := blocks[170]
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"header only", raw[:80], ErrTruncated},
		{"cut in tx", raw[:len(raw)-5], ErrTruncated},
		{"trailing", append(bytes.Clone(raw), 0), ErrTrailing},
		{"huge tx count", append(append(bytes.Clone(raw[:80]), 0xfe, 0xff, 0xff, 0xff, 0x01), make([]byte, 100)...), ErrOversize},
		{"non-canonical count", append(append(bytes.Clone(raw[:80]), 0xfd, 0x02, 0x00), raw[81:]...), ErrNonCanonical},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseBlock(c.in); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	// Segwit marker with all-empty witnesses is refused like Core
	// ("Superfluous witness record").
	tx := []byte{1, 0, 0, 0, 0, 1, 1}
	tx = append(tx, make([]byte, 36)...)
	tx = append(tx, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 /*witness count 0*/, 0, 0, 0, 0)
	if _, err := ParseTx(tx); !errors.Is(err, ErrBadWitness) {
		t.Fatalf("superfluous witness: %v", err)
	}
}

func TestBlockFileFramingAndXOR(t *testing.T) {
	data, err := os.ReadFile("../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		t.Fatal(err)
	}
	data = data[:200_000] // ends inside a block
	key := []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}
	obf := bytes.Clone(data)
	for i := range obf {
		obf[i] ^= key[i%len(key)]
	}
	count := func(r io.Reader) (int, error) {
		fr := NewBlockFileReader(r, mainMagic)
		n := 0
		for {
			_, _, err := fr.Next()
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			n++
		}
	}
	plain, err1 := count(bytes.NewReader(data))
	xored, err2 := count(NewXORReader(bytes.NewReader(obf), key))
	if plain == 0 || plain != xored || !errors.Is(err1, ErrTruncated) || !errors.Is(err2, ErrTruncated) {
		t.Fatalf("plain %d (%v) xor %d (%v)", plain, err1, xored, err2)
	}
	// The bundled file ends in zero padding, which is skipped without error.
	full, err := os.ReadFile("../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := count(bytes.NewReader(full)); err != nil || n != 14132 {
		t.Fatalf("padded file: %d blocks, %v", n, err)
	}
}

func FuzzParseBlock(f *testing.F) {
	blocks := readMainnetBlocks(f)
	for _, h := range []int{0, 1, 170, 14131} {
		f.Add(blocks[h])
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := ParseBlock(raw)
		var ref bwire.MsgBlock
		refErr := ref.Deserialize(bytes.NewReader(raw))
		if err != nil {
			return
		}
		if refErr == nil && len(ref.Transactions) == len(b.Txs) {
			for i := range b.Txs {
				compareWithBtcd(t, &b.Txs[i], ref.Transactions[i])
			}
		}
		if b.Weight() < len(raw) || b.BaseSize() > len(raw) {
			t.Fatal("size accounting")
		}
	})
}

func FuzzParseTx(f *testing.F) {
	blocks := readMainnetBlocks(f)
	b, _ := ParseBlock(blocks[170])
	f.Add(b.Txs[1].Raw)
	seg, _ := hex.DecodeString("0100000000010115e180dc28a2327e687facc33f10f2a20da717e5548406f7ae8b4c811072f8560100000000ffffffff0100b4f505000000001976a9141d7cd6c75c2e86f4cbf98eaed221b30bd9a0b92888ac02483045022100df7b7e5cda14ddf91290e02ea10786e03eb11ee36ec02dd862fe9a326bbcb7fd02203f5b4496b667e6e281cc654a2da9e4f08660c620a1051337fa8965f727eb19190121038262a6c6cec93c2d3ecd6c6072efea86d02ff8e3328bbd0242b20af3425990ac00000000")
	f.Add(seg)
	f.Fuzz(func(t *testing.T, raw []byte) {
		tx, err := ParseTx(raw)
		if err != nil {
			return
		}
		var ref bwire.MsgTx
		r := bytes.NewReader(raw)
		if ref.Deserialize(r) == nil && r.Len() == 0 {
			compareWithBtcd(t, tx, &ref)
		}
	})
}

func BenchmarkParseBlock1MB(b *testing.B) {
	raw := bigBlock(b)
	var blk Block
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if err := blk.Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBlock1MBFresh(b *testing.B) {
	raw := bigBlock(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseBlock(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTxID(b *testing.B) {
	blocks := readMainnetBlocks(b)
	blk, _ := ParseBlock(blocks[170])
	raw := blk.Txs[1].Raw
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		_ = DoubleSHA256(raw)
	}
}

// bigBlock builds a ≈1 MB block from real mainnet transactions (header of
// block 14131, transactions repeated): parsing cost only, not validity.
func bigBlock(b testing.TB) []byte {
	blocks := readMainnetBlocks(b)
	var txs [][]byte
	var blk Block
	for _, raw := range blocks[10000:] {
		if err := blk.Parse(raw); err != nil {
			b.Fatal(err)
		}
		for i := range blk.Txs {
			txs = append(txs, bytes.Clone(blk.Txs[i].Raw))
		}
	}
	out := bytes.Clone(blocks[14131][:80])
	var body []byte
	n := 0
	for len(body) < 1_000_000 {
		body = append(body, txs[n%len(txs)]...)
		n++
	}
	out = AppendCompactSize(out, uint64(n))
	return append(out, body...)
}

// TestParseReuseAllocsNothing: re-parsing into a used Block allocates
// nothing, for legacy and segwit transactions alike (the segwit txid's
// intermediate digest once escaped to the heap per transaction).
func TestParseReuseAllocsNothing(t *testing.T) {
	seg, _ := hex.DecodeString("0100000000010115e180dc28a2327e687facc33f10f2a20da717e5548406f7ae8b4c811072f8560100000000ffffffff0100b4f505000000001976a9141d7cd6c75c2e86f4cbf98eaed221b30bd9a0b92888ac02483045022100df7b7e5cda14ddf91290e02ea10786e03eb11ee36ec02dd862fe9a326bbcb7fd02203f5b4496b667e6e281cc654a2da9e4f08660c620a1051337fa8965f727eb19190121038262a6c6cec93c2d3ecd6c6072efea86d02ff8e3328bbd0242b20af3425990ac00000000")
	blocks := readMainnetBlocks(t)
	legacy, _ := ParseBlock(blocks[170])
	raw := append(make([]byte, HeaderSize), 3)
	raw = append(raw, legacy.Txs[1].Raw...)
	raw = append(raw, seg...)
	raw = append(raw, seg...)
	var b Block
	if err := b.Parse(raw); err != nil {
		t.Fatal(err)
	}
	if !b.Txs[1].HasWitness {
		t.Fatal("no segwit transaction parsed")
	}
	if n := testing.AllocsPerRun(20, func() {
		if err := b.Parse(raw); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per re-parse", n)
	}
}

// TestBlockFileNextOwned: NextOwned and Next, interleaved, read the blocks
// of the bundled mainnet file in order, with the offsets Next alone gives,
// and the slices NextOwned returned stay intact while later blocks are read
// (Next's buffer is reused, NextOwned's are the caller's).
func TestBlockFileNextOwned(t *testing.T) {
	data, err := os.ReadFile("../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		t.Fatal(err)
	}
	data = data[:400_000]
	type rec struct {
		hash Hash
		off  int64
	}
	var want []rec
	plain := NewBlockFileReader(bytes.NewReader(data), mainMagic)
	for {
		raw, off, err := plain.Next()
		if err != nil {
			break
		}
		want = append(want, rec{DoubleSHA256(raw[:HeaderSize]), off})
	}
	if len(want) < 100 {
		t.Fatalf("%d blocks read", len(want))
	}
	mixed := NewBlockFileReader(bytes.NewReader(data), mainMagic)
	var owned [][]byte
	var ownedAt []int
	for i := range want {
		next := mixed.Next
		if i%3 != 0 {
			next = mixed.NextOwned
		}
		raw, off, err := next()
		if err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if got := (rec{DoubleSHA256(raw[:HeaderSize]), off}); got != want[i] {
			t.Fatalf("block %d: %v, want %v", i, got, want[i])
		}
		if i%3 != 0 {
			owned, ownedAt = append(owned, raw), append(ownedAt, i)
		}
	}
	for k, raw := range owned {
		if DoubleSHA256(raw[:HeaderSize]) != want[ownedAt[k]].hash {
			t.Fatalf("block %d's owned bytes changed by later reads", ownedAt[k])
		}
	}
}
