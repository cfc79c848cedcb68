//go:build !linux

package bench

import "time"

// ThreadCPU is unavailable off Linux: thread CPU reads 0.
func ThreadCPU() time.Duration { return 0 }

// ProcessCPU is unavailable off Linux: process CPU reads 0.
func ProcessCPU() time.Duration { return 0 }
