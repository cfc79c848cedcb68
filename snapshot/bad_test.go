package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"utxod/params"
	"utxod/utxo"
	"utxod/wire"
)

// entry200File is the dump of Core's CreateBlockChain(200), regtest's
// assumeutxo entry at 200: 200 groups of one coin each.
func entry200File(t testing.TB) ([]byte, [][]byte) {
	t.Helper()
	blocks := fuzzTargetChain(t, 200)
	c := openChain(t, params.RegTest(), "", "")
	connectAll(t, c.cs, blocks)
	return dump(t, c.cs, params.RegTest()), blocks
}

// craft builds a snapshot body by hand: groups of (vout, coin bytes).
type craftGroup struct {
	txid  wire.Hash
	coins []craftCoin
}

type craftCoin struct {
	vout uint64
	ser  []byte // Core's Coin serialization
}

func craft(magic [4]byte, base wire.Hash, count uint64, groups ...craftGroup) []byte {
	out := Metadata{MessageStart: magic, BaseHash: base, Coins: count}.AppendBinary(nil)
	for _, g := range groups {
		out = append(out, g.txid[:]...)
		out = wire.AppendCompactSize(out, uint64(len(g.coins)))
		for _, c := range g.coins {
			out = wire.AppendCompactSize(out, c.vout)
			out = append(out, c.ser...)
		}
	}
	return out
}

func txid(b byte) wire.Hash {
	var h wire.Hash
	h[0], h[31] = b, 0x42
	return h
}

func coreCoin(height uint32, value int64, script []byte) []byte {
	return utxo.AppendCoreCoin(nil, utxo.Coin{Height: height, Value: value, Script: script})
}

