// Package chaingen generates deterministic, valid regtest block chains for
// tests and benchmarks and streams them in Bitcoin Core's block-file framing
// (network magic fabfb5da, little-endian length, block). testkit/cmd/chaingen is
// its command line.
//
// # Profiles
//
// "early" imitates 2009–2012 mainnet: P2PKH and P2PK outputs over mostly
// uncompressed keys, version-1 transactions with 1–3 inputs and usually a
// payment and a change output, fees of 0, 0.0005 BTC or a small random
// amount, a growing UTXO set (a block spends at most 30% of the spendable
// pool, half its picks among the newest tenth) and blocks whose mean weight
// grows linearly to 2 MWU (≈500 kB) at Config.Ramp (default height 2500),
// each block drawn uniformly up to twice the mean (so up to ~1 MB), and one
// block in 50 past height Ramp/10 filled to the limit (~1 MB) when the pool
// allows.
//
// "modern" mixes P2WPKH, P2SH-P2WPKH, P2WSH 2-of-3 CHECKMULTISIG, P2TR
// key-path (BIP86) and script-path (two-leaf tree; key-path spends of tree
// outputs too), P2PKH, and P2WSH outputs guarded by CLTV or CSV with height
// and time locks; OP_RETURN outputs, consolidations (10–30 inputs),
// fan-outs (10–40 outputs), BIP68 relative locks on ordinary inputs,
// nLockTime by height (anti-fee-sniping) and by time (BIP113: below the
// parent's median time past), spends of outputs created earlier in the same
// block (only outputs of transactions whose inputs are all segwit, whose
// txid is fixed before signing), non-SIGHASH_ALL hash types, and one header
// in 20 timestamped below its parent (still above the median time past).
//
// # Validity
//
// Every signature is real: ECDSA with RFC 6979 nonces (libsecp256k1 under
// cgo, btcec otherwise — byte-identical, see TestECDSASignerMatchesBtcec)
// and BIP340 Schnorr with btcec's deterministic nonces. Keys derive from the
// seed. Proof of work is ground against regtest's 0x207fffff (about two
// hashes a block), the subsidy halves every 150 blocks, coinbases carry the
// BIP34 height and claim exactly subsidy + fees, coinbase outputs are spent
// only after 100 blocks, blocks with witness data carry the BIP141
// commitment, weight and sigop cost stay below Core's limits (by upper
// bounds computed before signing), CLTV/CSV coins are spent only once
// Core's IsFinalTx / CalculateSequenceLocks would accept them.
//
// # Reorgs
//
// Config.Reorgs = K schedules K events. At the fork height F an event
// extends the current chain by d blocks (d in 1..6), then builds a
// competing branch from F: its first d blocks tie (first seen wins, the
// importer stays), its (d+1)-th has more work and the importer must reorg.
// One event in three then extends the original chain by two blocks so it
// wins again (a second reorg that reconnects the blocks the first one
// disconnected). The generator state at F is cloned for the branch, so
// branch transactions spend the same coins differently (double spends
// across branches). The winner is always defined by work; Summary.Tip is it.
//
// # Determinism
//
// All decisions come from one math/rand/v2 PCG seeded from Config.Seed;
// nothing depends on map order, the clock or the number of signing
// workers. The same Config writes the same bytes.
//
// # Memory
//
// Blocks are written as soon as they are solved. The generator keeps the
// spendable pool (≈64 bytes a coin), coins waiting for maturity or a lock,
// the last 11 block times and, during a reorg event, one clone of that
// state.
//
// # btcd as a cross-check
//
// The tests run every generated block through btcd v0.26.2's blockchain
// package (full validation, chaincfg.RegressionNetParams). Its regtest
// parameters compared with Core's (params.RegTest):
//
//	rule                       btcd RegressionNetParams      Core regtest
//	BIP34, BIP65, BIP66        height 1                      height 1
//	CSV (BIP68/112/113)        deployment always active (1)  height 1
//	segwit (BIP141/143/147)    deployment always active (1)  height 0
//	taproot (BIP341/342)       deployment always active (1)  always
//	P2SH (BIP16)               block time ≥ 1333238400       always (no exception block)
//	halving / maturity         150 / 100                     150 / 100
//
// The P2SH row matters: btcd's checkConnectBlock enables P2SH only for
// blocks timestamped at or after txscript.Bip16Activation (2012-04-01), and
// with segwit on but P2SH off its engine rejects every input ("P2SH must be
// enabled to do witness verification"), while Core's GetBlockScriptFlags
// sets P2SH|WITNESS|TAPROOT for every regtest block. Blocks therefore start
// at DefaultStartTime = 1333238400 rather than at the genesis time
// (1296688602); Core accepts either. btcd also keys DERSIG and CLTV script
// flags on the header version (≥3, ≥4); generated headers use version
// 0x20000000. With that, btcd and utxod accept every generated block.
package chaingen
