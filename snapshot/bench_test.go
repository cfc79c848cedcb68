package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/backends"
	"utxod/params"
	"utxod/testkit/blockgen"
)

// benchCoins is the size of the benchmark's UTXO set
// (UTXOD_SNAPBENCH_COINS, default 200,000; bench/results/snapshot.md
// uses 2,000,000).
func benchCoins() int {
	if v, err := strconv.Atoi(os.Getenv("UTXOD_SNAPBENCH_COINS")); err == nil && v > 0 {
		return v
	}
	return 200_000
}

// benchScript returns an output script of mainnet's UTXO-set mix (shares
// rounded from the 2024–2025 set: P2WPKH, P2PKH, P2TR, P2SH, P2WSH, P2PK,
// the rest bare or odd), distinct per r.
func benchScript(r *rand.Rand) []byte {
	var h [32]byte
	binary.LittleEndian.PutUint64(h[:], r.Uint64())
	binary.LittleEndian.PutUint64(h[8:], r.Uint64())
	binary.LittleEndian.PutUint64(h[16:], r.Uint64())
	switch x := r.IntN(100); {
	case x < 34:
		return append([]byte{0x00, 0x14}, h[:20]...)
	case x < 62:
		return p2pkh(h[:20])
	case x < 82:
		return append([]byte{0x51, 0x20}, h[:]...)
	case x < 93:
		return append(append([]byte{0xa9, 0x14}, h[:20]...), 0x87)
	case x < 97:
		return append([]byte{0x00, 0x20}, h[:]...)
	case x < 98:
		return append(append([]byte{33, 0x02 | h[0]&1}, h[:]...), 0xac)
	default: // bare 1-of-1 multisig
		return append(append([]byte{0x51, 33, 0x02 | h[0]&1}, h[:]...), 0x51, 0xae)
	}
}

// fanoutChain builds a regtest chain whose UTXO set has about coins coins,
// two per transaction (mainnet has ~1.8): 101 anyone-can-spend coinbases,
// then blocks of 5,000 transactions, the first spending a mature coinbase,
// each next one the previous one's change, each leaving two outputs of
// benchScript's mix (up to about 3.5 million coins: the subsidy halves). No signatures: an import of it
// measures the coin store, not script verification.
func fanoutChain(tb testing.TB, coins int) [][]byte {
	tb.Helper()
	p := params.RegTest()
	c, err := blockgen.NewChain(p)
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	parent := c.Genesis
	var blocks [][]byte
	var cbs []*btcwire.MsgTx
	for i := 0; i < 101; i++ {
		tpl := c.Template(parent, nil)
		cbs = append(cbs, tpl.Coinbase())
		parent = tpl.Finish()
		blocks = append(blocks, parent.Raw)
	}
	const perBlock = 5000
	made := 0
	for k := 0; made < coins; k++ {
		prev, idx := cbs[k], uint32(0)
		value := cbs[k].TxOut[0].Value
		tpl := c.Template(parent, nil)
		cbs = append(cbs, tpl.Coinbase()) // block k+102 spends the coinbase at height k+1
		for i := 0; i < perBlock && made < coins; i++ {
			tx := btcwire.NewMsgTx(2)
			tx.AddTxIn(&btcwire.TxIn{PreviousOutPoint: blockgen.Outpoint(prev, idx), Sequence: 0xffffffff})
			a, b := int64(546+r.IntN(20_000)), int64(546+r.IntN(20_000))
			value -= a + b
			tx.AddTxOut(&btcwire.TxOut{Value: a, PkScript: benchScript(r)})
			tx.AddTxOut(&btcwire.TxOut{Value: value, PkScript: []byte{0x51}})
			tx.AddTxOut(&btcwire.TxOut{Value: b, PkScript: benchScript(r)})
			tpl.AddTx(tx)
			prev, idx = tx, 1
			made += 2
		}
		parent = tpl.Finish()
		blocks = append(blocks, parent.Raw)
	}
	return blocks
}

// BenchmarkSnapshot measures, per store, an import of the fan-out chain
// and the dump, verify and load of its UTXO set, in coins per second of
// that set (bench/results/snapshot.md). One iteration is one full round.
func BenchmarkSnapshot(b *testing.B) {
	p := params.RegTest()
	blocks := fanoutChain(b, benchCoins())
	for _, name := range storeNames {
		b.Run(name, func(b *testing.B) {
			skipUnavailable(b, name)
			for range b.N {
				benchRound(b, p, name, blocks)
			}
		})
	}
}

// phase measures the wall time and the process's CPU time (user+system,
// every thread) of fn: on a shared machine the CPU time per coin is the
// steadier figure.
func phase(b *testing.B, fn func()) (wall, cpu float64) {
	cpuNow := func() float64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	c0, t0 := cpuNow(), time.Now()
	fn()
	return time.Since(t0).Seconds(), cpuNow() - c0
}

