package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"utxod/backends"
	"utxod/store"
	"utxod/wire"
)

// blockFiles appends raw blocks to numbered flat files (blk00000.dat, …),
// as Core appends blocks to its blk files instead of putting them in its
// database: a block is written once, never compacted or compressed. The KV
// keeps only each block's location (prefixBlockLoc), written by the flush
// after the files are synced (Core's FlushStateToDisk syncs the block files
// before the index that points into them), so a durable location never
// points at data that is not. Data appended and never referenced (a crash
// before the flush, a deleted block) stays in its file, unread, until no
// location points into that file any more: then, once a flush has made
// that durable, the file is deleted (as Core's pruning deletes whole blk
// files), so the files hold about the blocks the chainstate keeps.
//
// append and sync run on the Store's owner; read may run concurrently with
// them (Block under the chainstate's read lock).
type blockFiles struct {
	dir    string
	prefix string // of the file names: "blk", or "rev" for undo records (undofile.go)
	mu     sync.Mutex
	files  map[uint32]*os.File
	cur    uint32 // file being appended to
	size   int64  // its length
	dirty  map[uint32]bool
	// live counts the locations (stored, or pending for the next flush)
	// that point into each file.
	live map[uint32]int
	// writeAt is (*os.File).WriteAt; tests replace it to meet a full disk.
	writeAt func(h *os.File, b []byte, off int64) (int, error)
	// aheadErr is the failure of a sync started by syncAhead; every later
	// sync returns it, since a retried fdatasync may report success for
	// pages whose write-out already failed.
	aheadErr error
}

// blockFileMax is the size past which a new file is started (Core's
// MAX_BLOCKFILE_SIZE; a variable for tests).
var blockFileMax int64 = 128 << 20

// blockLocLen is the length of an encoded location: file (uint32 LE),
// offset (uint64 LE), length (uint32 LE).
const blockLocLen = 16

// name is file n's name.
func (f *blockFiles) name(n uint32) string { return fmt.Sprintf("%s%05d.dat", f.prefix, n) }

// numbered returns the files of dir named prefix plus a number, by number.
func numbered(dir, prefix string) (map[uint32]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, prefix+"*.dat"))
	if err != nil {
		return nil, err
	}
	out := map[uint32]string{}
	for _, name := range names {
		var n uint32
		if _, err := fmt.Sscanf(strings.TrimSuffix(filepath.Base(name), ".dat"), prefix+"%05d", &n); err == nil {
			out[n] = name
		}
	}
	return out, nil
}

// openBlockFiles opens (creating) dir and appends after the last file's end.
func openBlockFiles(dir string) (*blockFiles, error) { return openFlatFiles(dir, "blk") }

// openFlatFiles opens (creating) dir for files named prefix00000.dat, …
func openFlatFiles(dir, prefix string) (*blockFiles, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("kvstore: %s files: %w", prefix, err)
	}
	names, err := numbered(dir, prefix)
	if err != nil {
		return nil, err
	}
	f := &blockFiles{dir: dir, prefix: prefix, files: map[uint32]*os.File{}, dirty: map[uint32]bool{}, live: map[uint32]int{}}
	for n := range names {
		f.cur = max(f.cur, n)
	}
	h, err := f.file(f.cur)
	if err != nil {
		return nil, err
	}
	st, err := h.Stat()
	if err != nil {
		return nil, fmt.Errorf("kvstore: block files: %w", err)
	}
	f.size = st.Size()
	return f, nil
}

// file returns file n, opened read-write (created if absent only when it
// is the current file). Callers hold mu or are the only user.
func (f *blockFiles) file(n uint32) (*os.File, error) {
	if h, ok := f.files[n]; ok {
		return h, nil
	}
	flags := os.O_RDWR
	if n == f.cur {
		flags |= os.O_CREATE
	}
	h, err := os.OpenFile(filepath.Join(f.dir, f.name(n)), flags, 0o644)
	if err != nil {
		return nil, blockFileErr(f.prefix+" files", err)
	}
	f.files[n] = h
	return h, nil
}

// blockFileErr wraps a block-file error; a full disk is backends.ErrDiskFull
// as the stores' own (503 disk-full from the API, the import's message).
func blockFileErr(op string, err error) error {
	if backends.IsDiskFull(err) {
		err = backends.DiskFull(err)
	}
	return fmt.Errorf("kvstore: %s: %w", op, err)
}

