package backends

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"utxod/internal/diskspace"
)

// ErrDiskFull is wrapped by every error a store returns because its disk is
// full: a write that failed with ENOSPC, every later write of a store that
// stays failed after one (pebble and RocksDB: reopen the store once space is
// freed), and CheckSpace refusing a flush. errors.Is(err, syscall.ENOSPC)
// holds for it too.
var ErrDiskFull error = diskFullError{}

type diskFullError struct{}

func (diskFullError) Error() string { return "disk full: no space left on device (ENOSPC)" }

// Is makes errors.Is(ErrDiskFull, syscall.ENOSPC) true.
func (diskFullError) Is(target error) bool { return target == syscall.ENOSPC }

// IsDiskFull reports whether err says the disk is full: ErrDiskFull or
// syscall.ENOSPC in its chain, or, for engines that flatten errors into text
// (RocksDB's Status), "No space left on device" in its message.
func IsDiskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrDiskFull) || errors.Is(err, syscall.ENOSPC) {
		return true
	}
	return strings.Contains(strings.ToLower(err.Error()), "no space left on device")
}

// DiskFull returns err wrapped so that it also wraps ErrDiskFull (err itself
// when it already does, nil for nil).
func DiskFull(err error) error {
	if err == nil || errors.Is(err, ErrDiskFull) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrDiskFull, err)
}

// SpaceReporter is implemented by stores kept in a directory of the local
// filesystem (all three).
type SpaceReporter interface {
	// AvailableBytes is what the filesystem holding the store can still
	// take (diskspace.Available of its directory).
	AvailableBytes() (uint64, error)
}

// CheckSpace is the pre-flush check (Bitcoin Core's CheckDiskSpace before
// FlushStateToDisk): it returns an error wrapping ErrDiskFull when the
// filesystem holding kv has less than need bytes plus margin (Core's is
// 50 MiB, diskspace.DefaultMinFreeBytes; utxod's --min-free-mb) available. It passes
// when kv is not a SpaceReporter, when free space cannot be read (the store
// still fails the write with ENOSPC if the disk is really full) and when
// the margin is 0. need is what the caller is about to write; stores write
// a batch at least twice (log and table), so callers pass a multiple of the
// batch size.
func CheckSpace(kv KV, need, margin uint64) error {
	sr, ok := kv.(SpaceReporter)
	if !ok || margin == 0 {
		return nil
	}
	avail, err := sr.AvailableBytes()
	if err != nil {
		return nil
	}
	if avail >= need+margin {
		return nil
	}
	return fmt.Errorf("%w: %s available on the data directory's filesystem, a flush needs %s (%s to write plus a %s margin; --min-free-mb 0 or %s=0 turns the check off)",
		ErrDiskFull, FormatBytes(avail), FormatBytes(need+margin), FormatBytes(need), FormatBytes(margin), diskspace.EnvMinFreeMB)
}

// FormatBytes renders n as B, KiB, MiB or GiB with one decimal.
func FormatBytes(n uint64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
}
