// Package diskspace answers how many bytes the filesystem holding a path can
// still take, and holds the free-space margin utxod keeps before it flushes
// (as Bitcoin Core's CheckDiskSpace does before FlushStateToDisk: 50 MB
// plus what the flush is about to write).
package diskspace

import (
	"errors"
	"os"
	"strconv"
	"sync"
)

// ErrUnsupported is returned by Available on platforms without statfs; callers
// then skip the check (the stores still report ENOSPC when a write fails).
var ErrUnsupported = errors.New("diskspace: free space not available on this platform")

// DefaultMinFreeBytes is the margin kept free on the data directory's
// filesystem: Core's nMinDiskSpace (50 MiB).
const DefaultMinFreeBytes = 50 << 20

// EnvMinFreeMB overrides DefaultMinFreeBytes: a whole number of MiB, 0 turns
// the pre-flush check off (writes then fail only when the disk is really
// full, with ENOSPC from the store).
const EnvMinFreeMB = "UTXOD_MIN_FREE_MB"

var minFree = sync.OnceValue(func() uint64 {
	if v, ok := os.LookupEnv(EnvMinFreeMB); ok {
		if n, err := strconv.ParseUint(v, 10, 32); err == nil {
			return n << 20
		}
	}
	return DefaultMinFreeBytes
})

// MinFreeBytes is the margin in force: UTXOD_MIN_FREE_MB MiB when that is set
// to a whole number, else DefaultMinFreeBytes. It is read once per process.
func MinFreeBytes() uint64 { return minFree() }

// Available returns the bytes an unprivileged writer can still allocate on
// the filesystem holding path (statfs f_bavail × f_bsize), or an error
// wrapping ErrUnsupported.
func Available(path string) (uint64, error) { return available(path) }
