//go:build !linux

package valbench

import "time"

// threadCPU is unavailable off Linux: the thread-CPU figures read 0.
func threadCPU() time.Duration { return 0 }

// processCPU is unavailable off Linux: the signature-free CPU reads 0.
func processCPU() time.Duration { return 0 }
