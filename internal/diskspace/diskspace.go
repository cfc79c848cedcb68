// Package diskspace answers how many bytes the filesystem holding a path can
// still take, and holds the free-space margin utxod keeps before it flushes
// (as Bitcoin Core's CheckDiskSpace does before FlushStateToDisk: 50 MB
// plus what the flush is about to write).
package diskspace

import (
	"errors"
)

// ErrUnsupported is returned by Available on platforms without statfs; callers
// then skip the check (the stores still report ENOSPC when a write fails).
var ErrUnsupported = errors.New("diskspace: free space not available on this platform")

// DefaultMinFreeBytes is the margin kept free on the data directory's
// filesystem: Core's nMinDiskSpace (50 MiB).
const DefaultMinFreeBytes = 50 << 20

// EnvMinFreeMB is the environment variable behind utxod's --min-free-mb
// (MiB; 0 turns the pre-flush check off: writes then fail only when the
// disk is really full, with ENOSPC from the store).
const EnvMinFreeMB = "UTXOD_MIN_FREE_MB"

// Available returns the bytes an unprivileged writer can still allocate on
// the filesystem holding path (statfs f_bavail × f_bsize), or an error
// wrapping ErrUnsupported.
func Available(path string) (uint64, error) { return available(path) }
