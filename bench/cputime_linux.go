package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPU is the calling OS thread's user+system CPU time (the caller
// locks itself to its thread).
func ThreadCPU() time.Duration { return rusageCPU(unix.RUSAGE_THREAD) }

// ProcessCPU is the whole process's user+system CPU time.
func ProcessCPU() time.Duration { return rusageCPU(unix.RUSAGE_SELF) }

func rusageCPU(who int) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
