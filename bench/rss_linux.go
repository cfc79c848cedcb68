//go:build linux

package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
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
	return statusKiB("VmHWM:")
}

// statusKiB reads one "Name: N kB" line of /proc/self/status.
func statusKiB(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		if rest, ok := bytes.CutPrefix(line, []byte(field)); ok {
			f := bytes.Fields(rest)
			if len(f) > 0 {
				return strconv.ParseInt(string(f[0]), 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("bench: %s not in /proc/self/status", field)
}
