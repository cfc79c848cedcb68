package utxo

import "bytes"

// RecordArena holds Records in large chunks, append-only: a record is never
// modified in place (a change puts a new copy and releases the old one), so
// slices handed out (coin scripts alias their record) stay valid. Only
// Records go in, so what Get returns is a Record without parsing again. A
// compaction is a new arena the live records are put into; the garbage
// collector frees the old chunks once nothing aliases them. The arena holds
// no pointers per record, so a table of RecordRefs is never scanned.
type RecordArena struct {
	chunks [][]byte
	cur    int   // index of the chunk being filled; -1 before the first
	used   int64 // bytes consumed in chunks (live + dead + skipped tails)
	dead   int64 // bytes of released records
}

// RecordRef locates a Record in a RecordArena: bits 0–21 its length, bits
// 22–61 its location (chunk index << 20 | offset); the zero RecordRef is the
// zero Record. It uses 62 bits, so a caller may keep two flag bits beside
// it in a uint64.
type RecordRef uint64

// MaxArenaRecordLen is the longest record a RecordArena holds.
const MaxArenaRecordLen = 1<<refLenBits - 1

const (
	refLenBits    = 22
	arenaChunk    = 1 << 20 // location = chunk index << 20 | offset
	arenaOffBits  = 20
	arenaBigBytes = arenaChunk / 4 // larger records get a chunk of their own
)

// Len is the byte length of the referenced record (0: the zero Record).
func (ref RecordRef) Len() int { return int(ref & MaxArenaRecordLen) }

func (ref RecordRef) loc() uint64 { return uint64(ref) >> refLenBits }

// NewRecordArena returns an empty arena.
func NewRecordArena() RecordArena { return RecordArena{cur: -1} }

// Put copies r into the arena and returns its reference; the zero Record
// gives the zero RecordRef. r must be at most MaxArenaRecordLen bytes
// (longer panics).
func (a *RecordArena) Put(r Record) RecordRef {
	b := r.b
	n := len(b)
	if n == 0 {
		return 0
	}
	if n > MaxArenaRecordLen {
		panic("utxo: record too long for a RecordArena")
	}
	var loc uint64
	switch {
	case n > arenaBigBytes:
		a.chunks = append(a.chunks, bytes.Clone(b))
		loc = uint64(len(a.chunks)-1) << arenaOffBits
	default:
		if a.cur < 0 || len(a.chunks[a.cur])+n > arenaChunk {
			if a.cur >= 0 {
				a.used += int64(arenaChunk - len(a.chunks[a.cur]))
			}
			a.chunks = append(a.chunks, make([]byte, 0, arenaChunk))
			a.cur = len(a.chunks) - 1
		}
		c := a.chunks[a.cur]
		off := len(c)
		a.chunks[a.cur] = append(c, b...)
		loc = uint64(a.cur)<<arenaOffBits | uint64(off)
	}
	a.used += int64(n)
	return RecordRef(loc<<refLenBits | uint64(n))
}

// Get returns the record ref refers to (the zero Record for the zero
// RecordRef), capacity-limited so that an append by the caller cannot
// overwrite a neighbour. ref must come from this arena's Put.
func (a *RecordArena) Get(ref RecordRef) Record {
	n := ref.Len()
	if n == 0 {
		return Record{}
	}
	loc := ref.loc()
	off := int(loc & (arenaChunk - 1))
	c := a.chunks[loc>>arenaOffBits]
	return Record{b: c[off : off+n : off+n]}
}

// Release counts ref's record as dead (replaced); its bytes stay until the
// arena is dropped.
func (a *RecordArena) Release(ref RecordRef) { a.dead += int64(ref.Len()) }

// Used is the bytes consumed in chunks: live and released records and the
// unused tails of filled chunks.
func (a *RecordArena) Used() int64 { return a.used }

// Dead is the bytes of released records.
func (a *RecordArena) Dead() int64 { return a.dead }
