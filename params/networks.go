package params

import (
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"time"

	"utxod/wire"
)

// The network constructors below transcribe Bitcoin Core's
// src/kernel/chainparams.cpp (CMainParams, CTestNetParams, CTestNet4Params,
// SigNetParams, CRegTestParams). nMinimumChainWork and defaultAssumeValid
// are Core master's (v31.99: the copy in sedited/rust-bitcoinkernel 1e2ece2,
// libbitcoinkernel-sys/bitcoin); regtest has neither. Each call returns a
// fresh *Params the caller may modify (e.g. regtest activation heights, or
// EnforceBIP94 to mimic `-test=bip94`).

// coin is the number of satoshis in one bitcoin (Core's COIN).
const coin = 100_000_000

// satoshiTimestamp is the message of the mainnet, testnet3, signet and
// regtest genesis coinbase.
const satoshiTimestamp = "The Times 03/Jan/2009 Chancellor on brink of second bailout for banks"

// satoshiPubKey is the public key paid by those genesis coinbases.
const satoshiPubKey = "04678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5f"

// testnet4Timestamp is the message of the testnet4 genesis coinbase.
const testnet4Timestamp = "03/May/2024 000000000000000000001ebd58c244970b3aa9d783bb001011fbe8ea8e98e00e"

// DefaultSignetChallenge is the block-signing script of the default (public)
// signet: a 1-of-2 bare multisig.
const DefaultSignetChallenge = "512103ad5e0edad18cb1f0fc0d28a3d4f1f3e445640337489abb10404f2d1e086be430210359ef5021964fe22d6f8e05b2463c9540ce96883fe3b278760f048f5189f2e6c452ae"

const (
	opChecksig   = 0xac
	opPushdata1  = 0x4c
	opPushdata2  = 0x4d
	twoWeeks     = 14 * 24 * time.Hour
	tenMinutes   = 10 * time.Minute
	mainPowLimit = "00000000ffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
)

// BIP32 extended-key versions shared by every test network (tpub, tprv).
var (
	testExtPubKey = [4]byte{0x04, 0x35, 0x87, 0xcf}
	testExtSecKey = [4]byte{0x04, 0x35, 0x83, 0x94}
)

// MainNet returns the parameters of Bitcoin mainnet.
func MainNet() *Params {
	return Params{
		Name:  "main",
		Magic: [4]byte{0xf9, 0xbe, 0xb4, 0xd9},

		GenesisBlock: satoshiGenesis(1231006505, 2083236893, 0x1d00ffff, 1),

		PowLimit:              mustBig(mainPowLimit),
		PowLimitBits:          0x1d00ffff,
		TargetTimespan:        twoWeeks,
		TargetSpacing:         tenMinutes,
		PowAllowMinDifficulty: false,
		PowNoRetargeting:      false,
		EnforceBIP94:          false,

		SubsidyHalvingInterval: 210000,
		CoinbaseMaturity:       100,

		BIP16Exception:   mustHash("00000000000002dc756eebf4f49723ed8d30cc28a5f108eb94b1ba88ac4f9c22"),
		TaprootException: mustHash("0000000000000000000f14c35b2d841e986ab5441de8c585d5ffe55ea1e395ad"),
		BIP34Height:      227931,
		BIP34Hash:        mustHash("000000000000024b89b42a942fe0d9fea3bb44ab7bd1b19115dd6a759c0808b8"),
		BIP65Height:      388381, // 000000000000000004c2b624ed5d7756c508d90fd0da2c7c679febfa6c4735f0
		BIP66Height:      363725, // 00000000000000000379eaa19dce8c9b722d46ae6a57c2f1a988119488b50931
		CSVHeight:        419328, // 000000000000000004a1b34462cb8aeebd5799177f7a29cf28f2d1961716b5b5
		SegwitHeight:     481824, // 0000000000000000001c8018d9cb3b742ef25114f27563e3fc4a1902167f9893
		TaprootHeight:    709632, // BIP9 min_activation_height

		BIP30Exceptions: map[int32]wire.Hash{
			91842: mustHash("00000000000a4d0a398161ffc163c503763b1f4360639393e0e4c8e300e0caec"),
			91880: mustHash("00000000000743f190a18c5577a3c2d2a1f610ae9601ac046a38084ccb7cd721"),
		},

		MinimumChainWork:   mustBig("0000000000000000000000000000000000000001128750f82f4c366153a3a030"),
		DefaultAssumeValid: mustHash("00000000000000000000ccebd6d74d9194d8dcdc1d177c478e094bfad51ba5ac"), // 938343

		Base58PubKeyHash: 0x00,
		Base58ScriptHash: 0x05,
		Base58SecretKey:  0x80,
		ExtPubKeyVersion: [4]byte{0x04, 0x88, 0xb2, 0x1e},
		ExtSecKeyVersion: [4]byte{0x04, 0x88, 0xad, 0xe4},
		Bech32HRP:        "bc",
	}.withGenesisHash()
}