// append writes raw at the end of the current file (starting a new one past
// blockFileMax) and returns its encoded location.
func (f *blockFiles) append(raw []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.size > 0 && f.size+int64(len(raw)) > blockFileMax {
		f.cur++
		f.size = 0
	}
	h, err := f.file(f.cur)
	if err != nil {
		return nil, err
	}
	write := (*os.File).WriteAt
	if f.writeAt != nil {
		write = f.writeAt
	}
	if _, err := write(h, raw, f.size); err != nil {
		return nil, blockFileErr("append to "+f.name(f.cur), err)
	}
	loc := make([]byte, blockLocLen)
	binary.LittleEndian.PutUint32(loc, f.cur)
	binary.LittleEndian.PutUint64(loc[4:], uint64(f.size))
	binary.LittleEndian.PutUint32(loc[12:], uint32(len(raw)))
	f.size += int64(len(raw))
	f.dirty[f.cur] = true
	f.live[f.cur]++
	return loc, nil
}

// drop forgets one location pointing into loc's file.
func (f *blockFiles) drop(loc []byte) {
	if len(loc) != blockLocLen {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := binary.LittleEndian.Uint32(loc); f.live[n] > 0 {
		f.live[n]--
	}
}

// prune deletes every file but the current one that no location points
// into. Call it only when the locations in the KV are the ones counted
// (after a successful flush, or at open).
func (f *blockFiles) prune() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	names, err := numbered(f.dir, f.prefix)
	if err != nil {
		return err
	}
	for n, name := range names {
		if n >= f.cur || f.live[n] > 0 {
			continue
		}
		if h, ok := f.files[n]; ok {
			h.Close()
			delete(f.files, n)
		}
		delete(f.dirty, n)
		delete(f.live, n)
		if err := os.Remove(name); err != nil {
			return fmt.Errorf("kvstore: prune %s files: %w", f.prefix, err)
		}
	}
	return nil
}

// read returns the block at loc, a fresh slice, after checking that its
// header hashes to h (a location is only written after its data is synced,
// so a mismatch means the files were damaged or replaced).
func (f *blockFiles) read(h wire.Hash, loc []byte) ([]byte, error) {
	raw, where, err := f.readAt(loc)
	if err != nil {
		return nil, fmt.Errorf("kvstore: block %s: %w", h, err)
	}
	if len(raw) < wire.HeaderSize || wire.DoubleSHA256(raw[:wire.HeaderSize]) != h {
		return nil, fmt.Errorf("kvstore: block %s in %s: %w", h, where, errBadBlockFile)
	}
	return raw, nil
}

// readAt returns the bytes at loc, a fresh slice, and where they are (for
// messages).
func (f *blockFiles) readAt(loc []byte) (raw []byte, where string, err error) {
	if len(loc) != blockLocLen {
		return nil, "", fmt.Errorf("location of %d bytes", len(loc))
	}
	n := binary.LittleEndian.Uint32(loc)
	off := binary.LittleEndian.Uint64(loc[4:])
	size := binary.LittleEndian.Uint32(loc[12:])
	where = fmt.Sprintf("%s at %d", f.name(n), off)
	f.mu.Lock()
	file, err := f.file(n)
	f.mu.Unlock()
	if err != nil {
		return nil, where, err
	}
	raw = make([]byte, size)
	if _, err := file.ReadAt(raw, int64(off)); err != nil {
		return nil, where, fmt.Errorf("%s: %w", where, err)
	}
	return raw, where, nil
}

var errBadBlockFile = errors.New("bytes are not the block (damaged block file)")

// sync fdatasyncs every file appended to since the last sync.
func (f *blockFiles) sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncLocked()
}

// syncAhead starts sync on a goroutine; appends and reads wait for it, and
// its failure is returned by every later sync.
func (f *blockFiles) syncAhead() {
	f.mu.Lock()
	go func() {
		defer f.mu.Unlock()
		if err := f.syncLocked(); err != nil && f.aheadErr == nil {
			f.aheadErr = err
		}
	}()
}

func (f *blockFiles) syncLocked() error {
	if f.aheadErr != nil {
		return f.aheadErr
	}
	for n := range f.dirty {
		if err := f.files[n].Sync(); err != nil {
			return blockFileErr("sync "+f.name(n), err)
		}
		delete(f.dirty, n)
	}
	return nil
}

func (f *blockFiles) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for n, h := range f.files {
		errs = append(errs, h.Close())
		delete(f.files, n)
	}
	return errors.Join(errs...)
}

// useBlockFiles keeps raw blocks in flat files under dir (created if
// absent) instead of the KV (Options.BlocksDir).
func (s *Store) useBlockFiles(dir string) error {
	f, err := s.openLocated(dir, "blk", prefixBlockLoc)
	if err != nil {
		return err
	}
	s.bf = f
	return nil
}