// TestBadSnapshots feeds damaged or foreign files to Verify and Load:
// each fails with the sentinel of its cause and Core's message where Core
// has one, and Load leaves neither the datadir nor the staging directory
// behind.
func TestBadSnapshots(t *testing.T) {
	p := params.RegTest()
	good, blocks := entry200File(t)
	entry, _ := p.AssumeUTXOForHeight(200)
	base := entry.BlockHash
	opTrue := []byte{0x51}
	setCount := func(b []byte, n uint64) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint64(b[43:], n)
		return b
	}
	withByte := func(i int, v byte) []byte {
		b := bytes.Clone(good)
		b[i] = v
		return b
	}
	var mainMagic = params.MainNet().Magic
	wrongHash := wire.Hash{1}
	tests := []struct {
		name string
		file []byte
		cfg  func(*LoadConfig)
		kind error
		text string // Core's message, exactly ("" when Core has none)
	}{
		{name: "empty", file: nil, kind: ErrShortMetadata, text: "AutoFile::read: end of file"},
		{name: "short header", file: good[:30], kind: ErrShortMetadata, text: "AutoFile::read: end of file"},
		{name: "magic", file: withByte(3, 'X'), kind: ErrMagic,
			text: "Invalid UTXO set snapshot magic bytes. Please check if this is indeed a snapshot file or if you are using an outdated snapshot format."},
		{name: "old format", file: good[11:], kind: ErrMagic},
		{name: "version", file: withByte(5, 1), kind: ErrVersion, text: "Version of snapshot 1 does not match any of the supported versions."},
		{name: "network", file: append(append(bytes.Clone(good[:7]), mainMagic[:]...), good[11:]...), kind: ErrNetwork,
			text: "The network of the snapshot (main) does not match the network of this node (regtest)."},
		{name: "unknown network", file: withByte(8, 0), kind: ErrUnknownNetwork,
			text: "This snapshot has been created for an unrecognized network. This could be a custom signet, a new testnet or possibly caused by data corruption."},
		{name: "count one too high", file: setCount(good, 201), kind: ErrFormat,
			text: "Bad snapshot format or truncated snapshot after deserializing 200 coins"},
		{name: "count one too low", file: setCount(good, 199), kind: ErrLeftOver,
			text: "Bad snapshot - coins left over after deserializing 199 coins"},
		{name: "count far too low", file: setCount(good, 3), kind: ErrLeftOver,
			text: "Bad snapshot - coins left over after deserializing 3 coins"},
		{name: "truncated in a coin", file: good[:len(good)-10], kind: ErrFormat,
			text: "Bad snapshot format or truncated snapshot after deserializing 199 coins"},
		{name: "truncated in a txid", file: good[:HeaderSize+20], kind: ErrFormat,
			text: "Bad snapshot format or truncated snapshot after deserializing 0 coins"},
		{name: "trailing byte", file: append(bytes.Clone(good), 0), kind: ErrLeftOver,
			text: "Bad snapshot - coins left over after deserializing 200 coins"},
		{name: "base not in table", file: craft(p.Magic, wrongHash, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, opTrue)}}}),
			kind: ErrBaseUnknown,
			text: "assumeutxo block hash in snapshot metadata not recognized (hash: " + wrongHash.String() + "). The following snapshot heights are available: 110, 200, 299"},
		{name: "content hash", file: craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, opTrue)}}}),
			kind: ErrContentHash, text: "Bad snapshot content hash: expected " + entry.HashSerialized.String() + ", got "},
		{name: "expect-hash differs from the table", file: good, cfg: func(c *LoadConfig) { c.ExpectHash = &wrongHash }, kind: ErrContentHash},
		{name: "group larger than the coins left", file: craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, opTrue)}, {1, coreCoin(1, 5, opTrue)}}}),
			kind: ErrCoinsCount, text: "Mismatch in coins count in snapshot metadata and actual snapshot data"},
		{name: "coin younger than the base", file: craft(p.Magic, base, 2, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, opTrue)}}},
			craftGroup{txid(2), []craftCoin{{0, coreCoin(201, 5, opTrue)}}}),
			kind: ErrBadCoin, text: "Bad snapshot data after deserializing 1 coins"},
		{name: "value above MAX_MONEY", file: craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, utxo.MaxMoney+1, opTrue)}}}),
			kind: ErrBadValue, text: "Bad snapshot data after deserializing 0 coins - bad tx out value"},
		{name: "truncated before a count", file: craft(p.Magic, base, 1, craftGroup{txid(1), nil})[:HeaderSize+32],
			kind: ErrFormat, text: "Bad snapshot format or truncated snapshot after deserializing 0 coins"},
		{name: "groups out of order", file: craft(p.Magic, base, 2, craftGroup{txid(2), []craftCoin{{0, coreCoin(1, 5, opTrue)}}},
			craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, opTrue)}}}), kind: ErrGroupOrder},
		{name: "txid repeated", file: craft(p.Magic, base, 2, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, opTrue)}}},
			craftGroup{txid(1), []craftCoin{{1, coreCoin(1, 5, opTrue)}}}), kind: ErrGroupOrder},
		{name: "headers lack the base", file: good, cfg: func(c *LoadConfig) { c.Headers = headerSet(t, p, rawHeaders(blocks[:150])) },
			kind: ErrNoBaseHeader, text: "Did not find snapshot start blockheader " + base.String()},
		{name: "headers with a gap", file: good, cfg: func(c *LoadConfig) {
			c.Headers = headerSet(t, p, rawHeaders(append(append([][]byte{}, blocks[:50]...), blocks[51:]...)))
		}, kind: ErrHeaders},
	}
	// A compact size written in 3 bytes for a value below 253.
	nc := craft(p.Magic, base, 1)
	id1 := txid(1)
	nc = append(nc, id1[:]...)
	nc = append(nc, 0xfd, 0x01, 0x00)
	tests = append(tests, struct {
		name string
		file []byte
		cfg  func(*LoadConfig)
		kind error
		text string
	}{name: "non-canonical group count", file: nc, kind: ErrFormat,
		text: "Bad snapshot format or truncated snapshot after deserializing 0 coins"})

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "datadir")
			cfg := LoadConfig{Network: p, Backend: "pebble", Datadir: dir}
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			_, err := loadFile(t, tc.file, cfg)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("load: %v, want %v", err, tc.kind)
			}
			// The content-hash message ends with the hash found.
			if prefix := strings.HasSuffix(tc.text, "got "); tc.text != "" &&
				(prefix && !strings.HasPrefix(err.Error(), tc.text) || !prefix && err.Error() != tc.text) {
				t.Errorf("load:\n got %q\nwant %q", err, tc.text)
			}
			for _, d := range []string{dir, StagingDir(dir)} {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("%s left behind (%v)", d, err)
				}
			}
		})
	}
}

