package utxo

import (
	"errors"
	"fmt"
	"math"
)

// The v5 per-transaction record codec (byte-by-byte description in
// docs/formats.md). One record holds every unspent output of one txid:
//
//	record    = VARINT(height<<1 | coinbase) VARINT(n) directory payloads
//	directory = n × ( VARINT(gap) VARINT(len) )
//	payload   = VARINT(CompressAmount(value)) compressed-script
//
// gap is the first entry's vout, and vout − previous vout − 1 after that, so
// vouts are strictly increasing by construction; len is the byte length of
// the entry's payload. The key (txid, internal order, with the caller's
// prefix) is not part of the value. All varints are Core's VARINT, amounts
// and scripts use Core's compressor.cpp encodings.
//
// Every record has exactly one encoding. All decoders validate the whole
// record and reject anything the encoder would not produce with an error
// wrapping ErrNonCanonical.

// ErrNonCanonical reports record bytes that are not the canonical v5
// encoding of any record.
var ErrNonCanonical = errors.New("utxo: non-canonical record")

// ErrRecordCoin reports a coin a record cannot hold: value outside
// 0..MaxMoney, script longer than MaxScriptSize, a height/coinbase flag
// different from the record's, or outputs not strictly sorted by index.
var ErrRecordCoin = errors.New("utxo: coin not representable in record")

// ErrRecordDuplicate reports adding an output index already in the record.
var ErrRecordDuplicate = errors.New("utxo: output already in record")

const (
	maxRecordCode = 1<<33 - 1 // height (uint32) << 1 | coinbase
	// maxPayloadLen bounds a payload: VARINT amount (≤ 10 bytes), VARINT
	// script size (≤ 2 bytes for MaxScriptSize+6) and the script.
	maxPayloadLen = 10 + 2 + MaxScriptSize
	// minPayloadLen is one amount byte plus one script-size byte.
	minPayloadLen = 2
	// minEntryLen is the smallest directory entry plus payload.
	minEntryLen = 2 + minPayloadLen
)

func nonCanonical(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNonCanonical}, args...)...)
}

// recordLayout is the validated shape of a record.
type recordLayout struct {
	code     uint64 // height<<1 | coinbase
	n        int    // number of entries
	dirStart int    // offset of the first directory entry
	payStart int    // offset of the first payload
	special  int    // total length of the decompressed special scripts
}

// recordEntry is one directory entry as read back.
type recordEntry struct {
	vout    uint32
	dirLen  int // bytes of the directory entry
	payload []byte
}

// recordDirIter walks a directory whose structure parseRecord validated.
type recordDirIter struct {
	b          []byte
	dpos, ppos int
	prev       uint64
	first      bool
}

func (l *recordLayout) iter(b []byte) recordDirIter {
	return recordDirIter{b: b, dpos: l.dirStart, ppos: l.payStart, first: true}
}

// next returns the next entry; only valid on a record parseRecord accepted,
// and only n times.
func (it *recordDirIter) next() recordEntry {
	start := it.dpos
	gap, k, _ := ReadVarInt(it.b[it.dpos:], math.MaxUint32)
	it.dpos += k
	plen, k, _ := ReadVarInt(it.b[it.dpos:], maxPayloadLen)
	it.dpos += k
	v := gap
	if !it.first {
		v = it.prev + 1 + gap
	}
	it.first, it.prev = false, v
	p := it.b[it.ppos : it.ppos+int(plen)]
	it.ppos += int(plen)
	return recordEntry{vout: uint32(v), dirLen: it.dpos - start, payload: p}
}

// parseRecord validates b completely (structure and every payload) and
// returns its layout.
func parseRecord(b []byte) (recordLayout, error) {
	l, err := parseDirectory(b)
	if err != nil {
		return l, err
	}
	// Pass 2: every payload.
	it := l.iter(b)
	for i := 0; i < l.n; i++ {
		e := it.next()
		_, nSize, _, err := parsePayload(e.payload)
		if err != nil {
			return l, fmt.Errorf("entry %d (vout %d): %w", i, e.vout, err)
		}
		if nSize < numSpecialScripts {
			l.special += specialScriptLen(nSize)
		}
	}
	return l, nil
}