// TestNet3 returns the parameters of testnet (version 3).
func TestNet3() *Params {
	return Params{
		Name:  "testnet3",
		Magic: [4]byte{0x0b, 0x11, 0x09, 0x07},

		GenesisBlock: satoshiGenesis(1296688602, 414098458, 0x1d00ffff, 1),

		PowLimit:              mustBig(mainPowLimit),
		PowLimitBits:          0x1d00ffff,
		TargetTimespan:        twoWeeks,
		TargetSpacing:         tenMinutes,
		PowAllowMinDifficulty: true,
		PowNoRetargeting:      false,
		EnforceBIP94:          false,

		SubsidyHalvingInterval: 210000,
		CoinbaseMaturity:       100,

		BIP16Exception: mustHash("00000000dd30457c001f4095d208cc1296b0eed002427aa599874af7a432b105"),
		BIP34Height:    21111,
		BIP34Hash:      mustHash("0000000023b3a96d3484e5abb3755c413e7d41500f8e2a5c3f0dd01299cd8ef8"),
		BIP65Height:    581885, // 00000000007f6655f22f98e72ed80d8b06dc761d5da09df0fa1dc4be4f861eb6
		BIP66Height:    330776, // 000000002104c8c45e99a8853285a3b592602a3ccde2b832481da85e9e4ba182
		CSVHeight:      770112, // 00000000025e930139bac5c6c31a403776da130831ab85be56578f3fa75369bb
		SegwitHeight:   834624, // 00000000002b980fcd729daaa248fd9316a5200e9b367f4ff2c42453e84201ca
		// Core's taproot deployment on testnet3 has min_activation_height 0
		// and GetBlockScriptFlags applies the taproot rules to every block
		// (testnet3 lists no taproot exception), so it is on from genesis.
		TaprootHeight: 0,

		MinimumChainWork:   mustBig("0000000000000000000000000000000000000000000017dde1c649f3708d14b6"),
		DefaultAssumeValid: mustHash("000000007a61e4230b28ac5cb6b5e5a0130de37ac1faf2f8987d2fa6505b67f4"), // 4842348

		Base58PubKeyHash: 0x6f,
		Base58ScriptHash: 0xc4,
		Base58SecretKey:  0xef,
		ExtPubKeyVersion: testExtPubKey,
		ExtSecKeyVersion: testExtSecKey,
		Bech32HRP:        "tb",
	}.withGenesisHash()
}

// TestNet4 returns the parameters of testnet4 (BIP94).
func TestNet4() *Params {
	script := append(pushData(make([]byte, 33)), opChecksig)
	return Params{
		Name:  "testnet4",
		Magic: [4]byte{0x1c, 0x16, 0x3f, 0x28},

		GenesisBlock: genesisBlock(testnet4Timestamp, script, 1714777860, 393743547, 0x1d00ffff, 1, 50*coin),

		PowLimit:              mustBig(mainPowLimit),
		PowLimitBits:          0x1d00ffff,
		TargetTimespan:        twoWeeks,
		TargetSpacing:         tenMinutes,
		PowAllowMinDifficulty: true,
		PowNoRetargeting:      false,
		EnforceBIP94:          true,

		SubsidyHalvingInterval: 210000,
		CoinbaseMaturity:       100,

		BIP34Height:   1,
		BIP65Height:   1,
		BIP66Height:   1,
		CSVHeight:     1,
		SegwitHeight:  1,
		TaprootHeight: 0, // ALWAYS_ACTIVE

		MinimumChainWork:   mustBig("0000000000000000000000000000000000000000000009a0fe15d0177d086304"),
		DefaultAssumeValid: mustHash("0000000002368b1e4ee27e2e85676ae6f9f9e69579b29093e9a82c170bf7cf8a"), // 123613

		Base58PubKeyHash: 0x6f,
		Base58ScriptHash: 0xc4,
		Base58SecretKey:  0xef,
		ExtPubKeyVersion: testExtPubKey,
		ExtSecKeyVersion: testExtSecKey,
		Bech32HRP:        "tb",
	}.withGenesisHash()
}

