package wire

import (
	"crypto/sha256"
	"os"
	"testing"
)

// BenchmarkCorpusTxIDs measures, on a generated corpus, how much CPU the
// txid/wtxid hashing of a whole import costs: one op re-hashes every
// transaction of every block exactly as parseTx does (SHA-256d of the raw
// bytes; for segwit transactions also of the stripped serialization), so
// ns/op is the corpus' total hashing time. Divided by the CPU seconds of
// `utxod import` on the same file it bounds what batching the txid hashes
// into SIMD lanes could ever save (bench/results/merkle.md).
//
//	UTXOD_TXID_CORPUS=/tmp/early-100k.dat go test -run '^$' -bench CorpusTxIDs -count 10 ./wire/
//
// The corpus is a chaingen file (regtest framing); the benchmark is skipped
// without one.
func BenchmarkCorpusTxIDs(b *testing.B) {
	raws := corpusBlocks(b)
	// Collect what parseTx hashes: the raw bytes of every transaction and,
	// for segwit ones, the three ranges of the stripped serialization.
	type job struct {
		raw         []byte
		segwit      bool
		bodyEnd     int
		txid, wtxid Hash
	}
	var jobs []job
	var txs, segwitTxs, hashedBytes int
	for _, raw := range raws {
		blk, err := ParseBlock(raw)
		if err != nil {
			b.Fatal(err)
		}
		for i := range blk.Txs {
			tx := &blk.Txs[i]
			j := job{raw: tx.Raw, segwit: tx.HasWitness, txid: tx.TxID, wtxid: tx.WTxID}
			txs++
			hashedBytes += len(tx.Raw)
			if tx.HasWitness {
				segwitTxs++
				// version(4) marker flag(2) body … witnesses locktime(4)
				j.bodyEnd = len(tx.Raw) - 4 - tx.witBytes + 2
				hashedBytes += 4 + (j.bodyEnd - 6) + 4
			}
			jobs = append(jobs, j)
		}
	}
	h := sha256.New()
	hashAll := func(check bool) {
		for i := range jobs {
			j := &jobs[i]
			if !j.segwit {
				id := DoubleSHA256(j.raw)
				if check && id != j.txid {
					b.Fatalf("tx %d: txid mismatch", i)
				}
				continue
			}
			h.Reset()
			h.Write(j.raw[:4])
			h.Write(j.raw[6:j.bodyEnd])
			h.Write(j.raw[len(j.raw)-4:])
			var first [32]byte
			h.Sum(first[:0])
			id := Hash(sha256.Sum256(first[:]))
			wid := DoubleSHA256(j.raw)
			if check && (id != j.txid || wid != j.wtxid) {
				b.Fatalf("tx %d: txid/wtxid mismatch", i)
			}
		}
	}
	hashAll(true)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		hashAll(false)
	}
	b.ReportMetric(float64(txs), "txs")
	b.ReportMetric(float64(segwitTxs), "segwit-txs")
	b.ReportMetric(float64(hashedBytes), "hashed-bytes")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(txs), "ns/tx")
}

// BenchmarkCorpusParse parses every block of the same corpus (txid and
// wtxid hashing included), for comparison with BenchmarkCorpusTxIDs.
func BenchmarkCorpusParse(b *testing.B) {
	raws := corpusBlocks(b)
	var blk Block
	b.ReportAllocs()
	for b.Loop() {
		for _, raw := range raws {
			if err := blk.Parse(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// corpusBlocks reads the blocks of the chaingen corpus named by
// UTXOD_TXID_CORPUS (regtest framing), skipping the benchmark without one.
func corpusBlocks(b *testing.B) [][]byte {
	path := os.Getenv("UTXOD_TXID_CORPUS")
	if path == "" {
		b.Skip("set UTXOD_TXID_CORPUS to a chaingen corpus (regtest framing)")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	raws, err := ReadAllBlocks(f, [4]byte{0xfa, 0xbf, 0xb5, 0xda})
	if err != nil {
		b.Fatal(err)
	}
	return raws
}
