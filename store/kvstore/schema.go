package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"utxod/backends"
	"utxod/store"
	"utxod/validate"
	"utxod/wire"
)

// Key layout of the persistent chainstate (docs/formats.md). One byte of
// prefix, then the hash in internal byte order.
const (
	prefixCoins = 'c' // txid → v5 record of its unspent outputs
	prefixUndo  = 'u' // block hash → undo record
	prefixBlock = 'b' // block hash → raw block (side branches, recent blocks)
	prefixIndex = 'i' // block hash → index entry
	// block hash → location of the raw block in the block files
	// (blockfile.go: file, offset, length)
	prefixBlockLoc = 'f'
	// block hash → location of its undo record in the rev files
	// (undofile.go)
	prefixUndoLoc = 'r'
	prefixMeta    = 'm'
)

// ownPrefixes are the key prefixes of the schema; an Index uses another.
var ownPrefixes = []byte{prefixCoins, prefixUndo, prefixBlock, prefixIndex, prefixMeta, prefixBlockLoc, prefixUndoLoc}

var (
	keyTip     = []byte("mtip")
	keyStats   = []byte("mstats")
	keyGenesis = []byte("mgenesis")
	keySchema  = []byte("mschema")
)

// schemaVersion is the persistent layout version (v5 coin records).
const schemaVersion = 5

// hashKey returns a fresh prefix ‖ hash key.
func hashKey(prefix byte, h wire.Hash) []byte {
	return appendHashKey(make([]byte, 0, 33), prefix, h)
}

// appendHashKey appends hashKey(prefix, h) to dst.
func appendHashKey(dst []byte, prefix byte, h wire.Hash) []byte {
	return append(append(dst, prefix), h[:]...)
}

// encodeIndexEntry serializes a block-index entry: header (80) ‖ status
// (uint32 LE) ‖ [0x00 ‖ tx count ‖ size ‖ weight (uint32 LE each), when
// the stats are known] ‖ reject reason (rest). A reject reason is text
// and never starts with 0x00, so entries written before the stats (and
// entries without them) read as they always did.
func encodeIndexEntry(dst []byte, e *validate.IndexEntry) []byte {
	dst = e.Header.AppendTo(dst)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(e.Status))
	if e.Stats != (validate.BlockStats{}) {
		dst = append(dst, indexStatsMark)
		dst = binary.LittleEndian.AppendUint32(dst, e.Stats.TxCount)
		dst = binary.LittleEndian.AppendUint32(dst, e.Stats.Size)
		dst = binary.LittleEndian.AppendUint32(dst, e.Stats.Weight)
	}
	return append(dst, e.RejectReason...)
}

// indexStatsMark opens the stats of an index entry.
const (
	indexStatsMark = 0x00
	indexStatsSize = 1 + 3*4
)

// indexEntrySize is the length of e's encodeIndexEntry.
func indexEntrySize(e *validate.IndexEntry) int {
	n := wire.HeaderSize + 4 + len(e.RejectReason)
	if e.Stats != (validate.BlockStats{}) {
		n += indexStatsSize
	}
	return n
}

// decodeIndexEntry parses encodeIndexEntry's output into e, without
// allocating unless there is a reject reason.
func decodeIndexEntry(v []byte, e *validate.IndexEntry) error {
	if len(v) < wire.HeaderSize+4 {
		return fmt.Errorf("kvstore: index entry of %d bytes", len(v))
	}
	h, err := wire.ParseHeader(v)
	if err != nil {
		return err
	}
	*e = validate.IndexEntry{Header: h, Status: validate.BlockStatus(binary.LittleEndian.Uint32(v[wire.HeaderSize:]))}
	rest := v[wire.HeaderSize+4:]
	if len(rest) > 0 && rest[0] == indexStatsMark {
		if len(rest) < indexStatsSize {
			return fmt.Errorf("kvstore: index entry's stats of %d bytes", len(rest))
		}
		e.Stats = validate.BlockStats{
			TxCount: binary.LittleEndian.Uint32(rest[1:]),
			Size:    binary.LittleEndian.Uint32(rest[5:]),
			Weight:  binary.LittleEndian.Uint32(rest[9:]),
		}
		rest = rest[indexStatsSize:]
	}
	if len(rest) > 0 {
		e.RejectReason = string(rest)
	}
	return nil
}

// walkIndex is Persisted.Index: one iterator over the 'i' keys, each entry
// decoded into the same IndexEntry.
func (s *Store) walkIndex(fn func(*validate.IndexEntry) error) error {
	it, err := s.kv.NewIterator(backends.PrefixRange([]byte{prefixIndex}))
	if err != nil {
		return err
	}
	defer it.Close()
	var e validate.IndexEntry
	for it.Next() {
		if err := decodeIndexEntry(it.Value(), &e); err != nil {
			return fmt.Errorf("kvstore: index entry %x: %w", it.Key(), err)
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
	return it.Err()
}

// Load implements store.Store.
func (s *Store) Load() (*store.Persisted, error) {
	tip, err := s.kv.Get(keyTip)
	if errors.Is(err, backends.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := &store.Persisted{}
	copy(p.Tip[:], tip)
	schema, err := s.kv.Get(keySchema)
	if err != nil {
		return nil, fmt.Errorf("kvstore: schema version: %w", err)
	}
	if len(schema) != 4 || binary.LittleEndian.Uint32(schema) != schemaVersion {
		return nil, fmt.Errorf("kvstore: datadir has schema %x, this build reads %d", schema, schemaVersion)
	}
	g, err := s.kv.Get(keyGenesis)
	if err != nil {
		return nil, fmt.Errorf("kvstore: genesis: %w", err)
	}
	copy(p.Genesis[:], g)
	st, err := s.kv.Get(keyStats)
	if err != nil {
		return nil, fmt.Errorf("kvstore: stats: %w", err)
	}
	if err := p.Stats.UnmarshalBinary(st); err != nil {
		return nil, err
	}
	if p.Snapshot, err = loadSnapshotBase(s.kv); err != nil {
		return nil, err
	}
	p.Index = s.walkIndex
	s.tip = p.Tip
	return p, nil
}
