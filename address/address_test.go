package address

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"utxod/params"
)

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

func net(t *testing.T, name string) *params.Params {
	t.Helper()
	p, err := params.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// flipCase is key_io_tests.cpp's case flip.
func flipCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// TestKeyIOValid follows Core's key_io_valid_parse and key_io_valid_gen:
// every address decodes to its script and the script encodes back to it;
// with the case flipped it stays valid exactly when tryCaseFlip says so;
// private keys are not addresses.
func TestKeyIOValid(t *testing.T) {
	var cases [][]json.RawMessage
	readJSON(t, "testdata/key_io_valid.json", &cases)
	var addrs, keys int
	for _, c := range cases {
		var s, payload string
		var meta struct {
			Chain       string `json:"chain"`
			IsPrivkey   bool   `json:"isPrivkey"`
			TryCaseFlip bool   `json:"tryCaseFlip"`
		}
		if len(c) < 3 || json.Unmarshal(c[0], &s) != nil || json.Unmarshal(c[1], &payload) != nil || json.Unmarshal(c[2], &meta) != nil {
			t.Fatalf("bad case %s", c)
		}
		p := net(t, meta.Chain)
		if meta.IsPrivkey {
			keys++
			if _, err := Decode(s, p); err == nil {
				t.Errorf("%s: private key decoded as an address", s)
			}
			continue
		}
		addrs++
		got, err := Decode(s, p)
		if err != nil || hex.EncodeToString(got) != payload {
			t.Errorf("Decode(%s, %s) = %x, %v; want %s", s, meta.Chain, got, err, payload)
		}
		script, _ := hex.DecodeString(payload)
		if enc, ok := FromScript(script, p); !ok || enc != s {
			t.Errorf("FromScript(%s, %s) = %q, %v; want %s", payload, meta.Chain, enc, ok, s)
		}
		flipped, err := Decode(flipCase(s), p)
		if (err == nil) != meta.TryCaseFlip {
			t.Errorf("%s case-flipped: err %v, tryCaseFlip %v", s, err, meta.TryCaseFlip)
		}
		if err == nil && hex.EncodeToString(flipped) != payload {
			t.Errorf("%s case-flipped decodes to %x", s, flipped)
		}
	}
	if addrs < 50 || keys < 10 {
		t.Fatalf("only %d addresses and %d keys", addrs, keys)
	}
}

// TestKeyIOInvalid: every entry of Core's key_io_invalid.json is refused on
// main, testnet3, signet and regtest (the chains Core tries).
func TestKeyIOInvalid(t *testing.T) {
	var cases [][]string
	readJSON(t, "testdata/key_io_invalid.json", &cases)
	if len(cases) < 50 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, name := range []string{"main", "testnet3", "signet", "regtest"} {
		p := net(t, name)
		for _, c := range cases {
			script, err := Decode(c[0], p)
			if err == nil {
				t.Errorf("%s: %q decoded to %x", name, c[0], script)
				continue
			}
			var ae *Error
			if !errors.As(err, &ae) || ae.Reason == "" {
				t.Errorf("%q: error %v is not a *Error", c[0], err)
			}
		}
	}
}

func TestBIP350(t *testing.T) {
	var v struct {
		Valid   [][3]string `json:"valid"`
		Invalid [][3]string `json:"invalid"`
	}
	readJSON(t, "testdata/bip350_segwit.json", &v)
	for _, c := range v.Valid {
		p := net(t, c[2])
		got, err := Decode(c[0], p)
		if err != nil || hex.EncodeToString(got) != c[1] {
			t.Errorf("Decode(%s) = %x, %v; want %s", c[0], got, err, c[1])
		}
		if enc, ok := FromScript(got, p); !ok || enc != strings.ToLower(c[0]) {
			t.Errorf("FromScript(%s) = %q %v", c[1], enc, ok)
		}
	}
	kinds := map[string]error{"checksum": ErrChecksum, "malformed": ErrMalformed}
	for _, c := range v.Invalid {
		// The BIP says "invalid" for every network; try main and testnet3.
		for _, name := range []string{"main", "testnet3"} {
			_, err := Decode(c[0], net(t, name))
			want := kinds[c[2]]
			if errors.Is(err, ErrWrongNetwork) {
				continue // a bc1 vector on testnet3 (or tb1 on main) is first of all foreign
			}
			if !errors.Is(err, want) {
				t.Errorf("%s on %s: %v, want %v (%s)", c[0], name, err, want, c[1])
			}
		}
	}
}

// Another network's address is reported as such, whichever encoding.
func TestWrongNetwork(t *testing.T) {
	for _, tc := range []struct{ addr, on string }{
		{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "testnet3"},
		{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "regtest"},
		{"3P14159f73E4gFr7JterCCQh9QjiTjiZrG", "signet"},
		{"mzK2FFDEhxqHcmrJw1ysqFkVyhUULo45hZ", "main"},
		{"2NC2hEhe28ULKAJkW5MjZ3jtTMJdvXmByvK", "main"},
		{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "testnet4"},
		{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "regtest"},
		{"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "signet"},
		{"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", "main"},
		{"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", "regtest"},
		{"bcrt1pfeesnyr2tx", "main"}, // Core's rpc_decodescript P2A anchor address on regtest
	} {
		_, err := Decode(tc.addr, net(t, tc.on))
		if !errors.Is(err, ErrWrongNetwork) {
			t.Errorf("%s on %s: %v, want ErrWrongNetwork", tc.addr, tc.on, err)
		}
	}
	// The test networks share base58 prefixes, as in Core.
	if _, err := Decode("mzK2FFDEhxqHcmrJw1ysqFkVyhUULo45hZ", net(t, "regtest")); err != nil {
		t.Errorf("testnet base58 on regtest: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	main := params.MainNet()
	for _, tc := range []struct {
		addr string
		want error
	}{
		{"", ErrMalformed},
		{strings.Repeat("1", 101), ErrMalformed},
		{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", ErrChecksum},
		{" 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", ErrMalformed},
		{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa\n", ErrMalformed},
		{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", ErrChecksum},
		{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4 ", ErrMalformed},
		// A WIF private key (Core's key_io_valid): valid base58check, not an address.
		{"5Kd3NBUAdUnhyzenEwVLy9pBKxSwXvE9FMPyR4UKZvpe6E3AgLr", ErrUnsupported},
	} {
		_, err := Decode(tc.addr, main)
		if !errors.Is(err, tc.want) {
			t.Errorf("Decode(%q): %v, want %v", tc.addr, err, tc.want)
		}
	}
}

// Outputs without an address, and the P2A anchor which has one (Core's
// rpc_decodescript.py: 5102 4e73 is bcrt1pfeesnyr2tx on regtest).
func TestFromScript(t *testing.T) {
	for _, tc := range []struct {
		script, p, want string
	}{
		{"51024e73", "regtest", "bcrt1pfeesnyr2tx"},
		{"2103b0da749730dc9b4b1f4a14d6902877a92541f5368778853d9c4a0cb7802dcfb2ac", "main", ""}, // P2PK
		{"6a00", "main", ""},
		{"0015751e76e8199196d454941c45d1b3a323f1433bd6aa", "main", ""}, // v0, 21 bytes
		{"", "main", ""},
	} {
		s, _ := hex.DecodeString(tc.script)
		got, ok := FromScript(s, net(t, tc.p))
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("FromScript(%s) = %q %v, want %q", tc.script, got, ok, tc.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
		"BC1SW50QGDZ25J", "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c", "2NC2hEhe28ULKAJkW5MjZ3jtTMJdvXmByvK", "bcrt1pfeesnyr2tx"} {
		f.Add(s)
	}
	nets := params.All()
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range nets {
			script, err := Decode(s, p)
			if err != nil {
				var ae *Error
				if !errors.As(err, &ae) || (ae.Kind != ErrMalformed && ae.Kind != ErrChecksum && ae.Kind != ErrWrongNetwork && ae.Kind != ErrUnsupported) {
					t.Fatalf("%q: untyped error %v", s, err)
				}
				continue
			}
			// Whatever decodes encodes back to the canonical form of s.
			enc, ok := FromScript(script, p)
			if !ok {
				t.Fatalf("%q decoded to %x, which has no address", s, script)
			}
			if enc != s && enc != strings.ToLower(s) {
				t.Fatalf("%q -> %x -> %q", s, script, enc)
			}
		}
	})
}
