package script

import (
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"

	"utxod/utxo"
	"utxod/wire"
)

// Mainnet block 277,647 and the outputs it spends
// (testdata/mainnet/277647.{dat,utxostore}.bz2, from btcd v0.24.2
// blockchain/testdata; see testdata/README.md).

type outpoint struct {
	h wire.Hash
	i uint32
}

// deserializeVLQ is btcd's blockchain.deserializeVLQ (compress.go).
func deserializeVLQ(b []byte) (uint64, int) {
	var n uint64
	var size int
	for _, v := range b {
		size++
		n = (n << 7) | uint64(v&0x7f)
		if v&0x80 != 0x80 {
			break
		}
		n++
	}
	return n, size
}

// decompressScript is btcd's decompressScript (Core's script compression):
// special forms 0-5, else VLQ(len+6) followed by the script.
func decompressScript(b []byte) ([]byte, int, error) {
	code, n := deserializeVLQ(b)
	if n == 0 {
		return nil, 0, errors.New("empty script")
	}
	need := func(k int) error {
		if len(b) < n+k {
			return errors.New("short compressed script")
		}
		return nil
	}
	switch code {
	case 0: // P2PKH
		if err := need(20); err != nil {
			return nil, 0, err
		}
		s := append([]byte{0x76, 0xa9, 0x14}, b[n:n+20]...)
		return append(s, 0x88, 0xac), n + 20, nil
	case 1: // P2SH
		if err := need(20); err != nil {
			return nil, 0, err
		}
		s := append([]byte{0xa9, 0x14}, b[n:n+20]...)
		return append(s, 0x87), n + 20, nil
	case 2, 3: // compressed P2PK
		if err := need(32); err != nil {
			return nil, 0, err
		}
		s := append([]byte{0x21, byte(code)}, b[n:n+32]...)
		return append(s, 0xac), n + 32, nil
	case 4, 5: // uncompressed P2PK, stored compressed
		if err := need(32); err != nil {
			return nil, 0, err
		}
		key, err := btcec.ParsePubKey(append([]byte{byte(code - 2)}, b[n:n+32]...))
		if err != nil {
			return nil, 0, err
		}
		s := append([]byte{0x41}, key.SerializeUncompressed()...)
		return append(s, 0xac), n + 32, nil
	}
	size := int(code - 6)
	if err := need(size); err != nil {
		return nil, 0, err
	}
	return append([]byte(nil), b[n:n+size]...), n + size, nil
}