// parseDirectory validates b's header and directory (pass 1: where the
// payloads start, their lengths adding up to the rest of b), not the
// payloads themselves; l.special stays 0.
func parseDirectory(b []byte) (recordLayout, error) {
	var l recordLayout
	code, k, err := ReadVarInt(b, maxRecordCode)
	if err != nil {
		return l, nonCanonical("header: %w", err)
	}
	pos := k
	n, k, err := ReadVarInt(b[pos:], uint64(len(b)/minEntryLen))
	if err != nil {
		return l, nonCanonical("entry count: %w", err)
	}
	if n == 0 {
		return l, nonCanonical("record with no outputs")
	}
	pos += k
	l.code, l.n, l.dirStart = code, int(n), pos
	// Pass 1: the directory, to find where payloads start.
	var total uint64
	var prev uint64
	for i := 0; i < l.n; i++ {
		gap, k, err := ReadVarInt(b[pos:], math.MaxUint32)
		if err != nil {
			return l, nonCanonical("entry %d vout: %w", i, err)
		}
		pos += k
		if i > 0 {
			if prev+1+gap > math.MaxUint32 {
				return l, nonCanonical("entry %d vout beyond 2^32-1", i)
			}
			prev += 1 + gap
		} else {
			prev = gap
		}
		plen, k, err := ReadVarInt(b[pos:], maxPayloadLen)
		if err != nil {
			return l, nonCanonical("entry %d length: %w", i, err)
		}
		if plen < minPayloadLen {
			return l, nonCanonical("entry %d payload length %d", i, plen)
		}
		pos += k
		total += plen
	}
	l.payStart = pos
	if uint64(len(b)-pos) != total {
		return l, nonCanonical("payloads are %d bytes, directory says %d", len(b)-pos, total)
	}
	return l, nil
}

// parsePayload validates one payload and returns its value, script size code
// and script data (raw script for nSize ≥ 6, else the special form's data).
func parsePayload(p []byte) (value int64, nSize uint64, data []byte, err error) {
	x, k, err := ReadVarInt(p, math.MaxUint64)
	if err != nil {
		return 0, 0, nil, nonCanonical("amount: %w", err)
	}
	v := DecompressAmount(x)
	if v > MaxMoney || CompressAmount(v) != x {
		return 0, 0, nil, nonCanonical("compressed amount %d", x)
	}
	p = p[k:]
	nSize, k, err = ReadVarInt(p, MaxScriptSize+numSpecialScripts)
	if err != nil {
		return 0, 0, nil, nonCanonical("script size: %w", err)
	}
	data = p[k:]
	if nSize < numSpecialScripts {
		if len(data) != specialScriptDataLen(nSize) {
			return 0, 0, nil, nonCanonical("special script %d with %d data bytes", nSize, len(data))
		}
		if nSize >= 4 {
			// v5 records store uncompressed-key P2PK raw (see
			// recordScriptKind), so forms 4 and 5 never appear.
			return 0, 0, nil, nonCanonical("special script %d (uncompressed key) is not used in records", nSize)
		}
		return int64(v), nSize, data, nil
	}
	if uint64(len(data)) != nSize-numSpecialScripts {
		return 0, 0, nil, nonCanonical("raw script of %d bytes, size says %d", len(data), nSize-numSpecialScripts)
	}
	if recordScriptKind(data) >= 0 {
		return 0, 0, nil, nonCanonical("raw script has a special compressed form")
	}
	return int64(v), nSize, data, nil
}