func benchRound(b *testing.B, p *params.Params, name string, blocks [][]byte) {
	dir := b.TempDir()
	var c *testChain
	importS, importCPU := phase(b, func() {
		c = openChain(b, p, name, dir+"/import")
		connectAll(b, c.cs, blocks)
		if err := c.cs.Flush(); err != nil {
			b.Fatal(err)
		}
	})
	var file []byte
	dumpS, dumpCPU := phase(b, func() { file = dump(b, c.cs, p) })
	rd, err := NewReader(bytes.NewReader(file), p)
	if err != nil {
		b.Fatal(err)
	}
	coins := float64(rd.Metadata().Coins)
	c.close(b)

	var sum *Summary
	verifyS, verifyCPU := phase(b, func() {
		if sum, err = Verify(bytes.NewReader(file), VerifyOptions{Network: p}); err != nil {
			b.Fatal(err)
		}
	})
	h := sum.HashSerialized3
	loadS, loadCPU := phase(b, func() {
		if _, err := Load(context.Background(), bytes.NewReader(file), LoadConfig{Network: p, Backend: name, Datadir: dir + "/loaded",
			ExpectHash: &h, Height: int32(sum.MaxHeight), KVOptions: backends.Options{}}); err != nil {
			b.Fatal(err)
		}
	})
	for _, m := range []struct {
		what      string
		wall, cpu float64
	}{{"import", importS, importCPU}, {"dump", dumpS, dumpCPU}, {"verify", verifyS, verifyCPU}, {"load", loadS, loadCPU}} {
		b.ReportMetric(coins/m.wall, m.what+"-coins/s")
		b.ReportMetric(m.cpu/coins*1e9, m.what+"-cpu-ns/coin")
	}
	b.ReportMetric(coins, "coins")
}

// TestWriteFanoutCorpus writes the fan-out chain as a Core block file to
// $UTXOD_SNAPBENCH_WRITE (skipped when unset), for the whole-process
// figures of bench/results/snapshot.md.
func TestWriteFanoutCorpus(t *testing.T) {
	path := os.Getenv("UTXOD_SNAPBENCH_WRITE")
	if path == "" {
		t.Skip("set UTXOD_SNAPBENCH_WRITE=FILE (and UTXOD_SNAPBENCH_COINS)")
	}
	var out []byte
	magic := params.RegTest().Magic
	for _, raw := range fanoutChain(t, benchCoins()) {
		out = append(out, magic[:]...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(raw)))
		out = append(out, raw...)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchFile is the snapshot of the fan-out chain (built once per run).
func benchFile(b *testing.B) []byte {
	p := params.RegTest()
	c := openChain(b, p, "", "")
	connectAll(b, c.cs, fanoutChain(b, benchCoins()))
	return dump(b, c.cs, p)
}

// BenchmarkVerify is Verify alone on the fan-out chain's snapshot, with
// and without MuHash (coins/s).
func BenchmarkVerify(b *testing.B) {
	file := benchFile(b)
	for _, mu := range []bool{true, false} {
		b.Run(fmt.Sprintf("muhash=%v", mu), func(b *testing.B) {
			var coins uint64
			for range b.N {
				sum, err := Verify(bytes.NewReader(file), VerifyOptions{NoMuHash: !mu})
				if err != nil {
					b.Fatal(err)
				}
				coins = sum.Stats.TxOuts
			}
			b.ReportMetric(float64(coins)*float64(b.N)/b.Elapsed().Seconds(), "coins/s")
		})
	}
}

// BenchmarkLoad is Load alone on the fan-out chain's snapshot per store
// (coins/s).
func BenchmarkLoad(b *testing.B) {
	file := benchFile(b)
	p := params.RegTest()
	sum, err := Verify(bytes.NewReader(file), VerifyOptions{NoMuHash: true})
	if err != nil {
		b.Fatal(err)
	}
	h := sum.HashSerialized3
	for _, name := range storeNames {
		b.Run(name, func(b *testing.B) {
			skipUnavailable(b, name)
			for range b.N {
				dir := b.TempDir()
				if _, err := Load(context.Background(), bytes.NewReader(file), LoadConfig{Network: p, Backend: name, Datadir: dir + "/d",
					ExpectHash: &h, Height: int32(sum.MaxHeight)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sum.Stats.TxOuts)*float64(b.N)/b.Elapsed().Seconds(), "coins/s")
		})
	}
}

// BenchmarkDump is Dump alone from each store holding the fan-out chain's
// set (loaded from its snapshot), into memory (coins/s).
func BenchmarkDump(b *testing.B) {
	file := benchFile(b)
	p := params.RegTest()
	sum, err := Verify(bytes.NewReader(file), VerifyOptions{NoMuHash: true})
	if err != nil {
		b.Fatal(err)
	}
	h := sum.HashSerialized3
	for _, name := range storeNames {
		b.Run(name, func(b *testing.B) {
			skipUnavailable(b, name)
			dir := b.TempDir() + "/d"
			if _, err := Load(context.Background(), bytes.NewReader(file), LoadConfig{Network: p, Backend: name, Datadir: dir,
				ExpectHash: &h, Height: int32(sum.MaxHeight)}); err != nil {
				b.Fatal(err)
			}
			c := openChain(b, p, name, dir)
			var out bytes.Buffer
			out.Grow(len(file))
			b.ResetTimer()
			for range b.N {
				out.Reset()
				snap, err := c.cs.SnapshotCoins()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Dump(&out, Metadata{MessageStart: p.Magic, BaseHash: snap.Stats.BestBlock, Coins: snap.Stats.TxOuts}, snap.Scanner); err != nil {
					b.Fatal(err)
				}
				snap.Close()
			}
			b.StopTimer()
			if !bytes.Equal(out.Bytes(), file) {
				b.Fatal("dump differs")
			}
			b.ReportMetric(float64(sum.Stats.TxOuts)*float64(b.N)/b.Elapsed().Seconds(), "coins/s")
		})
	}
}
