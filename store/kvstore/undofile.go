package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"utxod/store/kvstore/undorec"
	"utxod/utxo"
	"utxod/wire"
)

// Undo records in flat files (Options.UndoDir): as Core appends each
// block's undo data to its rev files instead of its database, an undo record
// is appended once to revNNNNN.dat beside the block files, and the KV keeps
// only its location (prefixUndoLoc), written by the flush after the files
// are synced — the block files' protocol (blockfile.go), with the same
// pruning of files no location points into. Through the KV every record
// went through the write-ahead log, the memtable, its flushes and
// compactions (bench/decisions.md).
//
// A record in a rev file is framed: the block hash (32 bytes), the CRC-32C of
// the record (uint32 LE), the record. A read checks both (Core's rev files
// carry a checksum of the block hash and the undo data for the same reason).

// undoFrameLen is the framing before a record in a rev file.
const undoFrameLen = 32 + 4

var crc32c = crc32.MakeTable(crc32.Castagnoli)

var (
	// errBadUndoFile reports bytes at an undo location that are not the
	// record.
	errBadUndoFile = errors.New("bytes are not the undo record (damaged rev file)")
	// errNoUndoFiles reports a record stored in a rev file of a store
	// opened without Options.UndoDir.
	errNoUndoFiles = errors.New("the undo record is in a rev file, and the store was opened without them")
)

// useUndoFiles keeps undo records in flat files under dir (rev00000.dat, …)
// instead of the KV (Options.UndoDir).
func (s *Store) useUndoFiles(dir string) error {
	f, err := s.openLocated(dir, "rev", prefixUndoLoc)
	if err != nil {
		return err
	}
	s.uf = f
	return nil
}

// putUndo keeps block's undo record (the encoding of d): in the rev files
// when they are in use (its location written by the next flush), else in
// the KV.
func (s *Store) putUndo(block wire.Hash, d *utxo.Delta) error {
	if s.uf == nil {
		s.setPending(false, block, undorec.Encode(nil, d))
		return nil
	}
	if err := s.dropLoc(s.uf, s.undoLocs, prefixUndoLoc, block); err != nil {
		return err
	}
	// Encoded straight after its frame, so the append needs no copy.
	framed := undorec.Encode(make([]byte, undoFrameLen), d)
	rec := framed[undoFrameLen:]
	copy(framed, block[:])
	binary.LittleEndian.PutUint32(framed[32:], crc32.Checksum(rec, crc32c))
	return s.putLocated(s.uf, s.undoLocs, false, block, framed, rec)
}

// deleteUndo forgets block's undo record, wherever it is.
func (s *Store) deleteUndo(block wire.Hash) error {
	return s.deleteLocated(s.uf, s.undoLocs, prefixUndoLoc, false, block)
}

// undoFromFile returns block's undo record when a location for it is
// pending or stored (found false: none is, look in the KV).
func (s *Store) undoFromFile(block wire.Hash) (rec []byte, found bool, err error) {
	loc, deleted, err := s.readLoc(s.undoLocs, prefixUndoLoc, block)
	switch {
	case err != nil || deleted:
		return nil, true, err
	case loc == nil:
		return nil, false, nil
	}
	if s.uf == nil {
		return nil, true, fmt.Errorf("kvstore: block %s: %w", block, errNoUndoFiles)
	}
	raw, where, err := s.uf.readAt(loc)
	if err != nil {
		return nil, true, fmt.Errorf("kvstore: undo record of %s: %w", block, err)
	}
	if len(raw) < undoFrameLen || wire.Hash(raw[:32]) != block ||
		binary.LittleEndian.Uint32(raw[32:]) != crc32.Checksum(raw[undoFrameLen:], crc32c) {
		return nil, true, fmt.Errorf("kvstore: undo record of %s in %s: %w", block, where, errBadUndoFile)
	}
	return raw[undoFrameLen:], true, nil
}
