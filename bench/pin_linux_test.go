package bench

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The sched_setaffinity fallback (no taskset): the child inherits the
// forking thread's affinity, and the harness's own affinity is restored.
func TestStartWithAffinity(t *testing.T) {
	p := Pinner{cpus: "0", cpuList: []int{0}} // taskset deliberately unset
	if p.Method() != "sched_setaffinity" || !slices.Equal(p.wrap([]string{"x"}), []string{"x"}) {
		t.Fatalf("method %s", p.Method())
	}
	before := allowed(t, "self")
	cmd := exec.Command("cat", "/proc/self/status")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := p.start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := field(out.String(), "Cpus_allowed_list"); got != "0" {
		t.Errorf("child Cpus_allowed_list %q, want 0", got)
	}
	if after := allowed(t, "self"); after != before {
		t.Errorf("harness affinity changed: %q → %q", before, after)
	}
}

func allowed(t *testing.T, pid string) string {
	out, err := exec.Command("cat", "/proc/"+pid+"/status").Output()
	if err != nil {
		t.Skip("no /proc:", err)
	}
	return field(string(out), "Cpus_allowed_list")
}

func field(status, name string) string {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
