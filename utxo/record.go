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
// Every record has exactly one encoding. A record is parsed once:
// ParseRecord (or DecodeRecord) validates the whole record and rejects
// anything the encoder would not produce with an error wrapping
// ErrNonCanonical; the Record it returns, like the ones EncodeRecord, With
// and Without build, is known canonical, so its accessors cannot fail.

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
}

// recordEntry is one directory entry as read back.
type recordEntry struct {
	vout    uint32
	payload []byte
}

// recordDirIter walks a canonical record's directory.
type recordDirIter struct {
	b          []byte
	dpos, ppos int
	prev       uint64
	first      bool
}

func (l *recordLayout) iter(b []byte) recordDirIter {
	return recordDirIter{b: b, dpos: l.dirStart, ppos: l.payStart, first: true}
}

// next returns the next entry; only valid on a canonical record (or one
// whose directory parseDirectory accepted), and only n times.
func (it *recordDirIter) next() recordEntry {
	gap, dpos := readValidVarInt(it.b, it.dpos)
	plen, dpos := readValidVarInt(it.b, dpos)
	it.dpos = dpos
	v := gap
	if !it.first {
		v = it.prev + 1 + gap
	}
	it.first, it.prev = false, v
	p := it.b[it.ppos : it.ppos+int(plen)]
	it.ppos += int(plen)
	return recordEntry{vout: uint32(v), payload: p}
}

// readValidVarInt reads the VARINT at b[pos:] of a canonical record (or a
// directory parseDirectory accepted) and returns it and the position after
// it.
func readValidVarInt(b []byte, pos int) (uint64, int) {
	var n uint64
	for {
		c := b[pos]
		pos++
		n = n<<7 | uint64(c&0x7f)
		if c&0x80 == 0 {
			return n, pos
		}
		n++
	}
}

// skipVarInt returns the position after the VARINT at b[pos:] of a
// canonical record.
func skipVarInt(b []byte, pos int) int {
	for b[pos]&0x80 != 0 {
		pos++
	}
	return pos + 1
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
		if _, _, _, err := parsePayload(e.payload); err != nil {
			return l, fmt.Errorf("entry %d (vout %d): %w", i, e.vout, err)
		}
	}
	return l, nil
}

// parseDirectory validates b's header and directory (pass 1: where the
// payloads start, their lengths adding up to the rest of b), not the
// payloads themselves.
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

// validPayload splits a canonical payload into its value, script size code
// and script data, as parsePayload does without the checks.
func validPayload(p []byte) (value int64, nSize uint64, data []byte) {
	x, k := readValidVarInt(p, 0)
	nSize, k = readValidVarInt(p, k)
	return int64(DecompressAmount(x)), nSize, p[k:]
}