// loadUtxoStore decodes btcd's utxostore test format (loadUtxoView in
// btcd's blockchain/common_test.go): repeated <hash 32><index LE32><len
// LE32><entry>, entry = VLQ(height<<1 | coinbase) then a compressed txout
// (VLQ compressed amount, compressed script; chainio.go
// deserializeUtxoEntry).
func loadUtxoStore(t testing.TB, path string) map[outpoint]wire.TxOut {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(bzip2.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	m := map[outpoint]wire.TxOut{}
	for off := 0; off < len(data); {
		if len(data)-off < 40 {
			t.Fatalf("utxostore: truncated record at %d", off)
		}
		var op outpoint
		copy(op.h[:], data[off:off+32])
		op.i = binary.LittleEndian.Uint32(data[off+32:])
		n := int(binary.LittleEndian.Uint32(data[off+36:]))
		off += 40
		if len(data)-off < n {
			t.Fatalf("utxostore: truncated entry at %d", off)
		}
		e := data[off : off+n]
		off += n
		_, k := deserializeVLQ(e) // height<<1 | coinbase
		amt, k2 := deserializeVLQ(e[k:])
		script, _, err := decompressScript(e[k+k2:])
		if err != nil {
			t.Fatalf("utxostore: %v", err)
		}
		// btcd's decompressTxOutAmount is Core's DecompressAmount.
		m[op] = wire.TxOut{Value: int64(utxo.DecompressAmount(amt)), Script: script}
	}
	return m
}

// loadBlock277647 returns the block and, for every transaction, the
// outputs its inputs spend (nil for the coinbase).
func loadBlock277647(t testing.TB) (*wire.Block, [][]wire.TxOut) {
	f, err := os.Open("../testdata/mainnet/277647.dat.bz2")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := wire.NewBlockFileReader(bzip2.NewReader(f), [4]byte{0xf9, 0xbe, 0xb4, 0xd9})
	raw, _, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	blk, err := wire.ParseBlock(append([]byte(nil), raw...))
	if err != nil {
		t.Fatal(err)
	}
	view := loadUtxoStore(t, "../testdata/mainnet/277647.utxostore.bz2")
	prevs := make([][]wire.TxOut, len(blk.Txs))
	for ti := range blk.Txs {
		tx := &blk.Txs[ti]
		if ti > 0 {
			for _, in := range tx.Inputs {
				p, ok := view[outpoint{in.PrevHash, in.PrevIndex}]
				if !ok {
					t.Fatalf("tx %d: missing prevout %v:%d", ti, in.PrevHash, in.PrevIndex)
				}
				prevs[ti] = append(prevs[ti], p)
			}
		}
		for oi, o := range tx.Outputs { // outputs spent later in the block
			view[outpoint{tx.TxID, uint32(oi)}] = o
		}
	}
	return blk, prevs
}

// TestMainnetBlock277647 verifies every input of the block with the flags
// in force at that height (P2SH; BIP66 DERSIG starts at 363,725) and with
// Core master's GetBlockScriptFlags base (P2SH|WITNESS|TAPROOT), then
// checks that flipping one byte inside any signature fails the input.
func TestMainnetBlock277647(t *testing.T) {
	blk, prevs := loadBlock277647(t)
	forEachEngine(t, func(t *testing.T, ne namedEngine) {
		e := ne.e
		if ne.btcd {
			e = NewBtcdEngine(WithSigCache(1000))
		}
		mainnetBlock277647(t, e, blk, prevs)
	})
}

func mainnetBlock277647(t *testing.T, e Engine, blk *wire.Block, prevs [][]wire.TxOut) {
	inputs, flipped := 0, 0
	for ti := 1; ti < len(blk.Txs); ti++ {
		tx := &blk.Txs[ti]
		v, err := e.Prepare(tx, prevs[ti])
		if err != nil {
			t.Fatal(err)
		}
		for i := range tx.Inputs {
			for _, f := range []Flags{P2SH, P2SH | Witness | Taproot} {
				if err := v.VerifyInput(i, f); err != nil {
					t.Fatalf("tx %d input %d flags %v: %v", ti, i, f, err)
				}
			}
			inputs++
		}
		// Flip the last byte of S in each signature push of each input.
		for i := range tx.Inputs {
			s := tx.Inputs[i].Script
			for pc := 0; pc < len(s); {
				op, data, next, ok := getOp(s, pc)
				if !ok {
					break
				}
				if op >= 1 && op <= 0x4e && len(data) >= 9 && data[0] == 0x30 && int(data[1])+3 == len(data) {
					mod := append([]byte(nil), s...)
					mod[next-2] ^= 0x01 // last byte of the DER signature
					r := fromTx(tx)
					r.ins[i].Script = mod
					tx2 := mustParse(t, r)
					v2, err := e.Prepare(tx2, prevs[ti])
					if err != nil {
						t.Fatal(err)
					}
					if err := v2.VerifyInput(i, P2SH); err == nil {
						t.Errorf("tx %d input %d: flipped signature byte still verifies", ti, i)
					} else if RejectReason(err) == "" {
						t.Error("empty reject reason")
					}
					// The other inputs are unaffected (scriptSigs are not signed).
					for j := range tx.Inputs {
						if j != i {
							if err := v2.VerifyInput(j, P2SH); err != nil {
								t.Errorf("tx %d input %d broke after flipping input %d: %v", ti, j, i, err)
							}
						}
					}
					flipped++
				}
				pc = next
			}
		}
	}
	t.Logf("block %v: %d txs, %d inputs verified, %d signatures flipped and rejected",
		blk.Hash, len(blk.Txs), inputs, flipped)
	if inputs == 0 || flipped < inputs {
		t.Errorf("inputs %d, flipped %d", inputs, flipped)
	}
}

// TestConcurrentVerify runs every input of a multi-input transaction of
// block 277,647 from several goroutines on one TxVerifier (run with -race).
func TestConcurrentVerify(t *testing.T) {
	blk, prevs := loadBlock277647(t)
	best := 1
	for ti := 1; ti < len(blk.Txs); ti++ {
		if len(blk.Txs[ti].Inputs) > len(blk.Txs[best].Inputs) {
			best = ti
		}
	}
	tx := &blk.Txs[best]
	forEachEngine(t, func(t *testing.T, ne namedEngine) {
		e := ne.e
		if ne.btcd {
			e = NewBtcdEngine(WithSigCache(100))
		} else {
			e = NewEngine(WithSigVerifier(ne.e.(*NativeEngine).Verifier()), WithSigCacheEntries(100))
		}
		concurrentVerify(t, e, tx, prevs[best], best)
	})
}

func concurrentVerify(t *testing.T, e Engine, tx *wire.Tx, prevs []wire.TxOut, best int) {
	v, err := e.Prepare(tx, prevs)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := range tx.Inputs {
				if err := v.VerifyInput(i, P2SH|Witness|Taproot); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	t.Logf("tx %d: %d inputs × 4 goroutines", best, len(tx.Inputs))
}
