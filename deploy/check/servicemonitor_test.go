package check

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// monitorTarget is one scrape target of a ServiceMonitor: a container's
// metrics port, and the labels Prometheus gives its series.
type monitorTarget struct {
	workload, container, port string
	labels                    map[string]string
}

// monitorTargets: the targets of every ServiceMonitor of the render,
// each a container port behind a selected Service's endpoint port,
// labelled as the Prometheus Operator does (job and service: the
// Service's name; endpoint: the port's name; the pod's labels as meta
// labels) and then relabeled by the endpoint's relabelings.
func monitorTargets(t *testing.T, r Render) []monitorTarget {
	t.Helper()
	var out []monitorTarget
	for _, so := range r.Kind("ServiceMonitor") {
		sm := so.Value.(*ServiceMonitor)
		for _, svcObj := range r.Kind("Service") {
			svc := svcObj.Value.(*corev1.Service)
			if !Selects(&sm.Spec.Selector, svcObj.Meta.Labels) || len(svc.Spec.Selector) == 0 {
				continue
			}
			for _, e := range sm.Spec.Endpoints {
				for _, sp := range svc.Spec.Ports {
					if sp.Name != e.Port {
						continue
					}
					target := sp.TargetPort
					if target.Type == intstr.Int && target.IntVal == 0 {
						target = intstr.FromInt32(sp.Port)
					}
					for _, w := range r.Workloads() {
						if !selectsLabels(svc.Spec.Selector, w.Labels) {
							continue
						}
						for _, c := range w.Spec.Containers {
							for _, cp := range c.Ports {
								if (target.Type == intstr.String && cp.Name != target.StrVal) || (target.Type == intstr.Int && cp.ContainerPort != target.IntVal) {
									continue
								}
								labels := map[string]string{"job": svcObj.Meta.Name, "service": svcObj.Meta.Name, "endpoint": e.Port, "container": c.Name}
								for k, v := range w.Labels {
									labels[metaLabel("__meta_kubernetes_pod_label_", k)] = v
								}
								got, err := Relabel(labels, e.Relabelings)
								if err != nil {
									t.Fatalf("%s endpoint %s: %v", so.Ref(), e.Port, err)
								}
								out = append(out, monitorTarget{w.Name, c.Name, e.Port, got})
							}
						}
					}
				}
			}
		}
	}
	return out
}

// TestServiceMonitorLabels: in every render with the ServiceMonitor, each
// process's series carry its own name as service and job (gateway,
// table-svc, shoe-svc, wallet-svc: the container's name), so that a
// shard's table-svc and shoe-svc, one pod behind one Service, are told
// apart; and every chemmy process with a metrics port is scraped.
func TestServiceMonitorLabels(t *testing.T) {
	for _, dir := range dirs(t) {
		r := render(t, dir)
		if len(r.Kind("ServiceMonitor")) == 0 {
			continue
		}
		targets := monitorTargets(t, r)
		seen := map[string]bool{}
		for _, tg := range targets {
			seen[tg.container] = true
			for _, l := range []string{"service", "job"} {
				if got := tg.labels[l]; got != tg.container {
					t.Errorf("%s: %s container %s (port %s): %s=%q, want %q", dir, tg.workload, tg.container, tg.port, l, got, tg.container)
				}
			}
		}
		for _, want := range []string{"gateway", "table-svc", "shoe-svc", "wallet-svc"} {
			if !seen[want] {
				t.Errorf("%s: %s is not scraped", dir, want)
			}
		}
	}
}

// Without the relabelings, the operator's labels would name the shard's
// Service for both of its processes: the test above would object.
func TestServiceMonitorLabelsCatch(t *testing.T) {
	r := render(t, "overlays/local-monitoring")
	o, _ := r.Find("ServiceMonitor", "chemmy")
	sm := o.Value.(*ServiceMonitor)
	for i := range sm.Spec.Endpoints {
		sm.Spec.Endpoints[i].Relabelings = nil
	}
	bad := 0
	for _, tg := range monitorTargets(t, r) {
		if tg.labels["service"] != tg.container {
			bad++
		}
	}
	if bad == 0 {
		t.Error("without relabelings every target still had its process's name")
	}
}

func TestRelabel(t *testing.T) {
	shoe := "shoe-svc"
	got, err := Relabel(map[string]string{"a": "x", "b": "y"}, []RelabelConfig{
		{SourceLabels: []string{"a", "b"}, TargetLabel: "ab"},
		{SourceLabels: []string{"a"}, Regex: "(x)", Replacement: ptr("<$1>"), TargetLabel: "c"},
		{SourceLabels: []string{"a"}, Regex: "nomatch", TargetLabel: "d"},
		{TargetLabel: "job", Replacement: &shoe},
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"ab": "x;y", "c": "<x>", "d": "", "job": "shoe-svc"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
}
