// Package snapshot reads and writes Bitcoin Core's UTXO snapshot file, the
// output of dumptxoutset and the input of loadtxoutset (format version 2,
// src/node/utxo_snapshot.h, src/rpc/blockchain.cpp WriteUTXOSnapshot):
// Writer and Dump produce files byte-identical to Core's for the same UTXO
// set; Reader checks a file as Core's loader does, with Core's messages;
// Verify computes a file's gettxoutsetinfo digests and compares them with
// the network's assumeutxo table (params.AssumeUTXOData); Load builds a new
// chainstate datadir from a file, in a staging directory renamed only when
// the load is complete and its content hash verified.
package snapshot
