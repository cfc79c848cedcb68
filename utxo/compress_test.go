package utxo

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"testing"
)

// Core's varints_bitpatterns (src/test/serialize_tests.cpp).
func TestVarIntCoreBitPatterns(t *testing.T) {
	for _, tc := range []struct {
		n   uint64
		hex string
	}{
		{0, "00"},
		{0x7f, "7f"},
		{0x80, "8000"},
		{0x1234, "a334"},
		{0xffff, "82fe7f"},
		{0x123456, "c7e756"},
		{0x80123456, "86ffc7e756"},
		{0xffffffff, "8efefefe7f"},
		{0x7fffffffffffffff, "fefefefefefefefe7f"},
		{0xffffffffffffffff, "80fefefefefefefefe7f"},
	} {
		got := AppendVarInt(nil, tc.n)
		if hex.EncodeToString(got) != tc.hex {
			t.Errorf("VARINT(%#x) = %x, want %s", tc.n, got, tc.hex)
		}
		if VarIntLen(tc.n) != len(got) {
			t.Errorf("VarIntLen(%#x) = %d, want %d", tc.n, VarIntLen(tc.n), len(got))
		}
		v, k, err := ReadVarInt(got, math.MaxUint64)
		if err != nil || v != tc.n || k != len(got) {
			t.Errorf("ReadVarInt(%s) = %d, %d, %v", tc.hex, v, k, err)
		}
	}
}

// Core's serialize_tests "varints" loops: every value round-trips.
func TestVarIntRoundTrip(t *testing.T) {
	var b []byte
	var vals []uint64
	for i := uint64(0); i < 100000; i++ {
		vals = append(vals, i)
	}
	for i := uint64(0); i < 100000000000; i += 999999937 {
		vals = append(vals, i)
	}
	for _, v := range vals {
		b = AppendVarInt(b, v)
	}
	for _, want := range vals {
		v, k, err := ReadVarInt(b, math.MaxUint64)
		if err != nil || v != want {
			t.Fatalf("read %d, %v; want %d", v, err, want)
		}
		b = b[k:]
	}
	if len(b) != 0 {
		t.Fatal("trailing bytes")
	}
}

func TestVarIntErrors(t *testing.T) {
	for _, tc := range []struct {
		hex string
		max uint64
	}{
		{"", math.MaxUint64},
		{"80", math.MaxUint64},
		{"ff", math.MaxUint64},
		{"80fefefefefefefefeff00", math.MaxUint64}, // > 2^64-1
		{"8000", 0x7f},                             // 128 > max
		{"8efefefe7f", math.MaxUint32 - 1},
		{"8efefeff00", math.MaxUint32}, // 2^32
	} {
		if _, _, err := ReadVarInt(mustHex(t, tc.hex), tc.max); !errors.Is(err, ErrVarInt) {
			t.Errorf("%s (max %d): err %v, want ErrVarInt", tc.hex, tc.max, err)
		}
	}
}

// Core's compress_amounts (src/test/compress_tests.cpp).
func TestCompressAmountCore(t *testing.T) {
	const coin, cent = 100_000_000, 1_000_000
	for _, tc := range []struct{ dec, enc uint64 }{
		{0, 0x0},
		{1, 0x1},
		{cent, 0x7},
		{coin, 0x9},
		{50 * coin, 0x32},
		{21000000 * coin, 0x1406f40},
	} {
		if CompressAmount(tc.dec) != tc.enc || DecompressAmount(tc.enc) != tc.dec {
			t.Errorf("pair (%d, %#x): compress %#x decompress %d", tc.dec, tc.enc, CompressAmount(tc.dec), DecompressAmount(tc.enc))
		}
	}
	enc := func(v uint64) {
		if DecompressAmount(CompressAmount(v)) != v {
			t.Fatalf("TestEncode(%d) fails", v)
		}
	}
	for i := uint64(1); i <= 100000; i++ {
		enc(i)
	}
	for i := uint64(1); i <= 10000; i++ {
		enc(i * cent)
		enc(i * coin)
	}
	for i := uint64(1); i <= 420000; i++ {
		enc(i * 50 * coin)
	}
	for i := uint64(0); i < 100000; i++ {
		if CompressAmount(DecompressAmount(i)) != i {
			t.Fatalf("TestDecode(%d) fails", i)
		}
	}
}