// payloadCoin materialises a validated payload. Raw scripts alias the
// payload; special scripts are appended to arena, which is returned grown.
func payloadCoin(p []byte, code uint64, arena []byte) (Coin, []byte) {
	v, nSize, data, _ := parsePayload(p)
	c := Coin{Value: v, Height: uint32(code >> 1), Coinbase: code&1 == 1}
	if nSize >= numSpecialScripts {
		c.Script = data
		return c, arena
	}
	if arena == nil {
		// One allocation of the script's size, not append's growth steps
		// (a coins-cache lookup decompresses every special script).
		arena = make([]byte, 0, specialScriptLen(nSize))
	}
	start := len(arena)
	arena, _ = appendDecompressedSpecial(arena, nSize, data)
	c.Script = arena[start:len(arena):len(arena)]
	return c, arena
}

func coinCode(c Coin) uint64 {
	code := uint64(c.Height) << 1
	if c.Coinbase {
		code |= 1
	}
	return code
}

func checkRecordCoin(c Coin) error {
	if c.Value < 0 || c.Value > MaxMoney {
		return fmt.Errorf("%w: value %d", ErrRecordCoin, c.Value)
	}
	if len(c.Script) > MaxScriptSize {
		return fmt.Errorf("%w: script of %d bytes", ErrRecordCoin, len(c.Script))
	}
	return nil
}

// recordScriptKind is the special form a v5 record uses for script: Core's
// forms 0–3 (P2PKH, P2SH, compressed-key P2PK). Uncompressed-key P2PK
// (Core's forms 4/5) is stored raw: a square root on the curve at every read
// costs more than the 34 bytes it saves per coin (bench/results/storage.md).
func recordScriptKind(s []byte) int {
	if len(s) == 67 {
		return -1
	}
	return specialScriptKind(s)
}

func payloadLen(c Coin) int {
	n := VarIntLen(CompressAmount(uint64(c.Value)))
	if k := recordScriptKind(c.Script); k >= 0 {
		return n + 1 + specialScriptDataLen(uint64(k))
	}
	return n + VarIntLen(uint64(len(c.Script))+numSpecialScripts) + len(c.Script)
}

func appendPayload(dst []byte, c Coin) []byte {
	dst = AppendVarInt(dst, CompressAmount(uint64(c.Value)))
	if recordScriptKind(c.Script) >= 0 {
		return AppendCompressedScript(dst, c.Script)
	}
	dst = AppendVarInt(dst, uint64(len(c.Script))+numSpecialScripts)
	return append(dst, c.Script...)
}

// EncodeRecord appends the v5 record of outs to dst. outs must be non-empty,
// strictly increasing by Index, and share one Height and Coinbase flag (one
// transaction's outputs); values must be in 0..MaxMoney and scripts at most
// MaxScriptSize bytes. Otherwise it fails with ErrRecordCoin and returns dst
// unchanged.
func EncodeRecord(dst []byte, outs []IndexedCoin) ([]byte, error) {
	if len(outs) == 0 {
		return dst, fmt.Errorf("%w: no outputs", ErrRecordCoin)
	}
	code := coinCode(outs[0].Coin)
	for i := range outs {
		if err := checkRecordCoin(outs[i].Coin); err != nil {
			return dst, err
		}
		if coinCode(outs[i].Coin) != code {
			return dst, fmt.Errorf("%w: outputs of different heights or coinbase flags", ErrRecordCoin)
		}
		if i > 0 && outs[i].Index <= outs[i-1].Index {
			return dst, fmt.Errorf("%w: output indices not strictly increasing", ErrRecordCoin)
		}
	}
	dst = AppendVarInt(dst, code)
	dst = AppendVarInt(dst, uint64(len(outs)))
	for i := range outs {
		gap := uint64(outs[i].Index)
		if i > 0 {
			gap -= uint64(outs[i-1].Index) + 1
		}
		dst = AppendVarInt(dst, gap)
		dst = AppendVarInt(dst, uint64(payloadLen(outs[i].Coin)))
	}
	for i := range outs {
		dst = appendPayload(dst, outs[i].Coin)
	}
	return dst, nil
}

