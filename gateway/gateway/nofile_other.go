//go:build !unix

package gateway

// processNofile is 0 (unknown) where there is no RLIMIT_NOFILE.
func processNofile() uint64 { return 0 }
