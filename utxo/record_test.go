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
		if !bytes.Equal(rec.Bytes(), want) {
			t.Errorf("record %x, want %x (Core coin %s)", rec.Bytes(), want, tc.core)
		}
		_, got, _, err := DecodeRecord(rec.Bytes(), nil, nil)
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
// operation the record decodes to exactly the model's outputs, Get agrees
// for present and absent vouts, and re-encoding from the model gives the
// same bytes (canonical form).
func TestRecordAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := 0; round < 30; round++ {
		height := r.Uint32()
		coinbase := r.IntN(2) == 0
		model := map[uint32]Coin{}
		var rec Record
		voutRange := []uint32{8, 200, 70000, 1<<32 - 1}[r.IntN(4)]
		for step := 0; step < 60; step++ {
			vout := uint32(r.Uint64N(uint64(voutRange) + 1))
			if r.IntN(3) == 0 && len(model) > 0 {
				// Remove an existing vout (sometimes an absent one).
				if r.IntN(4) != 0 {
					keys := slices.Sorted(maps.Keys(model))
					vout = keys[r.IntN(len(keys))]
				}
				removed, gotFound := rec.Get(vout)
				next, found := rec.Without(nil, vout)
				if found != gotFound {
					t.Fatalf("remove %d: Without found %v, Get %v", vout, found, gotFound)
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
				next, err := rec.With(nil, vout, c)
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
		}
	}
}

func checkRecordModel(t *testing.T, rec Record, model map[uint32]Coin, voutRange uint32) {
	t.Helper()
	if len(model) == 0 {
		if rec.Bytes() != nil || rec.Len() != 0 {
			t.Fatalf("empty model but record %x", rec.Bytes())
		}
		return
	}
	parsed, err := ParseRecord(rec.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := parsed.AppendCoins(nil, nil)
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
	_, viaArena, arena, err := DecodeRecord(rec.Bytes(), nil, arena)
	if err != nil || len(viaArena) != len(got) || !bytes.Equal(arena[:3], []byte{1, 2, 3}) {
		t.Fatalf("DecodeRecord: %d outputs, %v, arena prefix %x", len(viaArena), err, arena[:3])
	}
	for i := range got {
		if viaArena[i].Index != got[i].Index || !coinEqual(viaArena[i].Coin, got[i].Coin) {
			t.Fatalf("DecodeRecord output %d: %+v, AppendCoins %+v", i, viaArena[i], got[i])
		}
	}
	checkRecordAccessors(t, rec, got)
	absent := keys[len(keys)-1] + 1
	if absent != 0 && absent <= voutRange {
		if _, found := rec.Get(absent); found {
			t.Fatalf("Get(absent %d) found", absent)
		}
	}
	enc, err := EncodeRecord(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc.Bytes(), rec.Bytes()) {
		t.Fatalf("incremental record %x != fresh encoding %x", rec.Bytes(), enc.Bytes())
	}
}

// checkRecordAccessors requires rec's accessors to agree with outs, its
// decoded outputs: Len, FirstIndex, Get of every output and of the vouts
// around them, and Without for each.
func checkRecordAccessors(t testing.TB, rec Record, outs []IndexedCoin) {
	if rec.Len() != len(outs) || rec.FirstIndex() != outs[0].Index {
		t.Fatalf("Len %d FirstIndex %d, decoded %d outputs from %d", rec.Len(), rec.FirstIndex(), len(outs), outs[0].Index)
	}
	present := map[uint32]int{}
	for i, o := range outs {
		present[o.Index] = i
	}
	for _, o := range outs {
		for _, v := range []uint32{o.Index - 1, o.Index, o.Index + 1} {
			i, want := present[v]
			c, found := rec.Get(v)
			if found != want || (found && (!coinEqual(c, outs[i].Coin))) {
				t.Fatalf("Get(%d): %+v %v", v, c, found)
			}
			rest, found := rec.Without([]byte{7}, v)
			if found != want {
				t.Fatalf("Without(%d): found %v", v, found)
			}
			switch {
			case !found:
				if !bytes.Equal(rest.Bytes(), rec.Bytes()) {
					t.Fatalf("Without(%d) absent changed the record", v)
				}
			case len(outs) == 1:
				if rest.Bytes() != nil || rest.Len() != 0 {
					t.Fatalf("Without(%d) of the only output: %x", v, rest.Bytes())
				}
			default:
				wantRest, _ := EncodeRecord(nil, slices.Delete(slices.Clone(outs), i, i+1))
				if !bytes.Equal(rest.Bytes(), wantRest.Bytes()) {
					t.Fatalf("Without(%d): %x, want %x", v, rest.Bytes(), wantRest.Bytes())
				}
			}
		}
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
		got, err := EncodeRecord([]byte{9}, outs)
		if !errors.Is(err, ErrRecordCoin) || got.Bytes() != nil {
			t.Errorf("%s: %x %v", name, got.Bytes(), err)
		}
	}
	rec, _ := EncodeRecord(nil, []IndexedCoin{{1, c}})
	if _, err := rec.With(nil, 2, Coin{Value: 1, Height: 6}); !errors.Is(err, ErrRecordCoin) {
		t.Errorf("add with other height: %v", err)
	}
	if _, err := rec.With(nil, 1, c); !errors.Is(err, ErrRecordDuplicate) {
		t.Errorf("add duplicate: %v", err)
	}
	if _, err := rec.With(nil, 2, Coin{Value: -1, Height: 5}); !errors.Is(err, ErrRecordCoin) {
		t.Errorf("add negative value: %v", err)
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
		if r, err := ParseRecord(b); !errors.Is(err, ErrNonCanonical) || r.Bytes() != nil {
			t.Errorf("%s: ParseRecord err %v, want ErrNonCanonical", tc.name, err)
		}
		keep := []IndexedCoin{{Index: 9}}
		if r, got, _, err := DecodeRecord(b, keep, nil); !errors.Is(err, ErrNonCanonical) || len(got) != 1 || r.Bytes() != nil {
			t.Errorf("%s: DecodeRecord err %v, %d coins; want ErrNonCanonical and dst unchanged", tc.name, err, len(got))
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
		f.Add(rec.Bytes())
	}
	f.Add([]byte{0, 1, 0, 2, 0, 6})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := ParseRecord(b)
		// The one-pass decoder agrees with the parser.
		drec, outs, _, derr := DecodeRecord(b, nil, make([]byte, 0, 7))
		if (err == nil) != (derr == nil) || !bytes.Equal(rec.Bytes(), drec.Bytes()) {
			t.Fatalf("ParseRecord %v; DecodeRecord %d coins, %v", err, len(outs), derr)
		}
		if err != nil {
			if !errors.Is(err, ErrNonCanonical) || !errors.Is(derr, ErrNonCanonical) || len(outs) != 0 {
				t.Fatalf("error not wrapping ErrNonCanonical: %v / %v", err, derr)
			}
			return
		}
		// What parsed decodes the same through the Record, re-encodes to
		// the same bytes, and its accessors agree with the decoded coins.
		viaRecord, _ := rec.AppendCoins(nil, nil)
		if len(viaRecord) != len(outs) {
			t.Fatalf("AppendCoins %d coins, DecodeRecord %d", len(viaRecord), len(outs))
		}
		for i := range outs {
			if viaRecord[i].Index != outs[i].Index || !coinEqual(viaRecord[i].Coin, outs[i].Coin) {
				t.Fatalf("output %d: %+v vs %+v", i, viaRecord[i], outs[i])
			}
		}
		enc, err := EncodeRecord(nil, outs)
		if err != nil {
			t.Fatalf("decoded record does not re-encode: %v", err)
		}
		if !bytes.Equal(enc.Bytes(), b) {
			t.Fatalf("decode→encode changed bytes:\n in  %x\n out %x", b, enc.Bytes())
		}
		checkRecordAccessors(t, rec, outs)
		// Removing then re-adding the first output restores the record.
		removed, _ := rec.Get(outs[0].Index)
		rest, found := rec.Without(nil, outs[0].Index)
		if !found {
			t.Fatal("Without: not found")
		}
		back, err := rest.With(nil, outs[0].Index, removed)
		if err != nil || !bytes.Equal(back.Bytes(), b) {
			t.Fatalf("remove+add: %x %v", back.Bytes(), err)
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
		rec, _ := EncodeRecord(buf[:0], outs)
		buf = rec.Bytes()
	}
}

// BenchmarkRecordDecode2 parses and decodes a record read from the store
// (DecodeRecord, one pass).
func BenchmarkRecordDecode2(b *testing.B) {
	rec, _ := EncodeRecord(nil, benchRecordOuts(2))
	dst := make([]IndexedCoin, 0, 2)
	var arena []byte
	b.ReportAllocs()
	for b.Loop() {
		_, dst, arena, _ = DecodeRecord(rec.Bytes(), dst[:0], arena[:0])
	}
}

// BenchmarkRecordParse2 validates a record read from the store.
func BenchmarkRecordParse2(b *testing.B) {
	rec, _ := EncodeRecord(nil, benchRecordOuts(2))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ParseRecord(rec.Bytes())
	}
}

// BenchmarkRecordCoins2 decodes a parsed Record (the coins cache's
// AppendTxCoins).
func BenchmarkRecordCoins2(b *testing.B) {
	rec, _ := EncodeRecord(nil, benchRecordOuts(2))
	dst := make([]IndexedCoin, 0, 2)
	var arena []byte
	b.ReportAllocs()
	for b.Loop() {
		dst, arena = rec.AppendCoins(dst[:0], arena[:0])
	}
}

func BenchmarkRecordGet(b *testing.B) {
	rec, _ := EncodeRecord(nil, benchRecordOuts(2))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = rec.Get(1)
	}
}

func BenchmarkRecordRemove(b *testing.B) {
	rec, _ := EncodeRecord(nil, benchRecordOuts(2))
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		rest, _ := rec.Without(buf[:0], 1)
		buf = rest.Bytes()
	}
}

