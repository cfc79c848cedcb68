package params

import (
	"bytes"
	"encoding/hex"
	"math/big"
	"testing"
	"time"

	"utxod/wire"
)

// Expected genesis hashes and merkle roots are the values Bitcoin Core
// asserts in src/kernel/chainparams.cpp; magic bytes are its pchMessageStart
// (signet: the documented default-signet magic 0a03cf40).
func TestGenesisBlocks(t *testing.T) {
	tests := []struct {
		name   string
		p      *Params
		hash   string
		merkle string
		magic  string
		size   int
	}{
		{"main", MainNet(), "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f",
			"4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b", "f9beb4d9", 285},
		{"testnet3", TestNet3(), "000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943",
			"4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b", "0b110907", 285},
		{"testnet4", TestNet4(), "00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043",
			"7aa0a7ae1e223414cb807e40cd57e667b718e42aaf9306db9102fe28912b7b4e", "1c163f28", 0},
		{"signet", SigNet(), "00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6",
			"4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b", "0a03cf40", 285},
		{"regtest", RegTest(), "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206",
			"4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b", "fabfb5da", 285},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.p.Name != tc.name {
				t.Errorf("Name = %q", tc.p.Name)
			}
			h, err := wire.ParseHeader(tc.p.GenesisBlock)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.BlockHash().String(); got != tc.hash {
				t.Errorf("genesis hash %s, want %s", got, tc.hash)
			}
			if got := tc.p.GenesisHash.String(); got != tc.hash {
				t.Errorf("GenesisHash %s, want %s", got, tc.hash)
			}
			if got := h.MerkleRoot.String(); got != tc.merkle {
				t.Errorf("merkle root %s, want %s", got, tc.merkle)
			}
			// The single coinbase's txid must be the merkle root.
			tx := tc.p.GenesisBlock[wire.HeaderSize+1:]
			if got := wire.DoubleSHA256(tx); got != h.MerkleRoot {
				t.Errorf("coinbase txid %s != merkle root", got)
			}
			if got := hex.EncodeToString(tc.p.Magic[:]); got != tc.magic {
				t.Errorf("magic %s, want %s", got, tc.magic)
			}
			if h.PrevBlock != (wire.Hash{}) {
				t.Error("genesis parent not null")
			}
			if h.Bits != tc.p.PowLimitBits {
				t.Errorf("genesis bits %08x, PowLimitBits %08x", h.Bits, tc.p.PowLimitBits)
			}
			if tc.size != 0 && len(tc.p.GenesisBlock) != tc.size {
				t.Errorf("genesis size %d, want %d", len(tc.p.GenesisBlock), tc.size)
			}
		})
	}
}

// The mainnet genesis coinbase scriptSig as printed in the comment above
// CreateGenesisBlock in Core's chainparams.cpp.
func TestMainnetGenesisCoinbase(t *testing.T) {
	const sig = "04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73"
	want, _ := hex.DecodeString(sig)
	if !bytes.Contains(MainNet().GenesisBlock, want) {
		t.Fatal("mainnet genesis does not contain Core's coinbase scriptSig")
	}
}

