package bench

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// Pinner starts children pinned to a CPU list: through taskset(1) when it
// is installed (taskset execs the command, so rusage is the command's),
// otherwise by setting the CPU affinity of the forking thread, which the
// child inherits (Linux sched_setaffinity). The zero Pinner does not pin.
type Pinner struct {
	cpus    string
	cpuList []int
	taskset string
}

// NewPinner pins to cpus, a CPU list ("0", "2-3", "0,2"); "" does not pin.
func NewPinner(cpus string) (Pinner, error) {
	p := Pinner{cpus: cpus}
	if cpus == "" {
		return p, nil
	}
	list, err := parseCPUList(cpus)
	if err != nil {
		return p, err
	}
	p.cpuList = list
	if path, err := exec.LookPath("taskset"); err == nil {
		p.taskset = path
		return p, nil
	}
	if !affinitySupported {
		return p, fmt.Errorf("bench: --pin needs taskset or Linux sched_setaffinity")
	}
	return p, nil
}

// Method is how children are pinned: none, taskset or sched_setaffinity.
func (p Pinner) Method() string {
	switch {
	case p.cpus == "":
		return "none"
	case p.taskset != "":
		return "taskset"
	}
	return "sched_setaffinity"
}

func (p Pinner) wrap(argv []string) []string {
	if p.taskset == "" {
		return argv
	}
	return append([]string{p.taskset, "-c", p.cpus}, argv...)
}

func (p Pinner) start(cmd *exec.Cmd) error {
	if p.cpus == "" || p.taskset != "" {
		return cmd.Start()
	}
	return startWithAffinity(cmd, p.cpuList)
}

// parseCPUList parses "0", "0-3", "0,2,4-5".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bench: --pin %q: bad CPU %q", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bench: --pin %q: bad range %q", s, part)
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}
