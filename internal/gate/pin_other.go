//go:build !linux

package gate

import (
	"errors"
	"os/exec"
)

const affinitySupported = false

func startWithAffinity(*exec.Cmd, []int) error {
	return errors.New("gate: CPU pinning without taskset needs Linux")
}