// TestVerifyBadSnapshots runs Verify on the file-level failures: the same
// errors as Load for everything Verify can check without a store.
func TestVerifyBadSnapshots(t *testing.T) {
	p := params.RegTest()
	good, _ := entry200File(t)
	short := bytes.Clone(good)
	binary.LittleEndian.PutUint64(short[43:], 199)
	for _, tc := range []struct {
		file []byte
		kind error
	}{
		{good[:30], ErrShortMetadata}, {good[:len(good)-1], ErrFormat}, {short, ErrLeftOver}, {append(bytes.Clone(good), 1), ErrLeftOver},
	} {
		if _, err := Verify(bytes.NewReader(tc.file), VerifyOptions{Network: p}); !errors.Is(err, tc.kind) {
			t.Errorf("%d bytes: %v, want %v", len(tc.file), err, tc.kind)
		}
	}
}

// TestEveryFlippedBit flips each bit of a small snapshot in turn: every
// variant must fail to read, or read as a different coin set, or be
// reported as non-canonical — never pass as the original.
func TestEveryFlippedBit(t *testing.T) {
	p := params.RegTest()
	// Keep it small: the first 20 groups of the real file with the count
	// adjusted.
	full, _ := entry200File(t)
	rd, err := NewReader(bytes.NewReader(full), p)
	if err != nil {
		t.Fatal(err)
	}
	var groups []craftGroup
	for i := 0; i < 20; i++ {
		id, coins, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		var cc []craftCoin
		for _, c := range coins {
			cc = append(cc, craftCoin{uint64(c.Index), utxo.AppendCoreCoin(nil, c.Coin)})
		}
		groups = append(groups, craftGroup{id, cc})
	}
	m := rd.Metadata()
	file := craft(m.MessageStart, m.BaseHash, 20, groups...)
	orig, err := Verify(bytes.NewReader(file), VerifyOptions{Network: p, NoMuHash: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range file {
		for bit := 0; bit < 8; bit++ {
			f := bytes.Clone(file)
			f[i] ^= 1 << bit
			sum, err := Verify(bytes.NewReader(f), VerifyOptions{Network: p, NoMuHash: true})
			if err != nil {
				continue
			}
			if sum.HashSerialized3 == orig.HashSerialized3 && sum.Metadata == orig.Metadata && sum.NonCanonical == "" {
				t.Fatalf("byte %d bit %d flipped passes as the original", i, bit)
			}
		}
	}
}

// TestNonCanonicalAccepted: encodings Core's loader reads but its writer
// never produces are read as Core reads them (the same coins, hence the
// same content hash as the canonical file) and reported; a load of such a
// file dumps back in the canonical form.
func TestNonCanonicalAccepted(t *testing.T) {
	p := params.RegTest()
	base := wire.Hash{9}
	h20 := bytes.Repeat([]byte{0x11}, 20)
	pkh := p2pkh(h20)
	raw := func(height uint32, value int64, script []byte) []byte {
		b := utxo.AppendVarInt(nil, uint64(height)<<1)
		b = utxo.AppendVarInt(b, utxo.CompressAmount(uint64(value)))
		b = utxo.AppendVarInt(b, uint64(len(script))+6)
		return append(b, script...)
	}
	offCurve := append(append(utxo.AppendVarInt(nil, 2<<1), utxo.AppendVarInt(nil, utxo.CompressAmount(7))...), 0x04)
	offCurve = append(offCurve, bytes.Repeat([]byte{0x05}, 32)...)
	long := append(utxo.AppendVarInt(nil, 3<<1), utxo.AppendVarInt(nil, utxo.CompressAmount(8))...)
	long = utxo.AppendVarInt(long, 10_001+6)
	long = append(long, bytes.Repeat([]byte{0x61}, 10_001)...)
	tests := []struct {
		name      string
		odd, want []byte
	}{
		{"raw P2PKH", craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, raw(1, 5, pkh)}}}),
			craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, pkh)}}})},
		{"vouts out of key order", craft(p.Magic, base, 2, craftGroup{txid(1), []craftCoin{{3, coreCoin(1, 5, pkh)}, {1, coreCoin(1, 6, pkh)}}}),
			craft(p.Magic, base, 2, craftGroup{txid(1), []craftCoin{{1, coreCoin(1, 6, pkh)}, {3, coreCoin(1, 5, pkh)}}})},
		{"empty group", craft(p.Magic, base, 1, craftGroup{txid(1), nil}, craftGroup{txid(2), []craftCoin{{0, coreCoin(1, 5, pkh)}}}),
			craft(p.Magic, base, 1, craftGroup{txid(2), []craftCoin{{0, coreCoin(1, 5, pkh)}}})},
		{"uncompressed key off the curve", craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, offCurve}}}),
			craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(2, 7, nil)}}})},
		{"script over 10,000 bytes", craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, long}}}),
			craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(3, 8, []byte{0x6a})}}})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			odd, err := Verify(bytes.NewReader(tc.odd), VerifyOptions{Network: p})
			if err != nil {
				t.Fatal(err)
			}
			want, err := Verify(bytes.NewReader(tc.want), VerifyOptions{Network: p})
			if err != nil {
				t.Fatal(err)
			}
			if odd.NonCanonical == "" || want.NonCanonical != "" {
				t.Fatalf("non-canonical reports: %q, %q", odd.NonCanonical, want.NonCanonical)
			}
			if digestJSON(odd.Info()) != digestJSON(want.Info()) {
				t.Fatalf("read as %s\nwant    %s", digestJSON(odd.Info()), digestJSON(want.Info()))
			}
			dir := t.TempDir() + "/d"
			h := want.HashSerialized3
			if _, err := loadFile(t, tc.odd, LoadConfig{Network: p, Backend: "pebble", Datadir: dir, ExpectHash: &h, Height: 100}); err != nil {
				t.Fatal(err)
			}
			c := openChain(t, p, "pebble", dir)
			if got := dump(t, c.cs, p); !bytes.Equal(got, tc.want) {
				t.Fatalf("dump of the loaded state is not the canonical file:\n%x\n%x", got, tc.want)
			}
		})
	}
}

