package descriptor

import (
	"errors"
	"fmt"
)

// The kinds of failure (Error.Kind), for errors.Is.
var (
	// ErrInvalid: the descriptor does not parse (Core would refuse it too).
	ErrInvalid = errors.New("invalid descriptor")
	// ErrChecksum: the "#checksum" does not match the descriptor.
	ErrChecksum = errors.New("descriptor checksum mismatch")
	// ErrUnsupported: a descriptor Core accepts that this package does not
	// expand (multi, miniscript, musig, tr with a script tree, ...).
	ErrUnsupported = errors.New("unsupported descriptor")
	// ErrPrivateKeyNeeded: hardened derivation from an xpub.
	ErrPrivateKeyNeeded = errors.New("descriptor needs a private key")
	// ErrRange: a scan range Core's ParseDescriptorRange refuses.
	ErrRange = errors.New("bad descriptor range")
	// ErrTooManyScripts: scan objects that expand to more scripts than the
	// caller allows.
	ErrTooManyScripts = errors.New("descriptors expand to too many scripts")
)

// Error is a parse or expansion failure. Msg follows Core's error text
// where Core has one.
type Error struct {
	Kind   error
	Msg    string // Core's text where Core has one
	Detail string // what this package adds (may be empty)
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return e.Msg + ": " + e.Detail
	}
	return e.Msg
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

func parseErrorf(format string, args ...any) error {
	return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}

func checksumErrorf(format string, args ...any) error {
	return &Error{Kind: ErrChecksum, Msg: fmt.Sprintf(format, args...)}
}

func unsupportedf(format string, args ...any) error {
	return &Error{Kind: ErrUnsupported, Msg: fmt.Sprintf(format, args...)}
}

// prefixed adds Core's "fn(): " context to a parse error, keeping its kind.
func prefixed(prefix string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Kind: e.Kind, Msg: prefix + e.Msg, Detail: e.Detail}
	}
	return err
}