// openLocated opens the flat files named prefix under dir, counts the
// locations the KV keeps under locPrefix in the files they point into, and
// prunes the files none points into.
func (s *Store) openLocated(dir, prefix string, locPrefix byte) (*blockFiles, error) {
	f, err := openFlatFiles(dir, prefix)
	if err != nil {
		return nil, err
	}
	it, err := s.kv.NewIterator(backends.PrefixRange([]byte{locPrefix}))
	if err != nil {
		f.close()
		return nil, err
	}
	for it.Next() {
		if v := it.Value(); len(v) == blockLocLen {
			f.live[binary.LittleEndian.Uint32(v)]++
		}
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		f.close()
		return nil, fmt.Errorf("kvstore: %s file locations: %w", prefix, err)
	}
	if err := f.prune(); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// storedLoc returns h's flat-file location: pending in locs, else stored
// under prefix in the KV (nil: none).
func (s *Store) storedLoc(locs map[wire.Hash][]byte, prefix byte, h wire.Hash) ([]byte, error) {
	if loc, ok := locs[h]; ok {
		return loc, nil
	}
	v, err := s.kv.Get(hashKey(prefix, h))
	if errors.Is(err, backends.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// readLoc resolves h's location for a read: pending in locs, else stored
// under prefix. deleted: a pending deletion; loc nil otherwise: none (the
// record, if any, is in the KV).
func (s *Store) readLoc(locs map[wire.Hash][]byte, prefix byte, h wire.Hash) (loc []byte, deleted bool, err error) {
	loc, pending := locs[h]
	switch {
	case pending && loc == nil:
		return nil, true, nil
	case pending && len(loc) == 0: // locInKV
		return nil, false, nil
	case pending:
		return loc, false, nil
	}
	v, err := s.kv.Get(hashKey(prefix, h))
	if errors.Is(err, backends.ErrNotFound) {
		return nil, false, nil
	}
	return v, false, err
}

// dropLoc forgets h's location (storedLoc), if it has one, in f's live
// counts.
func (s *Store) dropLoc(f *blockFiles, locs map[wire.Hash][]byte, prefix byte, h wire.Hash) error {
	loc, err := s.storedLoc(locs, prefix, h)
	if err != nil {
		return err
	}
	f.drop(loc)
	return nil
}

// deleteLocated forgets h's block (block) or undo record wherever it is:
// its location in f (nil: no flat files in use), pending in locs or stored
// under prefix, and its copy in the KV.
func (s *Store) deleteLocated(f *blockFiles, locs map[wire.Hash][]byte, prefix byte, block bool, h wire.Hash) error {
	if f != nil {
		if err := s.dropLoc(f, locs, prefix, h); err != nil {
			return err
		}
		locs[h] = nil
	}
	s.setPending(block, h, nil)
	return nil
}

// putBlockFile appends raw to the block files; its location is written by
// the next flush.
func (s *Store) putBlockFile(h wire.Hash, raw []byte) error {
	if err := s.dropLoc(s.bf, s.locs, prefixBlockLoc, h); err != nil {
		return err
	}
	return s.putLocated(s.bf, s.locs, true, h, raw, raw)
}

// putLocated appends data (h's block, or its framed undo record) to f and
// keeps its location in locs for the next flush. On a full disk the record
// is not lost, and not refused: kvRec goes to the KV as without flat files,
// whose writes (early, or the next flush) meet the full disk as the store's
// own writes do — the flush fails with disk-full, pebble and RocksDB stop,
// bbolt carries on once space is freed.
func (s *Store) putLocated(f *blockFiles, locs map[wire.Hash][]byte, block bool, h wire.Hash, data, kvRec []byte) error {
	loc, err := f.append(data)
	if errors.Is(err, backends.ErrDiskFull) {
		locs[h] = locInKV
		s.setPending(block, h, kvRec)
		return nil
	}
	if err != nil {
		return err
	}
	locs[h] = loc
	return nil
}

// locInKV is the pending location of a block kept in the KV because its
// block-file append failed: the flush deletes any stored location.
var locInKV = []byte{}

// blockFromFile returns h's block when a location for it is pending or
// stored (found false: none is).
func (s *Store) blockFromFile(h wire.Hash) (raw []byte, found bool, err error) {
	loc, deleted, err := s.readLoc(s.locs, prefixBlockLoc, h)
	switch {
	case err != nil:
		return nil, true, err
	case deleted:
		return nil, true, store.ErrNoBlock
	case loc == nil:
		return nil, false, nil
	}
	if s.bf == nil {
		return nil, true, fmt.Errorf("kvstore: block %s is in a block file, and the store was opened without them", h)
	}
	raw, err = s.bf.read(h, loc)
	return raw, true, err
}
