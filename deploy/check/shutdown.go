package check

import (
	"fmt"
	"time"
)

// CheckGatewayShutdown: the gateway's containers sleep in preStop (so
// that its endpoint is dropped while it still serves) and its pod's
// terminationGracePeriodSeconds (30 when unset) exceeds that sleep plus
// drain, the most the gateway takes to stop after SIGTERM.
func CheckGatewayShutdown(r Render, drain time.Duration) []string {
	o, ok := r.Find("Deployment", "gateway")
	if !ok {
		return nil
	}
	var out []string
	for _, w := range r.Workloads() {
		if w.Ref != o.Ref() {
			continue
		}
		grace := time.Duration(30) * time.Second
		if g := w.Spec.TerminationGracePeriodSeconds; g != nil {
			grace = time.Duration(*g) * time.Second
		}
		for i := range w.Spec.Containers {
			c := &w.Spec.Containers[i]
			at := fmt.Sprintf("%s container %s", w.Ref, c.Name)
			if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds <= 0 {
				out = append(out, at+": no preStop sleep (its endpoint would be dropped after it stops serving)")
				continue
			}
			sleep := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
			if grace <= sleep+drain {
				out = append(out, fmt.Sprintf("%s: terminationGracePeriodSeconds %d does not exceed the preStop sleep (%s) plus the drain (%s)",
					w.Ref, grace/time.Second, sleep, drain))
			}
		}
	}
	return out
}