// SigNet returns the parameters of the default public signet.
func SigNet() *Params {
	challenge, _ := hex.DecodeString(DefaultSignetChallenge)
	p := SigNetWithChallenge(challenge)
	// Core sets these only for the default challenge: a custom signet's
	// chain is unknown, so it has neither (SigNetParams).
	p.MinimumChainWork = mustBig("00000000000000000000000000000000000000000000000000000b463ea0a4b8")
	p.DefaultAssumeValid = mustHash("00000008414aab61092ef93f1aacc54cf9e9f16af29ddad493b908a01ff5c329") // 293175
	return p
}

// SigNetWithChallenge returns signet parameters for a custom block-signing
// challenge (Core's -signetchallenge). The message start is the first four
// bytes of the SHA-256d of the serialized challenge, as in Core.
func SigNetWithChallenge(challenge []byte) *Params {
	ch := append([]byte(nil), challenge...)
	ser := wire.AppendCompactSize(nil, uint64(len(ch)))
	ser = append(ser, ch...)
	digest := wire.DoubleSHA256(ser)
	var magic [4]byte
	copy(magic[:], digest[:4])
	return Params{
		Name:  "signet",
		Magic: magic,

		GenesisBlock: satoshiGenesis(1598918400, 52613770, 0x1e0377ae, 1),

		PowLimit:              mustBig("00000377ae000000000000000000000000000000000000000000000000000000"),
		PowLimitBits:          0x1e0377ae,
		TargetTimespan:        twoWeeks,
		TargetSpacing:         tenMinutes,
		PowAllowMinDifficulty: false,
		PowNoRetargeting:      false,
		EnforceBIP94:          false,

		SubsidyHalvingInterval: 210000,
		CoinbaseMaturity:       100,

		BIP34Height:   1,
		BIP65Height:   1,
		BIP66Height:   1,
		CSVHeight:     1,
		SegwitHeight:  1,
		TaprootHeight: 0, // ALWAYS_ACTIVE

		SignetChallenge: ch,

		Base58PubKeyHash: 0x6f,
		Base58ScriptHash: 0xc4,
		Base58SecretKey:  0xef,
		ExtPubKeyVersion: testExtPubKey,
		ExtSecKeyVersion: testExtSecKey,
		Bech32HRP:        "tb",
	}.withGenesisHash()
}