// Values transcribed from Core's chainparams.cpp (master).
func TestConsensusValues(t *testing.T) {
	type row struct {
		p                                                  *Params
		bip34, bip65, bip66, csv, segwit, taproot, halving int32
		minDiff, noRetarget, bip94                         bool
		timespan                                           time.Duration
		interval                                           int32
		powLimit                                           string
	}
	const mainLimit = "00000000ffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	rows := []row{
		{MainNet(), 227931, 388381, 363725, 419328, 481824, 709632, 210000, false, false, false, 14 * 24 * time.Hour, 2016, mainLimit},
		{TestNet3(), 21111, 581885, 330776, 770112, 834624, 0, 210000, true, false, false, 14 * 24 * time.Hour, 2016, mainLimit},
		{TestNet4(), 1, 1, 1, 1, 1, 0, 210000, true, false, true, 14 * 24 * time.Hour, 2016, mainLimit},
		{SigNet(), 1, 1, 1, 1, 1, 0, 210000, false, false, false, 14 * 24 * time.Hour, 2016, "00000377ae000000000000000000000000000000000000000000000000000000"},
		{RegTest(), 1, 1, 1, 1, 0, 0, 150, true, true, false, 24 * time.Hour, 144, "7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},
	}
	for _, r := range rows {
		p := r.p
		t.Run(p.Name, func(t *testing.T) {
			got := []int32{p.BIP34Height, p.BIP65Height, p.BIP66Height, p.CSVHeight, p.SegwitHeight, p.TaprootHeight, p.SubsidyHalvingInterval, p.CoinbaseMaturity, p.DifficultyAdjustmentInterval()}
			want := []int32{r.bip34, r.bip65, r.bip66, r.csv, r.segwit, r.taproot, r.halving, 100, r.interval}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("field %d = %d, want %d (got %v)", i, got[i], want[i], got)
				}
			}
			if p.PowAllowMinDifficulty != r.minDiff || p.PowNoRetargeting != r.noRetarget || p.EnforceBIP94 != r.bip94 {
				t.Errorf("flags minDiff=%v noRetarget=%v bip94=%v", p.PowAllowMinDifficulty, p.PowNoRetargeting, p.EnforceBIP94)
			}
			if p.TargetTimespan != r.timespan || p.TargetSpacing != 10*time.Minute {
				t.Errorf("timespan %v spacing %v", p.TargetTimespan, p.TargetSpacing)
			}
			if got := p.PowLimit.Text(16); got != trimZeros(r.powLimit) {
				t.Errorf("PowLimit %s, want %s", got, r.powLimit)
			}
		})
	}
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func TestMainnetExceptions(t *testing.T) {
	p := MainNet()
	checks := []struct {
		name string
		got  wire.Hash
		want string
	}{
		{"BIP16Exception", p.BIP16Exception, "00000000000002dc756eebf4f49723ed8d30cc28a5f108eb94b1ba88ac4f9c22"},
		{"TaprootException", p.TaprootException, "0000000000000000000f14c35b2d841e986ab5441de8c585d5ffe55ea1e395ad"},
		{"BIP34Hash", p.BIP34Hash, "000000000000024b89b42a942fe0d9fea3bb44ab7bd1b19115dd6a759c0808b8"},
		{"BIP30 91842", p.BIP30Exceptions[91842], "00000000000a4d0a398161ffc163c503763b1f4360639393e0e4c8e300e0caec"},
		{"BIP30 91880", p.BIP30Exceptions[91880], "00000000000743f190a18c5577a3c2d2a1f610ae9601ac046a38084ccb7cd721"},
	}
	for _, c := range checks {
		if c.got.String() != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if len(p.BIP30Exceptions) != 2 {
		t.Errorf("%d BIP30 exceptions", len(p.BIP30Exceptions))
	}
	for _, q := range []*Params{TestNet3(), TestNet4(), SigNet(), RegTest()} {
		if len(q.BIP30Exceptions) != 0 {
			t.Errorf("%s has BIP30 exceptions", q.Name)
		}
	}
	if got := TestNet3().BIP16Exception.String(); got != "00000000dd30457c001f4095d208cc1296b0eed002427aa599874af7a432b105" {
		t.Errorf("testnet3 BIP16Exception %s", got)
	}
}

func TestSignetChallenge(t *testing.T) {
	p := SigNet()
	if hex.EncodeToString(p.SignetChallenge) != DefaultSignetChallenge {
		t.Errorf("challenge %x", p.SignetChallenge)
	}
	for _, q := range []*Params{MainNet(), TestNet3(), TestNet4(), RegTest()} {
		if q.SignetChallenge != nil {
			t.Errorf("%s has a signet challenge", q.Name)
		}
	}
	// A custom challenge changes the magic but not the genesis.
	c := SigNetWithChallenge([]byte{0x51})
	if c.Magic == p.Magic || c.GenesisHash != p.GenesisHash {
		t.Errorf("custom signet magic %x genesis %s", c.Magic, c.GenesisHash)
	}
}

func TestFreshValues(t *testing.T) {
	a, b := MainNet(), MainNet()
	a.BIP30Exceptions[1] = wire.Hash{}
	a.PowLimit.SetInt64(1)
	a.GenesisBlock[0] = 0xff
	if len(b.BIP30Exceptions) != 2 || b.PowLimit.Sign() == 0 || b.PowLimit.Cmp(a.PowLimit) == 0 || b.GenesisBlock[0] != 1 {
		t.Fatal("MainNet() values share state")
	}
}

func TestByName(t *testing.T) {
	for name, want := range map[string]string{
		"main": "main", "mainnet": "main", "test": "testnet3", "testnet": "testnet3", "testnet3": "testnet3",
		"testnet4": "testnet4", "signet": "signet", "regtest": "regtest",
	} {
		p, err := ByName(name)
		if err != nil || p.Name != want {
			t.Errorf("ByName(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := ByName("nope"); err == nil {
		t.Error("ByName(nope) succeeded")
	}
}

func TestSubsidy(t *testing.T) {
	p := MainNet()
	for _, c := range []struct {
		h    int32
		want int64
	}{{0, 50 * coin}, {209999, 50 * coin}, {210000, 25 * coin}, {420000, 1250000000}, {840000, 312500000}, {64 * 210000, 0}} {
		if got := p.Subsidy(c.h); got != c.want {
			t.Errorf("Subsidy(%d) = %d, want %d", c.h, got, c.want)
		}
	}
	if got := RegTest().Subsidy(150); got != 25*coin {
		t.Errorf("regtest Subsidy(150) = %d", got)
	}
}

// The assume-valid defaults are transcribed from Core's chainparams.cpp (see
// networks.go); what can be checked independently is that each default block
// hash carries the proof of work of its network (a mistyped hash would not)
// and that the networks Core gives none (regtest, custom signets) have none.
func TestAssumeValidDefaults(t *testing.T) {
	for _, p := range []*Params{MainNet(), TestNet3(), TestNet4(), SigNet()} {
		t.Run(p.Name, func(t *testing.T) {
			if p.DefaultAssumeValid == (wire.Hash{}) || p.MinimumChainWork == nil || p.MinimumChainWork.Sign() <= 0 {
				t.Fatalf("no default: %s %v", p.DefaultAssumeValid, p.MinimumChainWork)
			}
			h := p.DefaultAssumeValid
			var be [32]byte
			for i := range h {
				be[i] = h[31-i]
			}
			if new(big.Int).SetBytes(be[:]).Cmp(p.PowLimit) > 0 {
				t.Errorf("default assume-valid %s is above the proof-of-work limit", h)
			}
		})
	}
	// Mainnet's block 938343 was mined at a difficulty far above the limit:
	// its hash starts with 20 zero hex digits.
	if s := MainNet().DefaultAssumeValid.String(); s[:20] != "00000000000000000000" {
		t.Errorf("mainnet default %s", s)
	}
	ch, _ := hex.DecodeString("51")
	for _, p := range []*Params{RegTest(), SigNetWithChallenge(ch)} {
		if p.DefaultAssumeValid != (wire.Hash{}) || (p.MinimumChainWork != nil && p.MinimumChainWork.Sign() != 0) {
			t.Errorf("%s: want no assume-valid default, got %s / %v", p.Name, p.DefaultAssumeValid, p.MinimumChainWork)
		}
	}
	a, b := SigNet(), SigNet()
	a.MinimumChainWork.SetInt64(1)
	if b.MinimumChainWork.Cmp(a.MinimumChainWork) == 0 {
		t.Error("SigNet() values share state")
	}
}

// TestAddressPrefixes checks the address and key encodings against Core's
// src/kernel/chainparams.cpp (base58Prefixes, bech32_hrp).
func TestAddressPrefixes(t *testing.T) {
	xpub, xprv := [4]byte{0x04, 0x88, 0xB2, 0x1E}, [4]byte{0x04, 0x88, 0xAD, 0xE4}
	tpub, tprv := [4]byte{0x04, 0x35, 0x87, 0xCF}, [4]byte{0x04, 0x35, 0x83, 0x94}
	for _, tc := range []struct {
		p            *Params
		pkh, sh, wif byte
		extPub       [4]byte
		extSec       [4]byte
		hrp          string
	}{
		{MainNet(), 0, 5, 128, xpub, xprv, "bc"},
		{TestNet3(), 111, 196, 239, tpub, tprv, "tb"},
		{TestNet4(), 111, 196, 239, tpub, tprv, "tb"},
		{SigNet(), 111, 196, 239, tpub, tprv, "tb"},
		{RegTest(), 111, 196, 239, tpub, tprv, "bcrt"},
	} {
		p := tc.p
		if p.Base58PubKeyHash != tc.pkh || p.Base58ScriptHash != tc.sh || p.Base58SecretKey != tc.wif ||
			p.ExtPubKeyVersion != tc.extPub || p.ExtSecKeyVersion != tc.extSec || p.Bech32HRP != tc.hrp {
			t.Errorf("%s: prefixes %d %d %d %x %x %q", p.Name, p.Base58PubKeyHash, p.Base58ScriptHash,
				p.Base58SecretKey, p.ExtPubKeyVersion, p.ExtSecKeyVersion, p.Bech32HRP)
		}
	}
	if n := len(All()); n != 5 {
		t.Errorf("All() has %d networks", n)
	}
	custom := SigNetWithChallenge([]byte{0x51})
	if custom.Bech32HRP != "tb" || custom.Base58PubKeyHash != 111 {
		t.Errorf("custom signet prefixes %+v", custom)
	}
}
