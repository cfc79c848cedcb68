package descriptor

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"utxod/address"
	"utxod/params"
)

type coreCases struct {
	Check []struct {
		Line    int        `json:"line"`
		Prv     string     `json:"prv"`
		Pub     string     `json:"pub"`
		Flags   int        `json:"flags"`
		Scripts [][]string `json:"scripts"`
	} `json:"check"`
	Unparsable []struct {
		Line  int    `json:"line"`
		Prv   string `json:"prv"`
		Pub   string `json:"pub"`
		Error string `json:"error"`
	} `json:"unparsable"`
	Infer []struct {
		Line    int         `json:"line"`
		Script  string      `json:"script"`
		Desc    string      `json:"desc"`
		Scripts []string    `json:"scripts"`
		Origins [][2]string `json:"origins"`
	} `json:"infer"`
	Multipath []struct {
		Line         int          `json:"line"`
		Prv          string       `json:"prv"`
		Pub          string       `json:"pub"`
		ExpandedPubs []string     `json:"expanded_pubs"`
		Flags        []int        `json:"flags"`
		Scripts      [][][]string `json:"scripts"`
	} `json:"multipath"`
}

// Core's flag bits (descriptor_tests.cpp).
const (
	flagRange    = 1
	flagHardened = 2
)

func loadCore(t *testing.T) coreCases {
	t.Helper()
	raw, err := os.ReadFile("testdata/descriptor_tests.json")
	if err != nil {
		t.Fatal(err)
	}
	var c coreCases
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// equalDescriptor is descriptor_tests.cpp's EqualDescriptor: the checksum
// is ignored when only one side has one.
func equalDescriptor(a, b string) bool {
	ac := len(a) > 9 && a[len(a)-9] == '#'
	bc := len(b) > 9 && b[len(b)-9] == '#'
	if ac != bc {
		if ac {
			a = a[:len(a)-9]
		}
		if bc {
			b = b[:len(b)-9]
		}
	}
	return a == b
}

// useH is UseHInsteadOfApostrophe.
func useH(d string) string {
	body, sum, has := strings.Cut(d, "#")
	body = strings.ReplaceAll(body, "'", "h")
	if has && sum != "" {
		return AddChecksum(body)
	}
	return body
}

// hasWIF reports a descriptor with a WIF private key (this package takes
// none), so only its public form can be checked.
func hasWIF(d string) bool {
	for _, p := range []string{"(L", "(K", "(5", "]L", "]K", ",L", ",K", "(c"} {
		if strings.Contains(d, p) {
			return true
		}
	}
	return false
}

func expandHex(t *testing.T, d *Descriptor, pos uint32) []string {
	t.Helper()
	scripts, err := d.Expand(pos, NewProvider())
	if err != nil {
		t.Fatalf("Expand(%d): %v", pos, err)
	}
	out := make([]string, len(scripts))
	for i, s := range scripts {
		out[i] = hex.EncodeToString(s)
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCoreCheck runs descriptor_tests.cpp's Check cases for the supported
// functions: the public descriptor string round-trips (the xprv form
// serializes to the public one), and expansion gives Core's scripts at
// each position; hardened derivation needs the xprv.
func TestCoreCheck(t *testing.T) {
	main := params.MainNet()
	c := loadCore(t)
	if len(c.Check) < 20 {
		t.Fatalf("only %d cases", len(c.Check))
	}
	for _, tc := range c.Check {
		for _, variant := range []struct{ prv, pub string }{{tc.Prv, tc.Pub}, {useH(tc.Prv), useH(tc.Pub)}} {
			forms := []string{variant.pub}
			if !hasWIF(variant.prv) {
				forms = append(forms, variant.prv)
			}
			for fi, form := range forms {
				descs, err := Parse(form, main)
				if err != nil {
					t.Errorf("line %d: Parse(%s): %v", tc.Line, form, err)
					continue
				}
				d := descs[0]
				if !equalDescriptor(variant.pub, d.String()) {
					t.Errorf("line %d: String() = %s, want %s", tc.Line, d.String(), variant.pub)
				}
				if d.IsRange() != (tc.Flags&flagRange != 0) {
					t.Errorf("line %d: IsRange %v", tc.Line, d.IsRange())
				}
				if tc.Flags&flagHardened != 0 && fi == 0 {
					if _, err := d.Expand(0, NewProvider()); !errors.Is(err, ErrPrivateKeyNeeded) {
						t.Errorf("line %d: hardened xpub expansion: %v", tc.Line, err)
					}
					continue
				}
				n := 3
				if tc.Flags&flagRange != 0 {
					n = len(tc.Scripts)
				}
				for i := 0; i < n; i++ {
					want := tc.Scripts[0]
					if tc.Flags&flagRange != 0 {
						want = tc.Scripts[i]
					}
					if got := expandHex(t, d, uint32(i)); !sameStrings(got, want) {
						t.Errorf("line %d %s pos %d:\n got %v\nwant %v", tc.Line, form, i, got, want)
					}
				}
			}
		}
	}
}

// TestCoreUnparsable: every CheckUnparsable descriptor is refused. Where
// this package supports the function, the message is Core's.
func TestCoreUnparsable(t *testing.T) {
	main := params.MainNet()
	c := loadCore(t)
	var compared int
	for _, tc := range c.Unparsable {
		for _, form := range []string{tc.Pub, tc.Prv} {
			descs, err := Parse(form, main)
			if err == nil {
				// Some need expansion to fail (Core parses, then refuses).
				_, err = descs[0].Expand(0, NewProvider())
			}
			if err == nil {
				t.Errorf("line %d: %s accepted", tc.Line, form)
				continue
			}
			var de *Error
			if !errors.As(err, &de) {
				t.Errorf("line %d: untyped error %v", tc.Line, err)
				continue
			}
			if form == tc.Pub && de.Kind != ErrUnsupported {
				compared++
				if de.Msg != tc.Error {
					t.Errorf("line %d: %s\n got %q\nwant %q", tc.Line, form, de.Msg, tc.Error)
				}
			}
		}
	}
	if compared < 20 {
		t.Errorf("compared only %d messages with Core's", compared)
	}
}

// TestCoreInfer runs CheckInferDescriptor: the provider holds the given
// scripts and keys (with origins where given).
func TestCoreInfer(t *testing.T) {
	c := loadCore(t)
	for _, tc := range c.Infer {
		prov := NewProvider()
		for _, s := range tc.Scripts {
			b, _ := hex.DecodeString(s)
			prov.addScript(b)
		}
		for _, o := range tc.Origins {
			pub, _ := hex.DecodeString(o[0])
			id := hash160(pub)
			prov.pubkeys[id] = pub
			if o[1] != "" {
				parts := strings.Split(o[1], "/")
				var origin KeyOrigin
				fp, _ := hex.DecodeString(parts[0])
				copy(origin.Fingerprint[:], fp)
				for _, e := range parts[1:] {
					h := strings.HasSuffix(e, "h") || strings.HasSuffix(e, "'")
					v, err := parseUint32(strings.TrimRight(e, "h'"))
					if err != nil {
						t.Fatal(err)
					}
					if h {
						v |= HardenedBit
					}
					origin.Path = append(origin.Path, v)
				}
				prov.origins[id] = originEntry{pub: pub, origin: origin}
			}
		}
		s, _ := hex.DecodeString(tc.Script)
		if got, want := Infer(s, prov, params.MainNet()), AddChecksum(tc.Desc); got != want {
			t.Errorf("line %d: Infer = %s, want %s", tc.Line, got, want)
		}
	}
}

func TestCoreMultipath(t *testing.T) {
	main := params.MainNet()
	c := loadCore(t)
	for _, tc := range c.Multipath {
		descs, err := Parse(tc.Prv, main)
		if err != nil {
			t.Errorf("line %d: %v", tc.Line, err)
			continue
		}
		if len(descs) != len(tc.ExpandedPubs) {
			t.Errorf("line %d: %d descriptors, want %d", tc.Line, len(descs), len(tc.ExpandedPubs))
			continue
		}
		for i, d := range descs {
			if !equalDescriptor(tc.ExpandedPubs[i], d.String()) {
				t.Errorf("line %d #%d: %s, want %s", tc.Line, i, d.String(), tc.ExpandedPubs[i])
			}
			flags := tc.Flags[0]
			if len(tc.Flags) > 1 {
				flags = tc.Flags[i]
			}
			n := 1
			if flags&flagRange != 0 {
				n = len(tc.Scripts[i])
			}
			for pos := 0; pos < n; pos++ {
				if got := expandHex(t, d, uint32(pos)); !sameStrings(got, tc.Scripts[i][pos]) {
					t.Errorf("line %d #%d pos %d: %v, want %v", tc.Line, i, pos, got, tc.Scripts[i][pos])
				}
			}
		}
	}
}

// Checksums Core's tests and RPC help state.
func TestChecksum(t *testing.T) {
	for _, tc := range []struct{ desc, sum string }{
		// descriptor_tests.cpp "Checksums".
		{"sh(multi(2,[00000000/111'/222]xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc,xprv9uPDJpEQgRQfDcW7BkF7eTya6RPxXeJCqCJGHuCJ4GiRVLzkTXBAJMu2qaMWPrS7AANYqdq6vcBcBUdJCVVFceUvJFjaPdGZ2y9WACViL4L/0))", "ggrsrxfy"},
		{"sh(multi(2,[00000000/111'/222]xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL,xpub68NZiKmJWnxxS6aaHmn81bvJeTESw724CRDs6HbuccFQN9Ku14VQrADWgqbhhTHBaohPX4CjNLf9fq9MYo6oDaPPLPxSb7gwQN3ih19Zm4Y/0))", "tjg09x5t"},
		{"sh(multi(3,[00000000/111'/222]xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL,xpub68NZiKmJWnxxS6aaHmn81bvJeTESw724CRDs6HbuccFQN9Ku14VQrADWgqbhhTHBaohPX4CjNLf9fq9MYo6oDaPPLPxSb7gwQN3ih19Zm4Y/0))", "d4x0uxyv"},
		// scantxoutset's RPC example (rpc/blockchain.cpp).
		{"raw(76a91411b366edfc0a8b66feebae5c2e25a7b6a5d1cf3188ac)", "fm24fxxy"},
		// rpc_scantxoutset.py's reported descriptors.
		{"pkh([0c5f9a1e/0h/0h/0]026dbd8b2315f296d36e6b6920b1579ca75569464875c7ebe869b536a7d9503c8c)", "rthll0rg"},
	} {
		if got, ok := Checksum(tc.desc); !ok || got != tc.sum {
			t.Errorf("Checksum(%.40s...) = %s, want %s", tc.desc, got, tc.sum)
		}
	}
	if _, ok := Checksum("pk(\x01)"); ok {
		t.Error("checksum of a non-descriptor character")
	}
	// A wrong checksum is ErrChecksum with Core's message.
	_, err := Parse("raw(76a91411b366edfc0a8b66feebae5c2e25a7b6a5d1cf3188ac)#fm24fxxz", params.MainNet())
	if !errors.Is(err, ErrChecksum) || err.Error() != "Provided checksum 'fm24fxxz' does not match computed checksum 'fm24fxxy'" {
		t.Errorf("bad checksum: %v", err)
	}
}

// The descriptors rpc_scantxoutset.py asserts for its tprv/tpub scans: the
// inferred "desc" of each match, with the master fingerprint and the full
// path in the origin.
func TestScantxoutsetDescs(t *testing.T) {
	const (
		tprv = "tprv8ZgxMBicQKsPd7Uf69XL1XwhmjHopUGep8GuEiJDZmbQz6o58LninorQAfcKZWARbtRtfnLcJ5MQ2AtHcQJCCRUcMRvmDUjyEmNUWwx8UbK"
		tpub = "tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B"
	)
	reg := params.RegTest()
	for _, tc := range []struct {
		obj  ScanObject
		want map[string]string // address -> desc
	}{
		{ScanObject{Desc: "combo(" + tprv + "/0h/0h/*)", Range: &Range{End: 1499}}, map[string]string{
			"mqS9Rpg8nNLAzxFExsgFLCnzHBsoQ3PRM6": "pkh([0c5f9a1e/0h/0h/0]026dbd8b2315f296d36e6b6920b1579ca75569464875c7ebe869b536a7d9503c8c)#rthll0rg",
			"mnTg5gVWr3rbhHaKjJv7EEEc76ZqHgSj4S": "pkh([0c5f9a1e/0h/0h/1]033e6f25d76c00bedb3a8993c7d5739ee806397f0529b1b31dda31ef890f19a60c)#mcjajulr",
		}},
		{ScanObject{Desc: "combo(" + tprv + "/1/1/0)"}, map[string]string{
			"mtfUoUax9L4tzXARpw1oTGxWyoogp52KhJ": "pkh([0c5f9a1e/1/1/0]03e1c5b6e650966971d7e71ef2674f80222752740fc1dfd63bbbd220d2da9bd0fb)#cxmct4w8",
		}},
		{ScanObject{Desc: "combo(" + tpub + "/1/1/*)", Range: &Range{End: 1500}}, map[string]string{
			"mtfUoUax9L4tzXARpw1oTGxWyoogp52KhJ": "pkh([0c5f9a1e/1/1/0]03e1c5b6e650966971d7e71ef2674f80222752740fc1dfd63bbbd220d2da9bd0fb)#cxmct4w8",
			"mpQ8rokAhp1TAtJQR6F6TaUmjAWkAWYYBq": "pkh([0c5f9a1e/1/1/1500]03832901c250025da2aebae2bfb38d5c703a57ab66ad477f9c578bfbcd78abca6f)#vchwd07g",
			"mxp7w7j8S1Aq6L8StS2PqVvtt4HGxXEvdy": "pkh([0c5f9a1e/1/1/1]030d820fc9e8211c4169be8530efbc632775d8286167afd178caaf1089b77daba7)#z2t3ypsa",
		}},
	} {
		needles, err := Expand(context.Background(), []ScanObject{tc.obj}, reg, 1_000_000)
		if err != nil {
			t.Fatalf("%s: %v", tc.obj.Desc, err)
		}
		byScript := make(map[string]string)
		for _, n := range needles {
			byScript[string(n.Script)] = n.Desc
		}
		for addr, want := range tc.want {
			s, err := address.Decode(addr, reg)
			if err != nil {
				t.Fatal(err)
			}
			if got := byScript[string(s)]; got != want {
				t.Errorf("%s: %s desc %q, want %q", tc.obj.Desc[:20], addr, got, want)
			}
		}
	}
}

func TestExpandLimits(t *testing.T) {
	reg := params.RegTest()
	const tpub = "tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B"
	// Core's range checks and messages (rpc_scantxoutset.py).
	for _, tc := range []struct {
		r    Range
		want string
	}{
		{Range{End: -1}, "End of range is too high"},
		{Range{-1, 10, true}, "Range should be greater or equal than 0"},
		{Range{(2 << 32) - 1000000, 2 << 32, true}, "End of range is too high"},
		{Range{2, 1, true}, "Range specified as [begin,end] must not have begin after end"},
		{Range{0, 1000001, true}, "Range is too large"},
	} {
		_, err := Expand(context.Background(), []ScanObject{{Desc: "desc", Range: &tc.r}}, reg, 100)
		if !errors.Is(err, ErrRange) || err.Error() != tc.want {
			t.Errorf("range %v: %v, want %q", tc.r, err, tc.want)
		}
	}
	// Hardened children of an xpub need the private key.
	if _, err := Expand(context.Background(), []ScanObject{{Desc: "pkh(" + tpub + "/*')"}}, reg, 10000); !errors.Is(err, ErrPrivateKeyNeeded) {
		t.Errorf("/*' from a tpub: %v", err)
	}
	// The script budget.
	if _, err := Expand(context.Background(), []ScanObject{{Desc: "combo(" + tpub + "/*)"}}, reg, 100); !errors.Is(err, ErrTooManyScripts) {
		t.Errorf("over budget: %v", err)
	}
	// Cancellation.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Expand(ctx, []ScanObject{{Desc: "pkh(" + tpub + "/*)"}}, reg, 10000); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// A non-ranged descriptor ignores the range (one position).
	n, err := Expand(context.Background(), []ScanObject{{Desc: "pkh(" + tpub + ")", Range: &Range{End: 500}}}, reg, 10)
	if err != nil || len(n) != 1 {
		t.Errorf("non-ranged: %d needles, %v", len(n), err)
	}
}

// The first description of a script wins, and a later object's keys do not
// change it (Core's std::map emplace).
func TestExpandFirstDescWins(t *testing.T) {
	reg := params.RegTest()
	const key = "03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd"
	h := hash160(mustHex(t, key))
	addr, _ := address.FromScript(address.P2PKHScript(h[:]), reg)
	needles, err := Expand(context.Background(), []ScanObject{{Desc: "addr(" + addr + ")"}, {Desc: "pkh(" + key + ")"}}, reg, 10)
	if err != nil || len(needles) != 1 {
		t.Fatalf("%d needles, %v", len(needles), err)
	}
	if want := AddChecksum("addr(" + addr + ")"); needles[0].Desc != want {
		t.Errorf("desc %s, want %s", needles[0].Desc, want)
	}
	// The other order: pkh with the key's own fingerprint as origin.
	needles, _ = Expand(context.Background(), []ScanObject{{Desc: "pkh(" + key + ")"}, {Desc: "addr(" + addr + ")"}}, reg, 10)
	if want := AddChecksum("pkh([" + hex.EncodeToString(h[:4]) + "]" + key + ")"); needles[0].Desc != want {
		t.Errorf("desc %s, want %s", needles[0].Desc, want)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"pkh(02c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5)",
		"combo([01234567/1h/2]xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB/<0;1>/*)#abcdefgh",
		"sh(wpkh(xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB/0/*'))",
		"tr(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)",
		"addr(bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4)", "raw(deadbeef)", "wsh(pkh(03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd))",
	} {
		f.Add(s)
	}
	main := params.MainNet()
	f.Fuzz(func(t *testing.T, s string) {
		descs, err := Parse(s, main)
		if err != nil {
			var de *Error
			if !errors.As(err, &de) || de.Msg == "" {
				t.Fatalf("%q: untyped error %v", s, err)
			}
			return
		}
		for _, d := range descs {
			// What parses prints as something that parses to the same string.
			again, err := Parse(d.String(), main)
			if err != nil || again[0].String() != d.String() {
				t.Fatalf("%q -> %q -> %v", s, d.String(), err)
			}
			if scripts, err := d.Expand(0, NewProvider()); err == nil {
				for _, sc := range scripts {
					_ = Infer(sc, nil, main)
				}
			}
		}
	})
}
