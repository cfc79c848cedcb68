package params

import (
	"fmt"
	"math/big"
	"time"

	"utxod/wire"
)

// Params are the consensus parameters of one Bitcoin network. Values follow
// Bitcoin Core's src/kernel/chainparams.cpp; a height of 0 means "active from
// genesis" (always on).
type Params struct {
	Name  string  // main, testnet3, testnet4, signet, regtest
	Magic [4]byte // block-file and P2P message start

	GenesisBlock []byte    // the raw serialized genesis block
	GenesisHash  wire.Hash // hash of GenesisBlock's header

	PowLimit              *big.Int // highest allowed target
	PowLimitBits          uint32   // PowLimit in compact form
	TargetTimespan        time.Duration
	TargetSpacing         time.Duration
	PowAllowMinDifficulty bool // testnet: 20-minute rule for min-difficulty blocks
	PowNoRetargeting      bool // regtest: difficulty never changes
	EnforceBIP94          bool // testnet4: timewarp fix and retarget from the first block of the period

	SubsidyHalvingInterval int32
	CoinbaseMaturity       int32

	// BIP16Exception is the single block (mainnet and testnet3 each have
	// one) Core validates without P2SH: its script flags are SCRIPT_VERIFY_NONE.
	BIP16Exception wire.Hash
	// TaprootException is the single mainnet block Core validates with
	// P2SH|WITNESS but without TAPROOT (Core's script_flag_exceptions). Core
	// otherwise applies P2SH, WITNESS and TAPROOT script rules to every block.
	TaprootException wire.Hash
	BIP34Height      int32
	BIP34Hash        wire.Hash
	BIP65Height      int32
	BIP66Height      int32
	CSVHeight        int32 // BIP68, BIP112, BIP113
	SegwitHeight     int32 // BIP141, BIP143, BIP147
	TaprootHeight    int32 // BIP341, BIP342 (mainnet: 709632)

	// BIP30Exceptions are the blocks (height → hash) whose coinbase overwrote
	// an unspent one; Core skips the BIP30 check for exactly these.
	BIP30Exceptions map[int32]wire.Hash

	// SignetChallenge is the block-signing script for signet (nil elsewhere).
	SignetChallenge []byte

	// DefaultAssumeValid is Core's defaultAssumeValid: the block whose
	// ancestors' scripts Core skips by default under assume-valid (zero on
	// regtest and custom signets: none). Not consensus: it only decides
	// whether scripts are verified (validate.AssumeValid), never what is
	// valid.
	DefaultAssumeValid wire.Hash
	// MinimumChainWork is Core's nMinimumChainWork: the work the best header
	// must have before assume-valid may skip any script (nil: zero).
	MinimumChainWork *big.Int

	// Address and key encodings (Core's base58Prefixes and bech32_hrp).
	// They are not consensus but belong to the network: an address of one
	// network must not decode on another.
	Base58PubKeyHash byte    // P2PKH version byte (PUBKEY_ADDRESS)
	Base58ScriptHash byte    // P2SH version byte (SCRIPT_ADDRESS)
	Base58SecretKey  byte    // WIF version byte (SECRET_KEY)
	ExtPubKeyVersion [4]byte // BIP32 xpub/tpub version (EXT_PUBLIC_KEY)
	ExtSecKeyVersion [4]byte // BIP32 xprv/tprv version (EXT_SECRET_KEY)
	Bech32HRP        string  // segwit address human-readable part
}

// ByName returns the parameters for a network name. Accepted names: main
// (mainnet), testnet3 (test, testnet), testnet4, signet, regtest.
func ByName(name string) (*Params, error) {
	switch name {
	case "main", "mainnet":
		return MainNet(), nil
	case "test", "testnet", "testnet3":
		return TestNet3(), nil
	case "testnet4":
		return TestNet4(), nil
	case "signet":
		return SigNet(), nil
	case "regtest":
		return RegTest(), nil
	}
	return nil, fmt.Errorf("params: unknown network %q (want main, testnet3, testnet4, signet or regtest)", name)
}

// DifficultyAdjustmentInterval is the number of blocks between retargets
// (Core's DifficultyAdjustmentInterval: TargetTimespan / TargetSpacing; 2016
// everywhere but regtest, where it is 144).
func (p *Params) DifficultyAdjustmentInterval() int32 {
	if p.TargetSpacing <= 0 {
		return 1
	}
	return int32(p.TargetTimespan / p.TargetSpacing)
}

// Subsidy returns the block subsidy in satoshis at height (Core's GetBlockSubsidy).
func (p *Params) Subsidy(height int32) int64 {
	halvings := height / p.SubsidyHalvingInterval
	if halvings >= 64 {
		return 0
	}
	return (50 * 100_000_000) >> uint(halvings)
}

// All returns fresh parameters of every network ByName knows, in the order
// main, testnet3, testnet4, signet (default challenge), regtest.
func All() []*Params {
	return []*Params{MainNet(), TestNet3(), TestNet4(), SigNet(), RegTest()}
}
