package check

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Render is the objects of one kustomize build.
type Render []Object

// Kind returns the objects of one kind, in order.
func (r Render) Kind(kind string) []Object {
	var out []Object
	for _, o := range r {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// Find returns the object of that kind and name.
func (r Render) Find(kind, name string) (Object, bool) {
	for _, o := range r {
		if o.Kind == kind && o.Meta.Name == name {
			return o, true
		}
	}
	return Object{}, false
}

// Workload is a pod template and what owns it.
type Workload struct {
	Ref    string // "Deployment/gateway"
	Kind   string
	Name   string
	Labels map[string]string // the pods' labels
	Spec   *corev1.PodSpec
	// Replicas: the owner's replicas (1 when unset; a Job's parallelism).
	Replicas int32
	// LongRunning: a Deployment or StatefulSet (probes apply); a Job
	// runs to completion.
	LongRunning bool
	// Claims: the names of a StatefulSet's volumeClaimTemplates.
	Claims []string
}

// Workloads returns every pod template of the render.
func (r Render) Workloads() []Workload {
	var out []Workload
	for _, o := range r {
		switch v := o.Value.(type) {
		case *appsv1.Deployment:
			out = append(out, Workload{Ref: o.Ref(), Kind: o.Kind, Name: o.Meta.Name, Labels: v.Spec.Template.Labels,
				Spec: &v.Spec.Template.Spec, Replicas: replicas(v.Spec.Replicas), LongRunning: true})
		case *appsv1.StatefulSet:
			w := Workload{Ref: o.Ref(), Kind: o.Kind, Name: o.Meta.Name, Labels: v.Spec.Template.Labels,
				Spec: &v.Spec.Template.Spec, Replicas: replicas(v.Spec.Replicas), LongRunning: true}
			for _, c := range v.Spec.VolumeClaimTemplates {
				w.Claims = append(w.Claims, c.Name)
			}
			out = append(out, w)
		case *batchv1.Job:
			out = append(out, Workload{Ref: o.Ref(), Kind: o.Kind, Name: o.Meta.Name, Labels: v.Spec.Template.Labels,
				Spec: &v.Spec.Template.Spec, Replicas: replicas(v.Spec.Parallelism)})
		}
	}
	return out
}

func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

// Containers returns the init containers and the containers of a pod.
func Containers(ps *corev1.PodSpec) []*corev1.Container {
	var out []*corev1.Container
	for i := range ps.InitContainers {
		out = append(out, &ps.InitContainers[i])
	}
	for i := range ps.Containers {
		out = append(out, &ps.Containers[i])
	}
	return out
}

// Selects reports whether the label selector s matches the labels l; an
// invalid selector matches nothing.
func Selects(s *metav1.LabelSelector, l map[string]string) bool {
	if s == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(l))
}

// Arg returns the value of the flag -name=value in args, and whether it
// is there.
func Arg(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "-"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Container returns the container of that name of a pod.
func Container(ps *corev1.PodSpec, name string) *corev1.Container {
	for _, c := range Containers(ps) {
		if c.Name == name {
			return c
		}
	}
	return nil
}
