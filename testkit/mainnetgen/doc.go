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
// Memory stays bounded whatever the number of coins: txids are drawn in
// ascending order (no sort), and only the txid group being written is held.
package mainnetgen
