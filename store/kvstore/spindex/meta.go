package spindex

import (
	"encoding/binary"
	"errors"
	"fmt"

	"utxod/backends"
)

// metaKey is the index's state: the prefix alone, shorter than every key.
var metaKey = []byte{Prefix}

const metaVersion = 1

// State says how far an index is.
type State uint8

// States of the meta key.
const (
	None     State = iota // no meta key: no index
	Building              // a build wrote some blocks; not usable
	Complete              // rows for every block in [Tip.From, Tip.Height]
)

func (s State) String() string {
	switch s {
	case Building:
		return "building"
	case Complete:
		return "complete"
	}
	return "none"
}

// Meta is the meta key's content.
type Meta struct {
	State State
	// Tip is the state the rows describe (Complete), or the store's tip
	// the build started at (Building; Tip.From is the build's first
	// height).
	Tip Tip
	// Building: every height below Next (from Tip.From) is written, Rows
	// rows in all.
	Next uint32
	Rows uint64
}

func encodeMeta(m Meta) []byte {
	b := []byte{metaVersion, byte(m.State)}
	b = append(b, m.Tip.Hash[:]...)
	b = binary.LittleEndian.AppendUint32(b, m.Tip.Height)
	b = binary.LittleEndian.AppendUint32(b, m.Tip.From)
	if m.State == Building {
		b = binary.LittleEndian.AppendUint32(b, m.Next)
		b = binary.LittleEndian.AppendUint64(b, m.Rows)
	}
	return b
}

func decodeMeta(b []byte) (Meta, error) {
	const base = 2 + 32 + 4 + 4
	var m Meta
	if len(b) < base || b[0] != metaVersion {
		return m, fmt.Errorf("%w: meta key %x: unknown version", ErrCorrupt, b)
	}
	m.State = State(b[1])
	copy(m.Tip.Hash[:], b[2:34])
	m.Tip.Height = binary.LittleEndian.Uint32(b[34:])
	m.Tip.From = binary.LittleEndian.Uint32(b[38:])
	switch {
	case m.State == Complete && len(b) == base:
	case m.State == Building && len(b) == base+4+8:
		m.Next = binary.LittleEndian.Uint32(b[base:])
		m.Rows = binary.LittleEndian.Uint64(b[base+4:])
	default:
		return m, fmt.Errorf("%w: meta key %x: bad state or length", ErrCorrupt, b)
	}
	return m, nil
}

// ReadMeta returns the index's meta key; ok is false when there is none.
func ReadMeta(r backends.Reader) (m Meta, ok bool, err error) {
	b, err := r.Get(metaKey)
	if errors.Is(err, backends.ErrNotFound) {
		return Meta{}, false, nil
	}
	if err != nil {
		return Meta{}, false, err
	}
	m, err = decodeMeta(b)
	return m, err == nil, err
}
