package utxo

import (
	"bytes"
	"encoding/hex"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// Core's coin_serialization vectors (src/test/coins_tests.cpp): a Coin
// serializes as VARINT(height<<1|coinbase) ‖ VARINT(CompressAmount(value)) ‖
// compressed script. A v5 record's header is that first VARINT and each
// payload is the rest, so a one-output record must embed Core's bytes.
func TestRecordCoreCoinVectors(t *testing.T) {
	p2pkh := func(h string) []byte {
		return append(append([]byte{opDup, opHash160, 20}, mustHex(t, h)...), opEqualVerify, opCheckSig)
	}
	for _, tc := range []struct {
		core string
		coin Coin
		code int // bytes of the header VARINT within core
	}{
		{"97f23c835800816115944e077fe7c803cfa57f29b36bf87c1d35", Coin{Value: 60000000000, Height: 203998, Script: p2pkh("816115944e077fe7c803cfa57f29b36bf87c1d35")}, 3},
		{"8ddf77bbd123008c988f1a4a4de2161e0f50aac7f17e7f9555caa4", Coin{Value: 110397, Height: 120891, Coinbase: true, Script: p2pkh("8c988f1a4a4de2161e0f50aac7f17e7f9555caa4")}, 3},
		{"000006", Coin{}, 1},
	} {
		core := mustHex(t, tc.core)
		rec, err := EncodeRecord(nil, []IndexedCoin{{Index: 0, Coin: tc.coin}})
		if err != nil {
			t.Fatal(err)
		}
		payload := core[tc.code:]
		want := append([]byte{}, core[:tc.code]...)
		want = append(want, 1, 0, byte(len(payload))) // n=1, gap=vout 0, len
		want = append(want, payload...)
		if !bytes.Equal(rec, want) {
			t.Errorf("record %x, want %x (Core coin %s)", rec, want, tc.core)
		}
		got, err := DecodeRecord(rec, nil)
		if err != nil || len(got) != 1 || !coinEqual(got[0].Coin, tc.coin) {
			t.Errorf("decode %s: %+v %v", tc.core, got, err)
		}
	}
}

func coinEqual(a, b Coin) bool {
	return a.Value == b.Value && a.Height == b.Height && a.Coinbase == b.Coinbase && bytes.Equal(a.Script, b.Script)
}

// randScript draws from the shapes the codec distinguishes.
func randScript(r *rand.Rand) []byte {
	key1, _ := hex.DecodeString("0496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858ee")
	rb := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	switch r.IntN(9) {
	case 0:
		return append(append([]byte{opDup, opHash160, 20}, rb(20)...), opEqualVerify, opCheckSig)
	case 1:
		return append(append([]byte{opHash160, 20}, rb(20)...), opEqual)
	case 2:
		return append(append([]byte{33, byte(2 + r.IntN(2))}, rb(32)...), opCheckSig)
	case 3:
		return append(append([]byte{65}, key1...), opCheckSig)
	case 4:
		return append(append([]byte{65, 4}, rb(64)...), opCheckSig) // almost surely off-curve
	case 5:
		return nil
	case 6:
		return rb(r.IntN(300))
	case 7:
		return append([]byte{0x00, 0x20}, rb(32)...) // P2WSH, raw
	default:
		return rb(1 + r.IntN(40))
	}
}

func randValue(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return MaxMoney
	case 2:
		return int64(r.IntN(100)) * 100_000_000
	}
	return r.Int64N(MaxMoney)
}

