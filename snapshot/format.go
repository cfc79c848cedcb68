package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"utxod/params"
	"utxod/wire"
)

// Magic is SNAPSHOT_MAGIC_BYTES (src/node/utxo_snapshot.h): "utxo", 0xff.
var Magic = [5]byte{'u', 't', 'x', 'o', 0xff}

// Version is the snapshot format this package reads and writes (Core's
// SnapshotMetadata::VERSION, the only one in m_supported_versions).
const Version = 2

// HeaderSize is the length of the metadata that opens a snapshot: magic,
// uint16 version, network message start, base block hash, uint64 coin count.
const HeaderSize = 5 + 2 + 4 + 32 + 8

// Metadata is the snapshot header (Core's SnapshotMetadata).
type Metadata struct {
	// MessageStart is the network magic (pchMessageStart).
	MessageStart [4]byte
	// BaseHash is the block the UTXO set is the state after (internal
	// byte order).
	BaseHash wire.Hash
	// Coins is the number of coins in the body (m_coins_count).
	Coins uint64
}

// AppendBinary appends the 51-byte header.
func (m Metadata) AppendBinary(dst []byte) []byte {
	dst = append(dst, Magic[:]...)
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	dst = append(dst, m.MessageStart[:]...)
	dst = append(dst, m.BaseHash[:]...)
	return binary.LittleEndian.AppendUint64(dst, m.Coins)
}

// Sentinel errors. Every error this package returns for a bad snapshot wraps
// exactly one of them (match with errors.Is). Where Core's loader refuses
// the same file, the error's text is Core's message (interop.md, "Loader
// checks and exact error strings"), without the RPC's prefixes.
var (
	// Metadata (SnapshotMetadata::Unserialize), in the order Core checks.
	ErrMagic          = errors.New("Invalid UTXO set snapshot magic bytes. Please check if this is indeed a snapshot file or if you are using an outdated snapshot format.")
	ErrVersion        = errors.New("snapshot version not supported")
	ErrNetwork        = errors.New("snapshot network differs from this node's")
	ErrUnknownNetwork = errors.New("This snapshot has been created for an unrecognized network. This could be a custom signet, a new testnet or possibly caused by data corruption.")
	ErrShortMetadata  = errors.New("AutoFile::read: end of file")

	// Activation (ChainstateManager::ActivateSnapshot and
	// PopulateAndValidateSnapshot's state checks).
	ErrBaseUnknown   = errors.New("assumeutxo block hash not recognized")
	ErrHeightUnknown = errors.New("assumeutxo height not recognized")
	ErrNoBaseHeader  = errors.New("snapshot start blockheader not found")

	// Population (PopulateAndValidateSnapshot's loop and checks).
	ErrCoinsCount  = errors.New("Mismatch in coins count in snapshot metadata and actual snapshot data")
	ErrBadCoin     = errors.New("bad snapshot data")
	ErrBadValue    = errors.New("bad snapshot tx out value")
	ErrFormat      = errors.New("bad snapshot format or truncated snapshot")
	ErrLeftOver    = errors.New("snapshot coins left over")
	ErrContentHash = errors.New("bad snapshot content hash")

	// utxod's own refusals of files Core would read (see Reader).
	ErrGroupOrder     = errors.New("snapshot: txid groups not in ascending order")
	ErrGroupSize      = errors.New("snapshot: txid group larger than any transaction")
	ErrMixedHeights   = errors.New("snapshot: one txid's coins have different heights or coinbase flags")
	ErrCountMismatch  = errors.New("snapshot: coins written differ from the header's count")
	ErrNoHeight       = errors.New("snapshot: the base block's height is unknown")
	ErrDatadirExists  = errors.New("snapshot: the target datadir already exists and is not empty")
	ErrNeedExpectHash = errors.New("snapshot: no expected content hash")
)

// coreError is an error whose text is Core's message and whose kind is one
// of the sentinels above.
type coreError struct {
	kind error
	msg  string
}

func (e *coreError) Error() string { return e.msg }
func (e *coreError) Unwrap() error { return e.kind }

func coreErrorf(kind error, format string, args ...any) error {
	return &coreError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// formatErr is Core's message for a stream failure inside the coins.
func formatErr(done uint64) error {
	return coreErrorf(ErrFormat, "Bad snapshot format or truncated snapshot after deserializing %d coins", done)
}

// ReadMetadata reads and checks the 51-byte header as Core's
// SnapshotMetadata::Unserialize does, field by field: magic, version,
// network (node: the node's network; nil accepts every network Core knows),
// then base hash and count. A header cut short gives ErrShortMetadata; a
// failing read other than end of file is returned wrapped as it is.
func ReadMetadata(r io.Reader, node *params.Params) (Metadata, *params.Params, error) {
	var m Metadata
	var buf [HeaderSize]byte
	read := func(b []byte) error {
		if _, err := io.ReadFull(r, b); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return ErrShortMetadata
			}
			return fmt.Errorf("snapshot: read metadata: %w", err)
		}
		return nil
	}
	if err := read(buf[:5]); err != nil {
		return m, nil, err
	}
	if [5]byte(buf[:5]) != Magic {
		return m, nil, ErrMagic
	}
	if err := read(buf[5:7]); err != nil {
		return m, nil, err
	}
	if v := binary.LittleEndian.Uint16(buf[5:7]); v != Version {
		return m, nil, coreErrorf(ErrVersion, "Version of snapshot %d does not match any of the supported versions.", v)
	}
	if err := read(buf[7:11]); err != nil {
		return m, nil, err
	}
	copy(m.MessageStart[:], buf[7:11])
	net, known := params.ByMagic(m.MessageStart)
	switch {
	case node != nil && node.Magic == m.MessageStart:
		net = node // also a custom signet
	case node != nil && known:
		return m, nil, coreErrorf(ErrNetwork, "The network of the snapshot (%s) does not match the network of this node (%s).", net.CoreName(), node.CoreName())
	case !known:
		return m, nil, ErrUnknownNetwork
	}
	if err := read(buf[11:HeaderSize]); err != nil {
		return m, nil, err
	}
	copy(m.BaseHash[:], buf[11:43])
	m.Coins = binary.LittleEndian.Uint64(buf[43:])
	return m, net, nil
}

// baseUnknownErr is Core's ActivateSnapshot message for a base hash the
// table lacks.
func baseUnknownErr(p *params.Params, base wire.Hash) error {
	var hs []string
	for _, e := range p.AssumeUTXOData() {
		hs = append(hs, strconv.Itoa(int(e.Height)))
	}
	return coreErrorf(ErrBaseUnknown, "assumeutxo block hash in snapshot metadata not recognized (hash: %s). The following snapshot heights are available: %s",
		base, strings.Join(hs, ", "))
}
