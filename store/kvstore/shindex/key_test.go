package shindex

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"utxod/backends"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/wire"
)

// TestDiskKeyOrder: keys on disk order as their rows do (id, height, txid,
// vout as numbers) across every width of the vout, and parse back.
func TestDiskKeyOrder(t *testing.T) {
	vouts := []uint32{0, 1, 127, 128, 255, 16383, 16384, 16512, 1<<21 - 1, 1 << 21, 1 << 24, math.MaxUint32}
	var keys []rowKey
	for _, id := range []uint64{0, 7, math.MaxUint64} {
		for _, h := range []uint32{0, 1, 880_000, MaxHeight} {
			for _, txid := range []wire.Hash{{}, {0xff}} {
				for _, v := range vouts {
					keys = append(keys, makeRowKeyID(id, h, utxo.Outpoint{Hash: txid, Index: v}))
				}
			}
		}
	}
	var prev []byte
	for i, k := range keys {
		d := appendDiskKey(nil, &k)
		if back, err := parseDiskKey(d); err != nil || back != k {
			t.Fatalf("%x: parsed %x, %v; want %x", d, back, err, k)
		}
		if i > 0 && bytes.Compare(prev, d) >= 0 {
			t.Fatalf("key %x after %x: rows %x, %x", d, prev, keys[i-1], k)
		}
		prev = d
	}
}

// TestDiskKeyRefused: a vout not in its shortest form, a wrong length or
// prefix are not keys.
func TestDiskKeyRefused(t *testing.T) {
	k := makeRowKeyID(1, 2, utxo.Outpoint{Index: 5})
	good := appendDiskKey(nil, &k)
	body := good[:len(good)-1]
	for name, b := range map[string][]byte{
		"2-byte 5":     append(bytes.Clone(body), 0x80, 5),
		"3-byte 200":   append(bytes.Clone(body), 0xc0, 0, 200),
		"5-byte 20000": append(bytes.Clone(body), 0xe0, 0, 0, 0x4e, 0x20),
		"cut vout":     append(bytes.Clone(body), 0x81),
		"no vout":      bytes.Clone(body),
		"extra byte":   append(bytes.Clone(good), 0),
		"bad tag":      append(bytes.Clone(body), 0xf0, 0, 0, 0, 0),
		"prefix":       append([]byte{'T'}, good[1:]...),
	} {
		if _, err := parseDiskKey(b); err == nil {
			t.Errorf("%s: %x parsed", name, b)
		}
	}
}

func FuzzParseDiskKey(f *testing.F) {
	k := makeRowKeyID(3, 800_000, utxo.Outpoint{Index: 20_000})
	f.Add(appendDiskKey(nil, &k))
	f.Add([]byte{'S'})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := parseDiskKey(b)
		if err != nil {
			return
		}
		if d := appendDiskKey(nil, &k); !bytes.Equal(d, b) {
			t.Fatalf("%x parsed to %x, written back as %x", b, k, d)
		}
	})
}

// TestFormatRefused: an index of format 1 (rows keyed by the whole
// scripthash) is refused with the commands that rebuild it, and Drop
// removes it.
func TestFormatRefused(t *testing.T) {
	kv := testchain.OpenKV(t, "pebble", filepath.Join(t.TempDir(), "kv"))
	defer kv.Close()
	b := backends.NewBatch()
	v1 := append([]byte{1, byte(Complete)}, make([]byte, 44)...)
	b.Put(metaKey, v1)
	b.Put(append([]byte{Prefix}, make([]byte, 72)...), []byte{2})
	if err := kv.Write(b, backends.Sync); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadMeta(kv); !errors.Is(err, ErrFormat) {
		t.Fatalf("ReadMeta of format 1: %v", err)
	}
	if _, err := Open(kv); !errors.Is(err, ErrFormat) {
		t.Fatalf("Open of format 1: %v", err)
	}
	if n, err := Drop(t.Context(), kv, nil); err != nil || n != 1 {
		t.Fatalf("Drop: %d rows, %v", n, err)
	}
	if _, ok, err := ReadMeta(kv); ok || err != nil {
		t.Fatalf("after Drop: meta %v, %v", ok, err)
	}
}
