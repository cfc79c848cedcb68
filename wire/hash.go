package wire

import (
	"encoding/hex"
	"errors"
)

// Hash is a 32-byte SHA-256d digest in internal (wire) byte order. Its String
// form is byte-reversed, as Bitcoin Core displays txids and block hashes.
type Hash [32]byte

// String returns the display (byte-reversed) hex form.
func (h Hash) String() string {
	var r [32]byte
	for i := range h {
		r[i] = h[31-i]
	}
	return hex.EncodeToString(r[:])
}

// ErrHashLength reports a display hash that is not 64 hex characters.
var ErrHashLength = errors.New("hash: want 64 hex characters")

// ParseHash parses a display-order (byte-reversed) hex hash.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 64 {
		return h, ErrHashLength
	}
	var b [32]byte
	if _, err := hex.Decode(b[:], []byte(s)); err != nil {
		return h, err
	}
	for i := range b {
		h[i] = b[31-i]
	}
	return h, nil
}

// MarshalText implements encoding.TextMarshaler (display order).
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler (display order).
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}