// Random add/remove sequences against a plain map model: after every
// operation the record decodes to exactly the model's outputs, RecordGet
// agrees for present and absent vouts, and re-encoding from the model gives
// the same bytes (canonical form).
func TestRecordAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := 0; round < 30; round++ {
		height := r.Uint32()
		coinbase := r.IntN(2) == 0
		model := map[uint32]Coin{}
		var rec []byte
		voutRange := []uint32{8, 200, 70000, 1<<32 - 1}[r.IntN(4)]
		for step := 0; step < 60; step++ {
			vout := uint32(r.Uint64N(uint64(voutRange) + 1))
			if r.IntN(3) == 0 && len(model) > 0 {
				// Remove an existing vout (sometimes an absent one).
				if r.IntN(4) != 0 {
					keys := slices.Sorted(maps.Keys(model))
					vout = keys[r.IntN(len(keys))]
				}
				next, removed, found, err := RecordRemove(nil, rec, vout)
				if err != nil {
					t.Fatal(err)
				}
				want, ok := model[vout]
				if found != ok || (ok && !coinEqual(removed, want)) {
					t.Fatalf("remove %d: found %v coin %+v, model %v %+v", vout, found, removed, ok, want)
				}
				if ok {
					delete(model, vout)
					rec = next
				}
			} else {
				c := Coin{Value: randValue(r), Height: height, Coinbase: coinbase, Script: randScript(r)}
				next, err := RecordAdd(nil, rec, vout, c)
				if _, dup := model[vout]; dup {
					if !errors.Is(err, ErrRecordDuplicate) {
						t.Fatalf("duplicate add %d: %v", vout, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				model[vout] = c
				rec = next
			}
			checkRecordModel(t, rec, model, voutRange)
			if len(rec) > 0 {
				checkValidAgrees(t, rec)
			}
		}
	}
}

func checkRecordModel(t *testing.T, rec []byte, model map[uint32]Coin, voutRange uint32) {
	t.Helper()
	if len(model) == 0 {
		if len(rec) != 0 {
			t.Fatalf("empty model but record %x", rec)
		}
		return
	}
	got, err := DecodeRecord(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(model))
	if len(got) != len(keys) {
		t.Fatalf("decoded %d outputs, model %d", len(got), len(keys))
	}
	want := make([]IndexedCoin, len(keys))
	for i, k := range keys {
		want[i] = IndexedCoin{k, model[k]}
		if got[i].Index != k || !coinEqual(got[i].Coin, model[k]) {
			t.Fatalf("output %d: got %d %+v, want %d %+v", i, got[i].Index, got[i].Coin, k, model[k])
		}
	}
	// Into an arena that already holds bytes and is too small: appended
	// after them, the same coins.
	arena := append(make([]byte, 0, 5), 1, 2, 3)
	viaArena, arena, err := DecodeRecordArena(rec, nil, arena)
	if err != nil || len(viaArena) != len(got) || !bytes.Equal(arena[:3], []byte{1, 2, 3}) {
		t.Fatalf("DecodeRecordArena: %d outputs, %v, arena prefix %x", len(viaArena), err, arena[:3])
	}
	for i := range got {
		if viaArena[i].Index != got[i].Index || !coinEqual(viaArena[i].Coin, got[i].Coin) {
			t.Fatalf("DecodeRecordArena output %d: %+v, DecodeRecord %+v", i, viaArena[i], got[i])
		}
	}
	for _, i := range []int{0, len(keys) / 2, len(keys) - 1} {
		k := keys[i]
		c, found, err := RecordGet(rec, k)
		if err != nil || !found || !coinEqual(c, model[k]) {
			t.Fatalf("RecordGet(%d): %+v %v %v", k, c, found, err)
		}
	}
	if n, err := RecordLen(rec); err != nil || n != len(keys) {
		t.Fatalf("RecordLen %d %v", n, err)
	}
	absent := keys[len(keys)-1] + 1
	if absent != 0 && absent <= voutRange {
		if _, found, err := RecordGet(rec, absent); found || err != nil {
			t.Fatalf("RecordGet(absent %d): %v %v", absent, found, err)
		}
	}
	enc, err := EncodeRecord(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, rec) {
		t.Fatalf("incremental record %x != fresh encoding %x", rec, enc)
	}
}

func TestRecordEncodeErrors(t *testing.T) {
	c := Coin{Value: 1, Height: 5}
	for name, outs := range map[string][]IndexedCoin{
		"empty":          nil,
		"unsorted":       {{2, c}, {1, c}},
		"duplicate":      {{1, c}, {1, c}},
		"mixed height":   {{1, c}, {2, Coin{Value: 1, Height: 6}}},
		"mixed coinbase": {{1, c}, {2, Coin{Value: 1, Height: 5, Coinbase: true}}},
		"negative value": {{1, Coin{Value: -1}}},
		"above max":      {{1, Coin{Value: MaxMoney + 1}}},
		"long script":    {{1, Coin{Script: make([]byte, MaxScriptSize+1)}}},
	} {
		dst := []byte{9}
		got, err := EncodeRecord(dst, outs)
		if !errors.Is(err, ErrRecordCoin) || !bytes.Equal(got, dst) {
			t.Errorf("%s: %x %v", name, got, err)
		}
	}
	rec, _ := EncodeRecord(nil, []IndexedCoin{{1, c}})
	if _, err := RecordAdd(nil, rec, 2, Coin{Value: 1, Height: 6}); !errors.Is(err, ErrRecordCoin) {
		t.Errorf("add with other height: %v", err)
	}
	if _, err := RecordAdd(nil, rec, 1, c); !errors.Is(err, ErrRecordDuplicate) {
		t.Errorf("add duplicate: %v", err)
	}
	// MaxScriptSize itself is fine.
	if _, err := EncodeRecord(nil, []IndexedCoin{{0, Coin{Script: make([]byte, MaxScriptSize)}}}); err != nil {
		t.Errorf("MaxScriptSize script: %v", err)
	}
}

// Non-canonical inputs, each built by hand from the format in
// docs/formats.md, must fail with ErrNonCanonical.
func TestRecordRejectsNonCanonical(t *testing.T) {
	h20 := "abababababababababababababababababababab"
	offX := "0000000000000000000000000000000000000000000000000000000000000005"
	for _, tc := range []struct{ name, hex string }{
		{"empty input", ""},
		{"header only", "00"},
		{"zero entries", "0000"},
		{"truncated header varint", "80"},
		{"height beyond 2^32", "9efefeff00" + "01" + "0002" + "0006"}, // code 2^33
		{"count larger than data allows", "0005" + "0002" + "0006"},
		{"trailing byte", "0001" + "0002" + "0006" + "00"},
		{"payload shorter than directory says", "0001" + "0003" + "0006"},
		{"payload length 1", "0001" + "0001" + "00"},
		{"payload length 0", "0001" + "0000"},
		{"duplicate vout impossible by gap but vout overflow", "0002" + "8efefefe7f02" + "0002" + "0006" + "0006"},
		{"first vout beyond 2^32-1", "0001" + "8efefeff00" + "02" + "0006"},
		{"non-canonical amount (overflowing decompression)", "0001" + "000b" + "80fefefefefefefefe7f" + "06"},
		{"amount above MAX_MONEY", "0001" + "0009" + "a0c8adb1d183ff01" + "06"},
		{"raw script longer than data", "0001" + "0002" + "0007"},
		{"raw script shorter than payload", "0001" + "0004" + "000751" + "00"},
		{"script size beyond MAX_SCRIPT_SIZE", "0001" + "0004" + "00cd17"},
		{"raw p2pkh that has a special form", "0001" + "001b" + "001f" + "76a914" + h20 + "88ac"},
		{"raw p2sh that has a special form", "0001" + "0019" + "001d" + "a914" + h20 + "87"},
		{"raw compressed p2pk", "0001" + "0025" + "0029" + "2102" + offX + "ac"},
		{"special p2pkh with short data", "0001" + "0015" + "0000" + h20[2:]},
		{"special 4 with x off the curve", "0001" + "0022" + "0004" + offX},
		{"special 5 with x ≥ p", "0001" + "0022" + "0005" + "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},
		{"directory truncated", "0002" + "0002"},
	} {
		b, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatalf("%s: bad test hex: %v", tc.name, err)
		}
		if _, err := DecodeRecord(b, nil); !errors.Is(err, ErrNonCanonical) {
			t.Errorf("%s: DecodeRecord err %v, want ErrNonCanonical", tc.name, err)
		}
		keep := []IndexedCoin{{Index: 9}}
		if got, _, err := DecodeRecordArena(b, keep, nil); !errors.Is(err, ErrNonCanonical) || len(got) != 1 {
			t.Errorf("%s: DecodeRecordArena err %v, %d coins; want ErrNonCanonical and dst unchanged", tc.name, err, len(got))
		}
		if _, _, _, err := RecordRemove(nil, b, 0); !errors.Is(err, ErrNonCanonical) {
			t.Errorf("%s: RecordRemove err %v", tc.name, err)
		}
		if _, _, err := RecordGet(b, 0); !errors.Is(err, ErrNonCanonical) {
			t.Errorf("%s: RecordGet err %v", tc.name, err)
		}
		if len(b) > 0 {
			if _, err := RecordAdd(nil, b, 7, Coin{}); !errors.Is(err, ErrNonCanonical) && !errors.Is(err, ErrRecordCoin) {
				t.Errorf("%s: RecordAdd err %v", tc.name, err)
			}
		}
	}
}

func FuzzRecordDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := 0; i < 8; i++ {
		var outs []IndexedCoin
		v := uint32(0)
		for j := 0; j <= i; j++ {
			v += uint32(r.IntN(300))
			outs = append(outs, IndexedCoin{v, Coin{Value: randValue(r), Height: 9, Script: randScript(r)}})
			v++
		}
		rec, _ := EncodeRecord(nil, outs)
		f.Add(rec)
	}
	f.Add([]byte{0, 1, 0, 2, 0, 6})
	f.Fuzz(func(t *testing.T, b []byte) {
		// The fast paths for canonical records never panic, whatever b is.
		for _, v := range []uint32{0, 1, 2, 300} {
			ValidRecordGet(b, v)
			ValidRecordDelete(nil, b, v)
		}
		ValidRecordLen(b)
		ValidRecordFirstIndex(b)
		outs, err := DecodeRecord(b, nil)
		// The one-pass decoder agrees with the validate-then-decode one.
		viaArena, _, aerr := DecodeRecordArena(b, nil, make([]byte, 0, 7))
		if (err == nil) != (aerr == nil) || len(viaArena) != len(outs) {
			t.Fatalf("DecodeRecord %d coins, %v; DecodeRecordArena %d coins, %v", len(outs), err, len(viaArena), aerr)
		}
		for i := range outs {
			if viaArena[i].Index != outs[i].Index || !coinEqual(viaArena[i].Coin, outs[i].Coin) {
				t.Fatalf("output %d: %+v vs %+v", i, viaArena[i], outs[i])
			}
		}
		if err != nil {
			if !errors.Is(err, ErrNonCanonical) {
				t.Fatalf("error not wrapping ErrNonCanonical: %v", err)
			}
			return
		}
		enc, err := EncodeRecord(nil, outs)
		if err != nil {
			t.Fatalf("decoded record does not re-encode: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("decode→encode changed bytes:\n in  %x\n out %x", b, enc)
		}
		checkValidAgrees(t, b)
		// Removing then re-adding the first output restores the record.
		rest, removed, found, err := RecordRemove(nil, b, outs[0].Index)
		if err != nil || !found {
			t.Fatalf("remove: %v %v", found, err)
		}
		back, err := RecordAdd(nil, rest, outs[0].Index, removed)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("remove+add: %x %v", back, err)
		}
	})
}

func benchRecordOuts(n int) []IndexedCoin {
	r := rand.New(rand.NewPCG(15, 16))
	outs := make([]IndexedCoin, n)
	for i := range outs {
		s := append(append([]byte{opDup, opHash160, 20}, make([]byte, 20)...), opEqualVerify, opCheckSig)
		if i%2 == 1 {
			s = append([]byte{0, 20}, make([]byte, 20)...) // P2WPKH, raw
		}
		outs[i] = IndexedCoin{uint32(i), Coin{Value: r.Int64N(1e9), Height: 800000, Script: s}}
	}
	return outs
}

func BenchmarkRecordEncode2(b *testing.B) {
	outs := benchRecordOuts(2)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = EncodeRecord(buf[:0], outs)
	}
}