// DecodeRecord validates b and appends its outputs to dst in index order.
// Raw scripts alias b; the special (compressed) forms are decompressed into
// one newly allocated buffer shared by the returned coins. Invalid input
// fails with an error wrapping ErrNonCanonical and returns dst unchanged.
func DecodeRecord(b []byte, dst []IndexedCoin) ([]IndexedCoin, error) {
	// Validate everything first, which also sizes the one allocation; the
	// one-pass DecodeRecordArena is checked against this (FuzzRecordDecode).
	l, err := parseRecord(b)
	if err != nil {
		return dst, err
	}
	var arena []byte
	if l.special > 0 {
		arena = make([]byte, 0, l.special)
	}
	it := l.iter(b)
	for i := 0; i < l.n; i++ {
		e := it.next()
		var c Coin
		c, arena = payloadCoin(e.payload, l.code, arena)
		dst = append(dst, IndexedCoin{Index: e.vout, Coin: c})
	}
	return dst, nil
}

// DecodeRecordArena is DecodeRecord with the special scripts decompressed
// into arena (appended, grown as needed), which it returns for reuse: a walk
// that hands out coins valid only during a call decodes every record into
// the same arena, with no allocation per record. On error dst is returned
// unchanged.
func DecodeRecordArena(b []byte, dst []IndexedCoin, arena []byte) ([]IndexedCoin, []byte, error) {
	// One pass over the payloads, validating and decoding each (DecodeRecord
	// validates all of them first, then parses them again).
	l, err := parseDirectory(b)
	if err != nil {
		return dst, arena, err
	}
	n0 := len(dst)
	it := l.iter(b)
	for i := 0; i < l.n; i++ {
		e := it.next()
		v, nSize, data, err := parsePayload(e.payload)
		if err != nil {
			return dst[:n0], arena, fmt.Errorf("entry %d (vout %d): %w", i, e.vout, err)
		}
		c := Coin{Value: v, Height: uint32(l.code >> 1), Coinbase: l.code&1 == 1, Script: data}
		if nSize < numSpecialScripts {
			start := len(arena)
			arena, _ = appendDecompressedSpecial(arena, nSize, data) // parsePayload checked the form
			c.Script = arena[start:len(arena):len(arena)]
		}
		dst = append(dst, IndexedCoin{Index: e.vout, Coin: c})
	}
	return dst, arena, nil
}

// RecordLen validates b and returns its number of outputs.
func RecordLen(b []byte) (int, error) {
	l, err := parseRecord(b)
	return l.n, err
}

// RecordFirstIndex validates b and returns its lowest output index (records
// hold at least one output, sorted by index).
func RecordFirstIndex(b []byte) (uint32, error) {
	l, err := parseRecord(b)
	if err != nil {
		return 0, err
	}
	return l.first(b), nil
}

// first is the lowest output index of b, whose directory l describes (a
// record holds at least one output).
func (l *recordLayout) first(b []byte) uint32 {
	it := l.iter(b)
	return it.next().vout
}

// RecordGet validates b and returns the coin at output index vout, with
// found=false if the record does not hold it. A raw script aliases b; a
// special form is decompressed into a new allocation.
func RecordGet(b []byte, vout uint32) (c Coin, found bool, err error) {
	l, err := parseRecord(b)
	if err != nil {
		return Coin{}, false, err
	}
	it := l.iter(b)
	for i := 0; i < l.n; i++ {
		e := it.next()
		if e.vout == vout {
			c, _ = payloadCoin(e.payload, l.code, nil)
			return c, true, nil
		}
		if e.vout > vout {
			break
		}
	}
	return Coin{}, false, nil
}

// RecordRemove validates b and appends to dst the record without output
// vout, returning the removed coin. If vout is absent it returns dst
// unchanged with found=false. If vout was the record's last output nothing
// is appended (the caller deletes the key). dst must not overlap b; the
// removed coin's raw script aliases b.
func RecordRemove(dst, b []byte, vout uint32) (rec []byte, removed Coin, found bool, err error) {
	l, err := parseRecord(b)
	if err != nil {
		return dst, Coin{}, false, err
	}
	dst, payload, found := l.without(dst, b, vout)
	if !found {
		return dst, Coin{}, false, nil
	}
	removed, _ = payloadCoin(payload, l.code, nil)
	return dst, removed, true, nil
}