// RegTest returns the parameters of regtest with Core's default activation
// heights (no -testactivationheight overrides). Core master uses a one-day
// retarget timespan on regtest; with PowNoRetargeting it only sets the
// difficulty-adjustment interval (144 blocks), which matters for BIP94 when a
// caller turns EnforceBIP94 on (Core's -test=bip94).
func RegTest() *Params {
	return Params{
		Name:  "regtest",
		Magic: [4]byte{0xfa, 0xbf, 0xb5, 0xda},

		GenesisBlock: satoshiGenesis(1296688602, 2, 0x207fffff, 1),

		PowLimit:              mustBig("7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
		PowLimitBits:          0x207fffff,
		TargetTimespan:        24 * time.Hour,
		TargetSpacing:         tenMinutes,
		PowAllowMinDifficulty: true,
		PowNoRetargeting:      true,
		EnforceBIP94:          false,

		SubsidyHalvingInterval: 150,
		CoinbaseMaturity:       100,

		BIP34Height:   1,
		BIP65Height:   1,
		BIP66Height:   1,
		CSVHeight:     1,
		SegwitHeight:  0,
		TaprootHeight: 0, // ALWAYS_ACTIVE

		Base58PubKeyHash: 0x6f,
		Base58ScriptHash: 0xc4,
		Base58SecretKey:  0xef,
		ExtPubKeyVersion: testExtPubKey,
		ExtSecKeyVersion: testExtSecKey,
		Bech32HRP:        "bcrt",
	}.withGenesisHash()
}

// withGenesisHash fills GenesisHash from GenesisBlock's header and returns a
// pointer to the (copied) value.
func (p Params) withGenesisHash() *Params {
	h, err := wire.ParseHeader(p.GenesisBlock)
	if err == nil {
		p.GenesisHash = h.BlockHash()
	}
	return &p
}

// satoshiGenesis builds a genesis block paying 50 BTC to Satoshi's key with
// the Times headline, like Core's short CreateGenesisBlock overload.
func satoshiGenesis(nTime, nonce, bits uint32, version int32) []byte {
	pub, _ := hex.DecodeString(satoshiPubKey)
	script := append(pushData(pub), opChecksig)
	return genesisBlock(satoshiTimestamp, script, nTime, nonce, bits, version, 50*coin)
}

// genesisBlock serializes a one-transaction block exactly as Core's
// CreateGenesisBlock builds it: a version-1 coinbase whose scriptSig is
// `486604799 CScriptNum(4) <timestamp>` and whose single output pays reward
// to outScript, under a header with a null parent and the coinbase txid as
// merkle root.
func genesisBlock(timestamp string, outScript []byte, nTime, nonce, bits uint32, version int32, reward int64) []byte {
	// scriptSig: CScript() << 486604799 pushes the 4-byte minimal script
	// number ff ff 00 1d; << CScriptNum(4) pushes the one byte 04.
	sig := pushData([]byte{0xff, 0xff, 0x00, 0x1d})
	sig = append(sig, pushData([]byte{0x04})...)
	sig = append(sig, pushData([]byte(timestamp))...)

	tx := binary.LittleEndian.AppendUint32(nil, 1) // version
	tx = wire.AppendCompactSize(tx, 1)             // one input
	tx = append(tx, make([]byte, 32)...)           // null prevout hash
	tx = binary.LittleEndian.AppendUint32(tx, 0xffffffff)
	tx = wire.AppendCompactSize(tx, uint64(len(sig)))
	tx = append(tx, sig...)
	tx = binary.LittleEndian.AppendUint32(tx, 0xffffffff) // sequence
	tx = wire.AppendCompactSize(tx, 1)                    // one output
	tx = binary.LittleEndian.AppendUint64(tx, uint64(reward))
	tx = wire.AppendCompactSize(tx, uint64(len(outScript)))
	tx = append(tx, outScript...)
	tx = binary.LittleEndian.AppendUint32(tx, 0) // lock time

	hdr := wire.Header{
		Version:    version,
		MerkleRoot: wire.DoubleSHA256(tx),
		Time:       nTime,
		Bits:       bits,
		Nonce:      nonce,
	}
	blk := hdr.AppendTo(make([]byte, 0, wire.HeaderSize+1+len(tx)))
	blk = wire.AppendCompactSize(blk, 1)
	return append(blk, tx...)
}

// pushData returns the script push of b with the smallest opcode, as
// CScript's operator<< for byte vectors does.
func pushData(b []byte) []byte {
	var out []byte
	switch n := len(b); {
	case n < opPushdata1:
		out = append(out, byte(n))
	case n <= 0xff:
		out = append(out, opPushdata1, byte(n))
	default:
		out = append(out, opPushdata2)
		out = binary.LittleEndian.AppendUint16(out, uint16(n))
	}
	return append(out, b...)
}

// mustHash parses a display-order hash literal written in this file; a bad
// literal is a programming error caught by the package tests.
func mustHash(s string) wire.Hash {
	h, err := wire.ParseHash(s)
	if err != nil {
		panic("params: bad hash literal " + s)
	}
	return h
}

// mustBig parses a hexadecimal literal written in this file.
func mustBig(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic("params: bad hex literal " + s)
	}
	return n
}
