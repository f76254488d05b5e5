// Command pause is the one-node cluster's pod sandbox image (make k8s-up):
// the process that holds a pod's namespaces open. It waits for SIGTERM or
// SIGINT and exits 0; it reaps no children (each container of a pod has
// its own process tree, and the cluster shares no process namespace).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
