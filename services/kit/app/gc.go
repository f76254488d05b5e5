package app

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target every chemmy process runs
// with unless the GOGC environment variable is set (Go's default is 100):
// the heap may grow to three times the live data between collections
// instead of two. A coup allocates much and keeps little, so collecting
// half as often saves about a tenth of the CPU of a coup (BenchmarkCoups
// in cmd/chemmy, docs/performance.md) for a few tens of MiB more memory.
// Set GOGC (and GOMEMLIMIT under a memory limit) to choose otherwise.
const GCPercent = 200

// TuneGC sets the garbage collector's target to GCPercent unless GOGC is
// set; a process's main calls it first.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
}
