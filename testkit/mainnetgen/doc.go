// Package mainnetgen generates, deterministically and as a stream, a UTXO
// set shaped like Bitcoin mainnet's of 2024–25 as a Bitcoin Core UTXO
// snapshot (dumptxoutset format version 2), with a regtest header chain from
// genesis to the snapshot's base block and the set's statistics and digests
// (gettxoutsetinfo: txouts, transactions, bogosize, total_amount,
// hash_serialized_3, muhash).
//
// The digests are the generator's own: the snapshot encoding (Core's VARINT,
// CompressAmount, ScriptCompression), TxOutSer, hash_serialized_3 and
// MuHash3072 are implemented here from Bitcoin Core's sources
// (src/node/utxo_snapshot.h, src/rpc/blockchain.cpp WriteUTXOSnapshot,
// src/compressor.cpp, src/kernel/coinstats.cpp, src/crypto/muhash.cpp),
// independently of the product's snapshot, utxo and chainstate packages, so
// that a product run over the files checks the product against a second
// implementation. Only wire (header hashing) and params (genesis, message
// starts) come from the product.
//
// The shape (shape.go): script types by era (P2TR first and mostly 330-sat
// dust, then P2WPKH, P2PKH, P2SH, P2WSH, bare multisig, P2PK with
// compressed and uncompressed keys, OP_RETURN-free non-standard scripts
// including raw ones of 122 bytes and more), log-normal values with the
// dust spikes (294, 330, 540, 546, 7,800 sat …), heights skewed to recent,
// mostly one or two coins per txid with a long tail and one txid of 16,600
// coins among vouts 0–19,999 (vouts past 16,512 change the cursor's order),
// and whale scripts of 1 M, 100 k and 10 k coins at mainnet size, scaled
// with the set.
//
// Memory stays bounded whatever the number of coins: txids are drawn in
// ascending order (no sort), and only the txid group being written is held.
//
// Spendable coins (keys.go): a share of the P2WPKH, P2TR and P2PKH coins
// (about 250,000 of them, at least 1 % of the set), chosen by a random
// stream of their own, pay a key of a deterministic pool (N/256 keys, at
// most 65,536, derived on first use) instead of random bytes of the same
// length; they are listed in a side file as the snapshot is written.
//
// Blocks (blocks.go, regtest): DIR/blocks.dat extends the base block with
// blocks Core would accept (BIP34 height, witness commitment, merkle root,
// time above the median time past, regtest's proof of work, real ECDSA and
// BIP340 signatures): first blocks of 2,000 transactions and 4,000 inputs
// spending old coins drawn uniformly from the side file, then blocks
// spending mostly the outputs of the blocks before them. expect.json's
// "blocks" has their hashes and the set's figures after the last one: the
// MuHash updated with the coins spent and created, hash_serialized_3 and the
// counts from a second pass of the generator with the changes merged in.
// The blocks are built with testkit/blockgen (so the product's merkle
// package computes their roots) and signed with btcd's btcec and txscript.
package mainnetgen
