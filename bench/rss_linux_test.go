//go:build linux

package bench

import (
	"os/exec"
	"syscall"
	"testing"
)

func childMaxRSS(t *testing.T) int64 {
	t.Helper()
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no /bin/true: %v", err)
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}

// A child of a parent that once held 256 MiB reports at least that as its
// peak RSS, until ResetPeakRSS lowers the parent's mark.
func TestResetPeakRSS(t *testing.T) {
	big := make([]byte, 256<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	held := childMaxRSS(t)
	if held < 256<<10 {
		t.Skipf("child of a 256 MiB parent reports %d KiB: this kernel does not inherit the mark", held)
	}
	cur, err := ResetPeakRSS()
	if err != nil {
		t.Skipf("clear_refs unavailable: %v", err)
	}
	after := childMaxRSS(t)
	t.Logf("child maxrss: %d KiB before the reset, %d KiB after (parent's RSS %d KiB)", held, after, cur)
	if after >= 128<<10 || cur >= 128<<10 {
		t.Fatalf("after ResetPeakRSS a child still reports %d KiB (parent's mark %d KiB)", after, cur)
	}
}