// payloadCoin materialises a canonical payload. A raw script aliases the
// payload; a special script is appended to arena, which is returned grown
// (allocated at the script's size when nil).
func payloadCoin(p []byte, code uint64, arena []byte) (Coin, []byte) {
	v, nSize, data := validPayload(p)
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
	arena, _ = appendDecompressedSpecial(arena, nSize, data) // the form was checked when parsed
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

// Record is one transaction's unspent outputs in the v5 record encoding,
// parsed once: ParseRecord or DecodeRecord validated its bytes, or
// EncodeRecord, With or Without built them, so none of its accessors can
// fail. The zero Record stands for "no record" (no unspent output): Len 0,
// Bytes nil. A Record aliases the bytes it was parsed from or built in;
// they must stay unmodified while it is in use.
type Record struct{ b []byte }

// ParseRecord validates b completely (structure and every payload) and
// returns it as a Record aliasing b; invalid input (an empty b included)
// fails with an error wrapping ErrNonCanonical.
func ParseRecord(b []byte) (Record, error) {
	if _, err := parseRecord(b); err != nil {
		return Record{}, err
	}
	return Record{b: b}, nil
}

// DecodeRecord is ParseRecord that also appends the record's outputs to dst
// in index order, in the same pass over the payloads. Raw scripts alias b;
// the special (compressed) forms are decompressed into arena (appended,
// grown as needed), which it returns for reuse: a walk that hands out coins
// valid only during a call decodes every record into the same arena, with
// no allocation per record. On error dst is returned unchanged.
func DecodeRecord(b []byte, dst []IndexedCoin, arena []byte) (Record, []IndexedCoin, []byte, error) {
	l, err := parseDirectory(b)
	if err != nil {
		return Record{}, dst, arena, err
	}
	n0 := len(dst)
	it := l.iter(b)
	for i := 0; i < l.n; i++ {
		e := it.next()
		v, nSize, data, err := parsePayload(e.payload)
		if err != nil {
			return Record{}, dst[:n0], arena, fmt.Errorf("entry %d (vout %d): %w", i, e.vout, err)
		}
		c := Coin{Value: v, Height: uint32(l.code >> 1), Coinbase: l.code&1 == 1, Script: data}
		if nSize < numSpecialScripts {
			start := len(arena)
			arena, _ = appendDecompressedSpecial(arena, nSize, data) // parsePayload checked the form
			c.Script = arena[start:len(arena):len(arena)]
		}
		dst = append(dst, IndexedCoin{Index: e.vout, Coin: c})
	}
	return Record{b: b}, dst, arena, nil
}

// EncodeRecord appends the v5 record of outs to dst and returns it. outs
// must be non-empty, strictly increasing by Index, and share one Height and
// Coinbase flag (one transaction's outputs); values must be in 0..MaxMoney
// and scripts at most MaxScriptSize bytes. Otherwise it fails with
// ErrRecordCoin and dst is left unchanged.
func EncodeRecord(dst []byte, outs []IndexedCoin) (Record, error) {
	if len(outs) == 0 {
		return Record{}, fmt.Errorf("%w: no outputs", ErrRecordCoin)
	}
	code := coinCode(outs[0].Coin)
	for i := range outs {
		if err := checkRecordCoin(outs[i].Coin); err != nil {
			return Record{}, err
		}
		if coinCode(outs[i].Coin) != code {
			return Record{}, fmt.Errorf("%w: outputs of different heights or coinbase flags", ErrRecordCoin)
		}
		if i > 0 && outs[i].Index <= outs[i-1].Index {
			return Record{}, fmt.Errorf("%w: output indices not strictly increasing", ErrRecordCoin)
		}
	}
	start := len(dst)
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
	return Record{b: dst[start:]}, nil
}

// Bytes returns the record's encoding (nil for the zero Record).
func (r Record) Bytes() []byte { return r.b }

// Len is the number of outputs (0 for the zero Record).
func (r Record) Len() int {
	if len(r.b) == 0 {
		return 0
	}
	n, _ := readValidVarInt(r.b, skipVarInt(r.b, 0))
	return int(n)
}

// FirstIndex is the lowest output index (records hold their outputs sorted
// by index); 0 for the zero Record.
func (r Record) FirstIndex() uint32 {
	if len(r.b) == 0 {
		return 0
	}
	pos := skipVarInt(r.b, skipVarInt(r.b, 0))
	v, _ := readValidVarInt(r.b, pos)
	return uint32(v)
}

// layout reads the header and directory of the canonical record r.
func (r Record) layout() recordLayout {
	b := r.b
	code, pos := readValidVarInt(b, 0)
	n, pos := readValidVarInt(b, pos)
	l := recordLayout{code: code, n: int(n), dirStart: pos}
	for i := 0; i < l.n; i++ {
		pos = skipVarInt(b, skipVarInt(b, pos))
	}
	l.payStart = pos
	return l
}

// Get returns the coin at output index vout, with found=false if the record
// does not hold it. A raw script aliases the record; a special form is
// decompressed into a new allocation.
func (r Record) Get(vout uint32) (c Coin, found bool) {
	if len(r.b) == 0 {
		return Coin{}, false
	}
	// One walk of the directory: vout's payload offset, then the rest of
	// the directory to where the payloads start.
	b := r.b
	code, pos := readValidVarInt(b, 0)
	n, pos := readValidVarInt(b, pos)
	var v uint64
	off, plen := 0, -1
	for i := 0; i < int(n); i++ {
		gap, p := readValidVarInt(b, pos)
		l, p := readValidVarInt(b, p)
		pos = p
		if i > 0 {
			gap += v + 1
		}
		v = gap
		if v == uint64(vout) {
			plen = int(l)
			for i++; i < int(n); i++ {
				pos = skipVarInt(b, skipVarInt(b, pos))
			}
			break
		}
		if v > uint64(vout) {
			return Coin{}, false
		}
		off += int(l)
	}
	if plen < 0 {
		return Coin{}, false
	}
	c, _ = payloadCoin(b[pos+off:pos+off+plen], code, nil)
	return c, true
}

// AppendCoins appends the record's outputs to dst in index order. Raw
// scripts alias the record; the special (compressed) forms are decompressed
// into arena (appended, grown as needed), which it returns for reuse.
func (r Record) AppendCoins(dst []IndexedCoin, arena []byte) ([]IndexedCoin, []byte) {
	if len(r.b) == 0 {
		return dst, arena
	}
	l := r.layout()
	it := l.iter(r.b)
	for i := 0; i < l.n; i++ {
		e := it.next()
		v, nSize, data := validPayload(e.payload)
		c := Coin{Value: v, Height: uint32(l.code >> 1), Coinbase: l.code&1 == 1, Script: data}
		if nSize < numSpecialScripts {
			start := len(arena)
			arena, _ = appendDecompressedSpecial(arena, nSize, data) // the form was checked when parsed
			c.Script = arena[start:len(arena):len(arena)]
		}
		dst = append(dst, IndexedCoin{Index: e.vout, Coin: c})
	}
	return dst, arena
}

// Without appends to dst the record without output vout and returns it;
// found=false (dst unchanged, r returned) if the record does not hold vout.
// When vout was the only output the result is the zero Record and nothing
// is appended (the caller deletes the key). dst must not overlap r.
func (r Record) Without(dst []byte, vout uint32) (rest Record, found bool) {
	if len(r.b) == 0 {
		return r, false
	}
	l := r.layout()
	b := r.b
	// Locate the entry and its payload offset.
	it := l.iter(b)
	idx, off := -1, 0
	var payload []byte
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
		return r, false
	}
	if l.n == 1 {
		return Record{}, true
	}
	start := len(dst)
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
	return Record{b: dst[start:]}, true
}

