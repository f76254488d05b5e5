package cluster

import "syscall"

// sysProcAttr puts a child in its own process group, so that the
// terminal's Ctrl-C reaches only the cluster (which stops the children in
// order), and kills it if the cluster dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
