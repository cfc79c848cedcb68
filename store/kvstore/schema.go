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
	k := make([]byte, 33)
	k[0] = prefix
	copy(k[1:], h[:])
	return k
}

// encodeIndexEntry serializes a block-index entry: header (80) ‖ status
// (uint32 LE) ‖ reject reason (rest).
func encodeIndexEntry(dst []byte, e *validate.IndexEntry) []byte {
	dst = e.Header.AppendTo(dst)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(e.Status))
	return append(dst, e.RejectReason...)
}

// indexEntrySize is the length of e's encodeIndexEntry.
func indexEntrySize(e *validate.IndexEntry) int { return wire.HeaderSize + 4 + len(e.RejectReason) }

// decodeIndexEntry parses encodeIndexEntry's output.
func decodeIndexEntry(v []byte) (validate.IndexEntry, error) {
	if len(v) < wire.HeaderSize+4 {
		return validate.IndexEntry{}, fmt.Errorf("kvstore: index entry of %d bytes", len(v))
	}
	h, err := wire.ParseHeader(v)
	if err != nil {
		return validate.IndexEntry{}, err
	}
	return validate.IndexEntry{
		Header:       h,
		Status:       validate.BlockStatus(binary.LittleEndian.Uint32(v[wire.HeaderSize:])),
		RejectReason: string(v[wire.HeaderSize+4:]),
	}, nil
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
	it, err := s.kv.NewIterator(backends.PrefixRange([]byte{prefixIndex}))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for it.Next() {
		e, err := decodeIndexEntry(it.Value())
		if err != nil {
			return nil, fmt.Errorf("kvstore: index entry %x: %w", it.Key(), err)
		}
		p.Index = append(p.Index, e)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	s.tip = p.Tip
	return p, nil
}