func BenchmarkRecordAdd(b *testing.B) {
	outs := benchRecordOuts(3)
	rec, _ := EncodeRecord(nil, outs[:2])
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		next, _ := rec.With(buf[:0], 2, outs[2].Coin)
		buf = next.Bytes()
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
	if !bytes.HasSuffix(rec.Bytes(), append([]byte{67 + numSpecialScripts}, script...)) {
		t.Fatalf("record %x does not end in the raw script", rec.Bytes())
	}
	got, found := rec.Get(0)
	if !found || !bytes.Equal(got.Script, script) || got.Value != c.Value {
		t.Fatalf("Get: %+v %v", got, found)
	}
}

// TestRecordArena: records put into an arena come back byte for byte, large
// ones in chunks of their own, with the zero Record as the zero RecordRef,
// and the accounting of used and released bytes.
func TestRecordArena(t *testing.T) {
	a := NewRecordArena()
	if ref := a.Put(Record{}); ref != 0 || a.Get(0).Bytes() != nil {
		t.Fatalf("zero Record: ref %d", ref)
	}
	r := rand.New(rand.NewPCG(17, 18))
	type put struct {
		ref RecordRef
		rec []byte
	}
	var puts []put
	for i := 0; i < 3000; i++ {
		n := 1 + r.IntN(3)
		if i%500 == 0 {
			n = 3000 // a record beyond arenaBigBytes
		}
		outs := make([]IndexedCoin, n)
		for j := range outs {
			outs[j] = IndexedCoin{Index: uint32(j), Coin: Coin{Value: randValue(r), Height: 7, Script: randScript(r)}}
		}
		rec, err := EncodeRecord(nil, outs)
		if err != nil {
			t.Fatal(err)
		}
		puts = append(puts, put{a.Put(rec), bytes.Clone(rec.Bytes())})
	}
	var total int64
	for _, p := range puts {
		got := a.Get(p.ref)
		if !bytes.Equal(got.Bytes(), p.rec) || p.ref.Len() != len(p.rec) || cap(got.Bytes()) != len(p.rec) {
			t.Fatalf("ref %x: %d bytes back, want %d", p.ref, len(got.Bytes()), len(p.rec))
		}
		total += int64(len(p.rec))
	}
	if a.Used() < total || a.Dead() != 0 {
		t.Fatalf("used %d for %d bytes, dead %d", a.Used(), total, a.Dead())
	}
	a.Release(puts[0].ref)
	if a.Dead() != int64(len(puts[0].rec)) {
		t.Fatalf("dead %d", a.Dead())
	}
}
