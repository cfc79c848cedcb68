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
package mainnetgen
