package spindex

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"utxod/wire"
)

// TestRowBytesOnPebble measures the index's bytes per tweak row on pebble
// (bench/results/silentpayments.md): SPINDEX_SIZE_ROWS rows of the real
// encoding (random tweaks and txids, 1–3 taproot outputs, values log-uniform
// from 330 sat to 1 BTC) and a block key per 2,000 rows, in heights order,
// flushed and compacted; the .sst bytes over the rows. Skipped unless
// SPINDEX_SIZE_ROWS is set.
func TestRowBytesOnPebble(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SPINDEX_SIZE_ROWS"))
	if n <= 0 {
		t.Skip("set SPINDEX_SIZE_ROWS")
	}
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	perBlock := 2000
	var raw int64
	b := db.NewBatch()
	var val []byte
	for i := 0; i < n; i++ {
		h := uint32(700_000 + i/perBlock)
		if i%perBlock == 0 {
			var hash wire.Hash
			for j := range hash {
				hash[j] = byte(rng.Uint32())
			}
			k := blockKey(h)
			b.Set(k, hash[:], nil)
			raw += int64(len(k) + 32)
		}
		var txid wire.Hash
		for j := range txid {
			txid[j] = byte(rng.Uint32())
		}
		r := row{maxValue: int64(330 * math.Pow(1e8/330, rng.Float64()))}
		r.tweak[0] = 2 + byte(rng.IntN(2))
		for j := 1; j < len(r.tweak); j++ {
			r.tweak[j] = byte(rng.Uint32())
		}
		outs := 1 + rng.IntN(3)
		for j := 0; j < outs; j++ {
			r.outs = append(r.outs, uint32(j+rng.IntN(2)))
		}
		r.unspent = uint32(rng.IntN(outs + 1))
		k := makeRowKey(h, txid)
		val = encodeRow(val[:0], &r)
		b.Set(k.full(), val, nil)
		raw += int64(len(k.full()) + len(val))
		if b.Len() > 4<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				t.Fatal(err)
			}
			b = db.NewBatch()
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(t.Context(), []byte{Prefix}, []byte{Prefix + 1}, true); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var sst int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".sst") {
			if fi, err := d.Info(); err == nil {
				sst += fi.Size()
			}
		}
		return nil
	})
	t.Logf("%d rows: %.1f bytes of key and value a row, %.1f bytes of .sst a row on pebble", n, float64(raw)/float64(n), float64(sst)/float64(n))
}
