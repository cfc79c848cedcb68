package storebench

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"utxod/backends"
	"utxod/utxo"
	"utxod/wire"
)

// SampleResult describes a datadir's coin records and a random sample of
// its outpoints (one per sampled txid).
type SampleResult struct {
	Backend      string  `json:"backend"`
	Records      int64   `json:"records"` // `c` keys (txids with unspent outputs)
	Outputs      int64   `json:"outputs"` // unspent outputs
	CoinKeyBytes int64   `json:"coin_key_bytes"`
	CoinValBytes int64   `json:"coin_value_bytes"`
	OtherBytes   int64   `json:"other_bytes"`                   // keys+values of every other prefix (undo, blocks, index, meta)
	LogicalPerOp float64 `json:"coin_logical_bytes_per_output"` // (keys+values of `c`)/outputs
	Sampled      int     `json:"sampled"`
}

// Sample scans the store in dir and writes up to n random outpoints (36
// bytes each: txid, vout LE) to out.
func Sample(backend, dir string, n int, seed uint64, out string) (*SampleResult, error) {
	kv, err := backends.Open(backend, dir, backends.Options{})
	if err != nil {
		return nil, err
	}
	defer kv.Close()
	it, err := kv.NewIterator(backends.Range{})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	rng := rand.New(rand.NewPCG(seed, 1))
	res := &SampleResult{Backend: backend}
	var sample []utxo.Outpoint
	var outs []utxo.IndexedCoin
	var arena []byte
	for it.Next() {
		k, v := it.Key(), it.Value()
		if len(k) != 33 || k[0] != 'c' {
			res.OtherBytes += int64(len(k) + len(v))
			continue
		}
		res.Records++
		res.CoinKeyBytes += int64(len(k))
		res.CoinValBytes += int64(len(v))
		_, outs, arena, err = utxo.DecodeRecord(v, outs[:0], arena[:0])
		if err != nil {
			return nil, err
		}
		res.Outputs += int64(len(outs))
		op := func() utxo.Outpoint {
			var h wire.Hash
			copy(h[:], k[1:])
			return utxo.Outpoint{Hash: h, Index: outs[rng.IntN(len(outs))].Index}
		}
		if len(sample) < n {
			sample = append(sample, op())
		} else if j := rng.Int64N(res.Records); j < int64(n) {
			sample[j] = op()
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	rng.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	buf := make([]byte, 0, 36*len(sample))
	for _, op := range sample {
		buf = append(buf, op.Hash[:]...)
		buf = binary.LittleEndian.AppendUint32(buf, op.Index)
	}
	res.Sampled = len(sample)
	if res.Outputs > 0 {
		res.LogicalPerOp = float64(res.CoinKeyBytes+res.CoinValBytes) / float64(res.Outputs)
	}
	return res, os.WriteFile(out, buf, 0o644)
}

// ReadResult is one read measurement: cs.Coin over every sampled outpoint,
// Passes times, in a process whose coins cache starts empty.
type ReadResult struct {
	Backend        string    `json:"backend"`
	Sampled        int       `json:"sampled"`
	PageCacheDrop  bool      `json:"page_cache_dropped"`
	OpenMs         float64   `json:"open_ms"`
	PassNsPerOp    []float64 `json:"pass_ns_per_op"` // pass 1 = cold, later passes = cached
	ColdNsPerOp    float64   `json:"cold_ns_per_op"`
	CachedNsPerOp  float64   `json:"cached_ns_per_op"`
	CacheBytesWarm int64     `json:"cache_bytes_warm"`
}

// Read opens the datadir (coins cache empty), optionally evicts its files
// from the OS page cache first (posix_fadvise DONTNEED: only these files,
// no root needed), and reads every sampled outpoint passes times.
func Read(network, backend, dir, samplePath string, cacheMB, passes int, dropPageCache bool) (*ReadResult, error) {
	raw, err := os.ReadFile(samplePath)
	if err != nil {
		return nil, err
	}
	ops := make([]utxo.Outpoint, len(raw)/36)
	for i := range ops {
		copy(ops[i].Hash[:], raw[36*i:])
		ops[i].Index = binary.LittleEndian.Uint32(raw[36*i+32:])
	}
	if dropPageCache {
		if err := DropPageCache(dir); err != nil {
			return nil, err
		}
	}
	res := &ReadResult{Backend: backend, Sampled: len(ops), PageCacheDrop: dropPageCache}
	t := time.Now()
	cs, kv, store, err := newChainstate(network, backend, dir, cacheMB)
	if err != nil {
		return nil, err
	}
	defer kv.Close()
	defer store.Close()
	res.OpenMs = ms(time.Since(t))
	runtime.GC()
	for pass := 0; pass < max(passes, 2); pass++ {
		t := time.Now()
		for _, op := range ops {
			_, found, err := cs.Coin(op)
			if err != nil {
				return nil, err
			}
			if !found {
				return nil, fmt.Errorf("storebench: sampled %s:%d not found", op.Hash, op.Index)
			}
		}
		res.PassNsPerOp = append(res.PassNsPerOp, float64(time.Since(t).Nanoseconds())/float64(len(ops)))
	}
	res.ColdNsPerOp = res.PassNsPerOp[0]
	res.CachedNsPerOp = res.PassNsPerOp[len(res.PassNsPerOp)-1]
	res.CacheBytesWarm = cs.CacheBytes()
	return res, nil
}

// DropPageCache asks the kernel to drop the cached pages of every regular
// file under dir (fdatasync first so that dirty pages can go).
func DropPageCache(dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_ = unix.Fdatasync(int(f.Fd()))
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
}
