//go:build linux

package bench

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"utxod/internal/procstatus"
)

// ResetPeakRSS lowers this process's peak-RSS mark to its current RSS and
// returns that RSS in KiB; call it before starting a measured child.
//
// A child's rusage ru_maxrss includes its parent's peak RSS: os/exec starts
// children with vfork, so until exec the child runs in the parent's
// address space, and exec records that address space's high-water mark as
// the child's own (Linux fs/exec.c exec_mmap:
// setmax_mm_hiwater_rss(&tsk->signal->maxrss, old_mm)). A harness that
// has itself imported a corpus would otherwise report its own peak for
// every child smaller than it. Writing 5 to /proc/self/clear_refs (Linux
// ≥ 4.0) resets the mark to the current RSS, after the Go heap has been
// returned to the OS so that the current RSS is small. A child's measured
// peak can still not be below the returned value.
func ResetPeakRSS() (int64, error) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("bench: reset peak RSS: %w", err)
	}
	return procstatus.KiB("VmHWM:")
}
