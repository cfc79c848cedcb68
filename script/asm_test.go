package script

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Vectors from Core's test/functional/rpc_decodescript.py (asm and type of
// decodescript) and doc/REST-interface.md.
func TestAsmAndSolve(t *testing.T) {
	const (
		pub   = "03b0da749730dc9b4b1f4a14d6902877a92541f5368778853d9c4a0cb7802dcfb2"
		unpub = "04b0da749730dc9b4b1f4a14d6902877a92541f5368778853d9c4a0cb7802dcfb25e01fc8fde47c96c98a4f3a8123e33a38a50cf9025cc8c4494a518f991792bb7"
		pkh   = "5dd1d3a048119c27b28293056724d9522f26d945"
		sig   = "304502207fa7a6d1e0ee81132a269ad84e68d695483745cde8b541e3bf630749894e342a022100c1f7ab20e13e22fb95281a870f3dcf38d782e53023ee313d741ad0cfbc0c509001"
		wsh   = "d8590cf8ea0674cf3d49fd7ca249b85ef7485dea62c138468bddeb20cd6519f7"
	)
	for _, tc := range []struct {
		script, asm string
		typ         OutputType
	}{
		{"21" + pub + "ac", pub + " OP_CHECKSIG", PubKey},
		{"76a914" + pkh + "88ac", "OP_DUP OP_HASH160 " + pkh + " OP_EQUALVERIFY OP_CHECKSIG", PubKeyHash},
		{"5221" + pub + "21" + pub + "21" + pub + "53ae", "2 " + pub + " " + pub + " " + pub + " 3 OP_CHECKMULTISIG", Multisig},
		{"a914" + pkh + "87", "OP_HASH160 " + pkh + " OP_EQUAL", ScriptHash},
		{"6a48" + sig, "OP_RETURN " + sig, NullData},
		{"6321" + pub + "ad670320a107b1756821" + pub + "ac", "OP_IF " + pub + " OP_CHECKSIGVERIFY OP_ELSE 500000 OP_CHECKLOCKTIMEVERIFY OP_DROP OP_ENDIF " + pub + " OP_CHECKSIG", NonStandard},
		{"41" + unpub + "ac", unpub + " OP_CHECKSIG", PubKey},
		{"5221" + pub + "41" + unpub + "52ae", "2 " + pub + " " + unpub + " 2 OP_CHECKMULTISIG", Multisig},
		{"0014" + pkh, "0 " + pkh, WitnessV0KeyHash},
		{"0020" + wsh, "0 " + wsh, WitnessV0ScriptHash},
		{"5120" + strings.Repeat("01", 32), "1 " + strings.Repeat("01", 32), WitnessV1Taproot},
		{"51024e73", "1 29518", Anchor},
		// scriptSigs (asm only).
		{"48" + sig, sig, NonStandard},
		{"5100", "1 0", NonStandard},
		// rpc_decodescript.json.
		{"5102eeee", "1 -28398", WitnessUnknown},
		{"6a00", "OP_RETURN 0", NullData},
		{"6aee", "OP_RETURN OP_UNKNOWN", NonStandard},
		{"6a02ee", "OP_RETURN [error]", NonStandard},
		{"ba", "OP_CHECKSIGADD", NonStandard},
		{"50", "OP_RESERVED", NonStandard},
		{"", "", NonStandard},
	} {
		s, err := hex.DecodeString(tc.script)
		if err != nil {
			t.Fatal(err)
		}
		if got := Asm(s); got != tc.asm {
			t.Errorf("Asm(%s) = %q, want %q", tc.script, got, tc.asm)
		}
		if typ, _ := Solve(s); typ != tc.typ && !strings.HasPrefix(tc.asm, sig) && tc.script != "5100" {
			t.Errorf("Solve(%s) = %v, want %v", tc.script, typ, tc.typ)
		}
	}
}

// Core's MatchMultisig takes m and n as minimal pushes too (GetScriptNumber),
// up to MAX_PUBKEYS_PER_MULTISIG; OP_0 or a non-minimal push is refused.
func TestSolveMultisigNumbers(t *testing.T) {
	key := "21" + "02" + strings.Repeat("11", 32)
	build := func(m, n string, keys int) []byte {
		s, _ := hex.DecodeString(m + strings.Repeat(key, keys) + n + "ae")
		return s
	}
	for _, tc := range []struct {
		m, n string
		keys int
		want OutputType
		sols int
	}{
		{"0111", "0111", 17, Multisig, 19},   // 17-of-17 with pushed numbers
		{"51", "0114", 20, Multisig, 22},     // 1-of-20
		{"0115", "0115", 21, NonStandard, 0}, // 21 keys: too many
		{"0101", "51", 1, NonStandard, 0},    // non-minimal push of 1
		{"00", "51", 1, NonStandard, 0},      // m = 0
		{"52", "51", 1, NonStandard, 0},      // m > n
		{"51", "52", 1, NonStandard, 0},      // n != number of keys
	} {
		typ, sol := Solve(build(tc.m, tc.n, tc.keys))
		if typ != tc.want || len(sol) != tc.sols {
			t.Errorf("m %s n %s keys %d: %v with %d solutions", tc.m, tc.n, tc.keys, typ, len(sol))
		}
	}
}

func TestOutputTypeString(t *testing.T) {
	want := []string{"nonstandard", "pubkey", "pubkeyhash", "scripthash", "multisig", "nulldata", "anchor",
		"witness_v0_keyhash", "witness_v0_scripthash", "witness_v1_taproot", "witness_unknown"}
	for i, w := range want {
		if got := OutputType(i).String(); got != w {
			t.Errorf("%d: %s, want %s", i, got, w)
		}
	}
}

func FuzzAsmSolve(f *testing.F) {
	f.Add([]byte{0x51, 0x02, 0x4e, 0x73})
	f.Add([]byte{0x4e, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, s []byte) {
		_ = Asm(s)
		typ, sol := Solve(s)
		if typ == Multisig && len(sol) < 3 {
			t.Fatalf("multisig with %d solutions", len(sol))
		}
	})
}