// With appends to dst the record with output vout = c added and returns it;
// on the zero Record (no record yet: a new transaction) the result holds c
// alone. It fails with ErrRecordDuplicate if vout is present, and with
// ErrRecordCoin if c cannot be stored or its height/coinbase flag differs
// from the record's (the BIP30 overwrite of a still-unspent duplicate
// coinbase must replace the whole record); on error dst is left unchanged.
// dst must not overlap r.
func (r Record) With(dst []byte, vout uint32, c Coin) (Record, error) {
	if len(r.b) == 0 {
		return EncodeRecord(dst, []IndexedCoin{{Index: vout, Coin: c}})
	}
	if err := checkRecordCoin(c); err != nil {
		return Record{}, err
	}
	l := r.layout()
	b := r.b
	if coinCode(c) != l.code {
		return Record{}, fmt.Errorf("%w: height %d coinbase %v differs from the record's height %d coinbase %v",
			ErrRecordCoin, c.Height, c.Coinbase, l.code>>1, l.code&1 == 1)
	}
	// Find the insertion position (first entry with a larger vout) and its
	// payload offset.
	it := l.iter(b)
	pos, off := l.n, 0
	for i := 0; i < l.n; i++ {
		e := it.next()
		if e.vout == vout {
			return Record{}, fmt.Errorf("%w: vout %d", ErrRecordDuplicate, vout)
		}
		if e.vout > vout {
			pos = i
			break
		}
		off += len(e.payload)
	}
	plen := payloadLen(c)
	start := len(dst)
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
	return Record{b: dst[start:]}, nil
}
