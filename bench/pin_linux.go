package bench

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

const affinitySupported = true

// startWithAffinity starts cmd from a locked OS thread whose affinity is
// temporarily set to cpus; the forked child inherits it. The child's
// affinity is set again after the start, for good measure.
func startWithAffinity(cmd *exec.Cmd, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("bench: sched_getaffinity: %w", err)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("bench: sched_setaffinity %v: %w", cpus, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = fmt.Errorf("bench: restoring affinity: %w", rerr)
	}
	if err == nil {
		_ = unix.SchedSetaffinity(cmd.Process.Pid, &set)
	}
	return err
}
