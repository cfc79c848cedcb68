// Package utxo holds the coin model (Outpoint, Coin), the view boundary the validator reads coins through, the in-memory coin set, the persistent record codec and the chainstate digests (MuHash3072, hash_serialized_3, statistics). It imports no store.
package utxo
