//go:build !linux

package cluster

import (
	"errors"
	"time"
)

// processCPU is not measured outside Linux (no /proc).
func processCPU(int) (time.Duration, error) {
	return 0, errors.New("cluster: a process's CPU time is read from /proc (Linux only)")
}