// TestDuplicateOutpointKeepsFirst: Core's EmplaceCoinInternalDANGER keeps
// the first of two coins at one outpoint.
func TestDuplicateOutpointKeepsFirst(t *testing.T) {
	p := params.RegTest()
	base := wire.Hash{9}
	pkh := p2pkh(bytes.Repeat([]byte{0x11}, 20))
	dup := craft(p.Magic, base, 2, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, pkh)}, {0, coreCoin(1, 6, pkh)}}})
	first := craft(p.Magic, base, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, pkh)}}})
	a, err := Verify(bytes.NewReader(dup), VerifyOptions{Network: p})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Verify(bytes.NewReader(first), VerifyOptions{Network: p})
	if err != nil {
		t.Fatal(err)
	}
	if a.NonCanonical == "" || digestJSON(a.Info()) != digestJSON(b.Info()) {
		t.Fatalf("duplicate: %q %s, want %s", a.NonCanonical, digestJSON(a.Info()), digestJSON(b.Info()))
	}
}

// TestMixedHeightsRefused: one txid's coins at two heights cannot come
// from a valid chain, and the store's per-txid records cannot hold them.
func TestMixedHeightsRefused(t *testing.T) {
	p := params.RegTest()
	pkh := p2pkh(bytes.Repeat([]byte{0x11}, 20))
	file := craft(p.Magic, wire.Hash{9}, 2, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, pkh)}, {1, coreCoin(2, 6, pkh)}}})
	h := wire.Hash{1}
	dir := t.TempDir() + "/d"
	_, err := loadFile(t, file, LoadConfig{Network: p, Backend: "pebble", Datadir: dir, ExpectHash: &h, Height: 10})
	if !errors.Is(err, ErrMixedHeights) {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("datadir created")
	}
}

// TestLoadRefusesNonEmptyDatadir: an existing datadir is never touched.
func TestLoadRefusesNonEmptyDatadir(t *testing.T) {
	good, _ := entry200File(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadFile(t, good, LoadConfig{Backend: "pebble", Datadir: dir}); !errors.Is(err, ErrDatadirExists) {
		t.Fatalf("got %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "keep")); err != nil || string(b) != "x" {
		t.Fatal("datadir changed")
	}
	// An empty directory is fine (it is replaced).
	empty := t.TempDir()
	if _, err := loadFile(t, good, LoadConfig{Backend: "pebble", Datadir: empty}); err != nil {
		t.Fatal(err)
	}
}
