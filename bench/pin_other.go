//go:build !linux

package bench

import (
	"errors"
	"os/exec"
)

const affinitySupported = false

func startWithAffinity(*exec.Cmd, []int) error {
	return errors.New("bench: CPU pinning without taskset needs Linux")
}