func BenchmarkRecordDecode2(b *testing.B) {
	rec, _ := EncodeRecord(nil, benchRecordOuts(2))
	dst := make([]IndexedCoin, 0, 2)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = DecodeRecord(rec, dst[:0])
	}
}

func BenchmarkRecordGet(b *testing.B) {
	rec, _ := EncodeRecord(nil, benchRecordOuts(2))
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = RecordGet(rec, 1)
	}
}

func BenchmarkRecordRemove(b *testing.B) {
	rec, _ := EncodeRecord(nil, benchRecordOuts(2))
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf, _, _, _ = RecordRemove(buf[:0], rec, 1)
	}
}

func BenchmarkRecordAdd(b *testing.B) {
	outs := benchRecordOuts(3)
	rec, _ := EncodeRecord(nil, outs[:2])
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = RecordAdd(buf[:0], rec, 2, outs[2].Coin)
	}
}

// TestRecordStoresUncompressedP2PKRaw: v5 records keep uncompressed-key P2PK
// scripts raw (no curve arithmetic on reads); the script of mainnet block 1's
// coinbase (public chain data) round-trips and is stored as 67 raw bytes.
func TestRecordStoresUncompressedP2PKRaw(t *testing.T) {
	key := mustHex(t, "0496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858ee")
	script := append(append([]byte{65}, key...), opCheckSig)
	c := Coin{Value: 50 * 100_000_000, Height: 1, Coinbase: true, Script: script}
	rec, err := EncodeRecord(nil, []IndexedCoin{{Index: 0, Coin: c}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(rec, append([]byte{67 + numSpecialScripts}, script...)) {
		t.Fatalf("record %x does not end in the raw script", rec)
	}
	got, found, err := RecordGet(rec, 0)
	if err != nil || !found || !bytes.Equal(got.Script, script) || got.Value != c.Value {
		t.Fatalf("RecordGet: %+v %v %v", got, found, err)
	}
}
