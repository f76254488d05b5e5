//go:build unix

package gateway

import "syscall"

// processNofile is the process's limit of open files (the soft
// RLIMIT_NOFILE, which Go raises to the hard limit at start); 0 when
// unknown.
func processNofile() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return uint64(rl.Cur)
}