// The uncompressed key of mainnet block 1's coinbase output (a valid point;
// public chain data) and Core's compress_tests script cases: P2PKH → 0x00 +
// hash, P2SH → 0x01 + hash, compressed P2PK → prefix byte + x, uncompressed
// P2PK → 0x04|(y&1) + x, a key not on the curve stays raw.
func TestScriptCompression(t *testing.T) {
	key1 := mustHex(t, "0496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858ee")
	p2pk := append(append([]byte{65}, key1...), opCheckSig)
	h20 := bytes.Repeat([]byte{0xab}, 20)
	x32 := bytes.Repeat([]byte{0x11}, 32)
	offCurve := append([]byte{65, 4}, make([]byte, 64)...) // x = 5, y = 0: 5³+7 = 132 is no square mod p
	offCurve[33] = 5
	offCurve = append(offCurve, opCheckSig)
	cases := []struct {
		name   string
		script []byte
		want   []byte
	}{
		{"p2pkh", append(append([]byte{opDup, opHash160, 20}, h20...), opEqualVerify, opCheckSig), append([]byte{0}, h20...)},
		{"p2sh", append(append([]byte{opHash160, 20}, h20...), opEqual), append([]byte{1}, h20...)},
		{"p2pk-02", append(append([]byte{33, 2}, x32...), opCheckSig), append([]byte{2}, x32...)},
		{"p2pk-03", append(append([]byte{33, 3}, x32...), opCheckSig), append([]byte{3}, x32...)},
		{"p2pk-uncompressed-even", p2pk, append([]byte{4 | (key1[64] & 1)}, key1[1:33]...)},
		{"p2pk-off-curve-raw", offCurve, append([]byte{67 + 6}, offCurve...)},
		{"empty", nil, []byte{6}},
		{"op-true", []byte{0x51}, []byte{7, 0x51}},
		{"p2pk-04-wrong-len-prefix", append(append([]byte{33, 4}, x32...), opCheckSig), append([]byte{35 + 6, 33, 4}, append(x32, opCheckSig)...)},
	}
	for _, tc := range cases {
		got := AppendCompressedScript(nil, tc.script)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("%s: compressed %x, want %x", tc.name, got, tc.want)
		}
		if CompressedScriptLen(tc.script) != len(got) {
			t.Errorf("%s: CompressedScriptLen %d, want %d", tc.name, CompressedScriptLen(tc.script), len(got))
		}
		// Core's uncompressed-key forms 4/5 decompress (Core-exact), but v5
		// records never use them: a payload holding one is non-canonical.
		if got[0] == 4 || got[0] == 5 {
			back, err := appendDecompressedSpecial(nil, uint64(got[0]), got[1:])
			if err != nil || !bytes.Equal(back, tc.script) {
				t.Errorf("%s: decompressed %x (%v), want %x", tc.name, back, err, tc.script)
			}
			if _, _, _, err := parsePayload(append([]byte{0}, got...)); !errors.Is(err, ErrNonCanonical) {
				t.Errorf("%s: record payload with form %d: %v, want ErrNonCanonical", tc.name, got[0], err)
			}
			continue
		}
		// Decompress through a payload and compare.
		p := append([]byte{0}, got...)
		v, nSize, data, err := parsePayload(p)
		if err != nil || v != 0 {
			t.Errorf("%s: parsePayload: %v", tc.name, err)
			continue
		}
		var back []byte
		if nSize < numSpecialScripts {
			back, err = appendDecompressedSpecial(nil, nSize, data)
			if err != nil {
				t.Errorf("%s: decompress: %v", tc.name, err)
			}
		} else {
			back = data
		}
		if !bytes.Equal(back, tc.script) {
			t.Errorf("%s: decompressed %x, want %x", tc.name, back, tc.script)
		}
	}
	// An odd-y key: negate y of key1 (p − y is odd when y is even).
	var oddY [32]byte
	if !decompressKeyY(key1[1:33], true, &oddY) {
		t.Fatal("block-1 key x not on curve")
	}
	if oddY[31]&1 != 1 {
		t.Fatal("odd root is even")
	}
	odd := append(append(append([]byte{65, 4}, key1[1:33]...), oddY[:]...), opCheckSig)
	if got := AppendCompressedScript(nil, odd); got[0] != 5 {
		t.Errorf("odd-y key compressed with tag %d, want 5", got[0])
	}
	// nSize 4 with an x that is not on the curve cannot be decompressed.
	if _, err := appendDecompressedSpecial(nil, 4, offCurve[2:34]); !errors.Is(err, ErrScriptCompression) {
		t.Errorf("off-curve x: %v", err)
	}
}

func BenchmarkCompressScriptP2PKUncompressed(b *testing.B) {
	key1, _ := hex.DecodeString("0496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858ee")
	s := append(append([]byte{65}, key1...), opCheckSig)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendCompressedScript(buf[:0], s)
	}
}