// without appends to dst the record b (whose directory l describes) without
// output vout and returns vout's payload; found=false (dst unchanged) if b
// does not hold vout. Nothing is appended when vout was the only output.
func (l *recordLayout) without(dst, b []byte, vout uint32) (rec, payload []byte, found bool) {
	// Locate the entry and its payload offset.
	it := l.iter(b)
	idx, off := -1, 0
	for i := 0; i < l.n; i++ {
		e := it.next()
		if e.vout == vout {
			idx, payload = i, e.payload
			break
		}
		if e.vout > vout {
			break
		}
		off += len(e.payload)
	}
	if idx < 0 {
		return dst, nil, false
	}
	if l.n == 1 {
		return dst, payload, true
	}
	dst = AppendVarInt(dst, l.code)
	dst = AppendVarInt(dst, uint64(l.n-1))
	it = l.iter(b)
	var prev uint32
	wrote := false
	for i := 0; i < l.n; i++ {
		e := it.next()
		if i == idx {
			continue
		}
		gap := uint64(e.vout)
		if wrote {
			gap -= uint64(prev) + 1
		}
		dst = AppendVarInt(dst, gap)
		dst = AppendVarInt(dst, uint64(len(e.payload)))
		prev, wrote = e.vout, true
	}
	pay := b[l.payStart:]
	dst = append(dst, pay[:off]...)
	dst = append(dst, pay[off+len(payload):]...)
	return dst, payload, true
}

// RecordAdd appends to dst the record b with output vout = c added. An empty
// b stands for "no record yet" (a new transaction). It fails with
// ErrRecordDuplicate if vout is present, ErrRecordCoin if c cannot be stored
// or its height/coinbase flag differs from the record's (the BIP30 overwrite
// of a still-unspent duplicate coinbase must replace the whole record), and
// an ErrNonCanonical error for invalid b; on error dst is returned
// unchanged. dst must not overlap b.
func RecordAdd(dst, b []byte, vout uint32, c Coin) ([]byte, error) {
	if len(b) == 0 {
		return EncodeRecord(dst, []IndexedCoin{{Index: vout, Coin: c}})
	}
	if err := checkRecordCoin(c); err != nil {
		return dst, err
	}
	l, err := parseRecord(b)
	if err != nil {
		return dst, err
	}
	if coinCode(c) != l.code {
		return dst, fmt.Errorf("%w: height %d coinbase %v differs from the record's height %d coinbase %v",
			ErrRecordCoin, c.Height, c.Coinbase, l.code>>1, l.code&1 == 1)
	}
	// Find the insertion position (first entry with a larger vout) and its
	// payload offset.
	it := l.iter(b)
	pos, off := l.n, 0
	for i := 0; i < l.n; i++ {
		e := it.next()
		if e.vout == vout {
			return dst, fmt.Errorf("%w: vout %d", ErrRecordDuplicate, vout)
		}
		if e.vout > vout {
			pos = i
			break
		}
		off += len(e.payload)
	}
	plen := payloadLen(c)
	dst = AppendVarInt(dst, l.code)
	dst = AppendVarInt(dst, uint64(l.n+1))
	it = l.iter(b)
	var prev uint32
	wrote := false
	emit := func(v uint32, n int) {
		gap := uint64(v)
		if wrote {
			gap -= uint64(prev) + 1
		}
		dst = AppendVarInt(dst, gap)
		dst = AppendVarInt(dst, uint64(n))
		prev, wrote = v, true
	}
	for i := 0; i <= l.n; i++ {
		if i == pos {
			emit(vout, plen)
		}
		if i < l.n {
			e := it.next()
			emit(e.vout, len(e.payload))
		}
	}
	pay := b[l.payStart:]
	dst = append(dst, pay[:off]...)
	dst = appendPayload(dst, c)
	dst = append(dst, pay[off:]...)
	return dst, nil
}
