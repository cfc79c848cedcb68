package procstatus

import (
	"runtime"
	"testing"
)

// TestKiB: VmRSS is positive and VmHWM, the peak, at least as large; a
// field the file lacks is an error.
func TestKiB(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/status is Linux's")
	}
	rss, err := KiB("VmRSS:")
	if err != nil || rss <= 0 {
		t.Fatalf("VmRSS: %d, %v", rss, err)
	}
	if hwm, err := KiB("VmHWM:"); err != nil || hwm < rss {
		t.Fatalf("VmHWM: %d, %v (VmRSS %d)", hwm, err, rss)
	}
	if _, err := KiB("NoSuchField:"); err == nil {
		t.Fatal("a missing field gave no error")
	}
}
