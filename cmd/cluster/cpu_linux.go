package cluster

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// processCPU is the CPU time (user and system) process pid has used, from
// /proc/<pid>/stat (utime and stime, the 14th and 15th fields).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (2nd field) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("cluster: /proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[i+1:]) // from the 3rd field on
	if len(f) < 13 {
		return 0, fmt.Errorf("cluster: /proc/%d/stat: %q", pid, s)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cluster: /proc/%d/stat: %q", pid, s)
	}
	return time.Duration(utime+stime) * clockTick, nil
}
