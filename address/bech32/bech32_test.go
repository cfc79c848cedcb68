package bech32

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

type vectors struct {
	Bech32Valid    []string    `json:"bech32_valid"`
	Bech32mValid   []string    `json:"bech32m_valid"`
	Bech32Invalid  [][2]string `json:"bech32_invalid"`
	Bech32mInvalid [][2]string `json:"bech32m_invalid"`
}

// latin1 turns the JSON's \u0080..\u00ff escapes back into single bytes.
func latin1(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return string(b)
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/bech32_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValidVectors(t *testing.T) {
	v := loadVectors(t)
	if len(v.Bech32Valid) != 7 || len(v.Bech32mValid) != 7 {
		t.Fatalf("vectors: %d bech32, %d bech32m", len(v.Bech32Valid), len(v.Bech32mValid))
	}
	for enc, list := range map[Encoding][]string{Bech32: v.Bech32Valid, Bech32m: v.Bech32mValid} {
		for _, s := range list {
			hrp, data, e, err := Decode(s)
			if err != nil || e != enc {
				t.Errorf("Decode(%q) = %v, %v; want %v", s, e, err, enc)
				continue
			}
			if re := Encode(enc, hrp, data); !strings.EqualFold(re, s) {
				t.Errorf("re-encode %q = %q", s, re)
			}
		}
	}
}

// coreError maps Core's LocateErrors text to this package's error.
var coreError = map[string]error{
	"Invalid character or mixed case": ErrMixedCase,
	"Bech32 string too long":          ErrTooLong,
	"Missing separator":               ErrNoSep,
	"Invalid separator position":      ErrSepPos,
	"Invalid Base 32 character":       ErrInvalidChr,
	"Invalid checksum":                ErrChecksum,
	"Invalid Bech32 checksum":         ErrChecksum,
	"Invalid Bech32m checksum":        ErrChecksum,
}

func TestInvalidVectors(t *testing.T) {
	v := loadVectors(t)
	all := append(v.Bech32Invalid, v.Bech32mInvalid...)
	if len(all) != 32 {
		t.Fatalf("%d invalid vectors", len(all))
	}
	for _, c := range all {
		s, want := latin1(c[0]), coreError[c[1]]
		if want == nil {
			t.Fatalf("unmapped Core error %q", c[1])
		}
		if _, _, _, err := Decode(s); !errors.Is(err, want) {
			t.Errorf("Decode(%q) error %v, want %v (Core: %s)", s, err, want, c[1])
		}
	}
}

func TestEncodeRefuses(t *testing.T) {
	if Encode(Bech32, "BC", nil) != "" || Encode(Bech32, "", nil) != "" || Encode(Invalid, "bc", nil) != "" ||
		Encode(Bech32, "bc", []byte{32}) != "" || Encode(Bech32, "bc", make([]byte, 82)) != "" {
		t.Error("Encode accepted bad input")
	}
}

func TestConvertBits(t *testing.T) {
	in := []byte{0xff, 0x00}
	five, ok := ConvertBits(in, 8, 5, true)
	if !ok || len(five) != 4 {
		t.Fatalf("8->5 = %v %v", five, ok)
	}
	back, ok := ConvertBits(five, 5, 8, false)
	if !ok || len(back) != 2 || back[0] != 0xff || back[1] != 0 {
		t.Fatalf("5->8 = %x %v", back, ok)
	}
	// Non-zero padding and values too wide are refused.
	if _, ok := ConvertBits([]byte{31, 31, 31, 31}, 5, 8, false); ok {
		t.Error("non-zero padding accepted")
	}
	if _, ok := ConvertBits([]byte{32}, 5, 8, true); ok {
		t.Error("6-bit value accepted")
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"a12uel5l", "A1LQFN3A", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "x1b4n0q5v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hrp, data, e, err := Decode(s)
		if err != nil {
			return
		}
		if re := Encode(e, hrp, data); !strings.EqualFold(re, s) {
			t.Fatalf("round trip %q -> %q", s, re)
		}
	})
}
