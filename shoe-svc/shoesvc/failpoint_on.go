//go:build failpoints

package shoesvc

import (
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// hits counts the passes through the armed failpoint.
var hits atomic.Int64

// failpoint kills the process with SIGKILL (like kill -9: no defer, no
// flush) on the CHEMMY_SHOE_FAILPOINT_AFTER-th pass (default 1) through
// the point named by CHEMMY_SHOE_FAILPOINT. Test builds only.
func failpoint(name string) {
	if os.Getenv("CHEMMY_SHOE_FAILPOINT") != name {
		return
	}
	after, err := strconv.ParseInt(os.Getenv("CHEMMY_SHOE_FAILPOINT_AFTER"), 10, 64)
	if err != nil || after < 1 {
		after = 1
	}
	if hits.Add(1) == after {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
