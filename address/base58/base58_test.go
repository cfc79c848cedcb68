package base58

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestCoreVectors runs Core's base58_encode_decode.json both ways.
func TestCoreVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/base58_encode_decode.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases [][2]string
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		b, err := hex.DecodeString(c[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := Encode(b); got != c[1] {
			t.Errorf("Encode(%s) = %s, want %s", c[0], got, c[1])
		}
		got, err := Decode(c[1], 256)
		if err != nil || !strings.EqualFold(hex.EncodeToString(got), c[0]) {
			t.Errorf("Decode(%s) = %x, %v; want %s", c[1], got, err, c[0])
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		in     string
		maxLen int
		want   error
	}{
		{"invalid0", 100, ErrInvalidChar}, // '0' is not in the alphabet
		{" 2g", 100, ErrInvalidChar},      // Core skips whitespace; this package does not
		{"2g ", 100, ErrInvalidChar},
		{"\x00", 100, ErrInvalidChar},
		{"1111", 3, ErrTooLong},
		{"zzzzz", 3, ErrTooLong},
	} {
		if _, err := Decode(tc.in, tc.maxLen); !errors.Is(err, tc.want) {
			t.Errorf("Decode(%q) error %v, want %v", tc.in, err, tc.want)
		}
	}
}

// The genesis P2PKH address (version 0 + hash160 of Satoshi's key).
func TestCheck(t *testing.T) {
	payload, _ := hex.DecodeString("0062e907b15cbf27d5425399ebf6f0fb50ebb88f18")
	if got := CheckEncode(payload); got != "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa" {
		t.Fatalf("CheckEncode = %s", got)
	}
	got, err := CheckDecode("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", 21)
	if err != nil || hex.EncodeToString(got) != hex.EncodeToString(payload) {
		t.Fatalf("CheckDecode = %x, %v", got, err)
	}
	if _, err := CheckDecode("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", 21); !errors.Is(err, ErrChecksum) {
		t.Errorf("altered last character: %v", err)
	}
	if _, err := CheckDecode("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", 20); !errors.Is(err, ErrTooLong) {
		t.Errorf("maxLen 20: %v", err)
	}
	if _, err := CheckDecode("2g", 21); !errors.Is(err, ErrShort) {
		t.Errorf("one byte: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")
	f.Add("111")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := Decode(s, 128)
		if err != nil {
			return
		}
		if got := Encode(b); got != s {
			t.Fatalf("round trip %q -> %x -> %q", s, b, got)
		}
	})
}
