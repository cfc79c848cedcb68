package snapshot

import (
	"io"

	"utxod/utxo"
	"utxod/wire"
)

// Source is a consistent copy of a coin set (the Scanner of a
// chainstate.CoinSnapshot is one).
type Source interface {
	// Scan calls fn for every coin in hash_serialized_3 order: txids by
	// raw bytes, then vouts numerically.
	Scan(fn func(utxo.Entry) error) error
}

// RecordSource is a Source that can also hand out each txid's v5 record
// (utxo.EncodeRecord) in ascending txid order; rec is valid only during the
// call. Dump prefers it: the record already holds Core's compressed amounts
// and scripts.
type RecordSource interface {
	ScanRecords(fn func(txid wire.Hash, rec []byte) error) error
}

// Dump writes the snapshot of src, whose coin count and base block m
// gives, to w, and returns the number of coins written. Memory stays
// bounded: one txid's coins are buffered at a time.
func Dump(w io.Writer, m Metadata, src Source) (uint64, error) {
	sw, err := NewWriter(w, m)
	if err != nil {
		return 0, err
	}
	if rs, ok := src.(RecordSource); ok {
		err = rs.ScanRecords(sw.WriteRecord)
	} else {
		err = src.Scan(sw.Add)
	}
	if err == nil {
		err = sw.Close()
	}
	return sw.Written(), err
}
