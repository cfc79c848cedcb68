package wire

import "errors"

// Parse errors. Every error returned by the parser wraps one of these.
var (
	// ErrTruncated: the input ended before the structure did.
	ErrTruncated = errors.New("wire: truncated")
	// ErrOversize: a count or length exceeds what fits in a block.
	ErrOversize = errors.New("wire: oversize count")
	// ErrTrailing: bytes remain after the structure.
	ErrTrailing = errors.New("wire: trailing bytes")
	// ErrNonCanonical: a CompactSize was not minimally encoded.
	ErrNonCanonical = errors.New("wire: non-canonical compact size")
	// ErrBadWitness: segwit marker present with a zero flag or an empty witness
	// section, which Core's deserializer refuses ("Superfluous witness record").
	ErrBadWitness = errors.New("wire: superfluous witness record")
)
