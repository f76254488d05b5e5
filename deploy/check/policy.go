package check

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Policy is one rule every render keeps. Check returns one message per
// violation, naming the object (and container) at fault.
type Policy struct {
	Name  string
	Check func(Render) []string
}

// Policies are checked on the base and on every overlay.
var Policies = []Policy{
	{"restricted", CheckRestricted},
	{"resources", CheckResources},
	{"probes", CheckProbes},
	{"images", CheckImages},
	{"headless", CheckHeadless},
	{"default-deny", CheckDefaultDeny},
	{"namespaces", CheckNamespaces},
	{"spread", CheckSpread},
	{"references", CheckReferences},
	{"certificates", CheckCertificates},
	{"shards", CheckShards},
	{"nats-clients", CheckNATSClients},
	{"seamless", CheckSeamless},
	{"service-accounts", CheckServiceAccounts},
	{"gomemlimit", CheckGOMEMLIMIT},
	{"trusted-proxies", CheckTrustedProxies},
}

// CheckAll runs every policy and returns the violations, each prefixed
// with its policy's name.
func CheckAll(r Render) []string {
	var out []string
	for _, p := range Policies {
		for _, v := range p.Check(r) {
			out = append(out, p.Name+": "+v)
		}
	}
	return out
}

// CheckRestricted: every container meets the "restricted" Pod Security
// Standard, and more: runAsNonRoot (container, or pod when the container
// does not say), no root user, allowPrivilegeEscalation false, every
// capability dropped and none added but NET_BIND_SERVICE, seccomp
// RuntimeDefault or Localhost (container, or pod), a read-only root file
// system, not privileged; no host namespaces or hostPath volumes.
func CheckRestricted(r Render) []string {
	var out []string
	for _, w := range r.Workloads() {
		ps := w.Spec
		if ps.HostNetwork || ps.HostPID || ps.HostIPC {
			out = append(out, w.Ref+": uses a host namespace (hostNetwork, hostPID or hostIPC)")
		}
		for _, v := range ps.Volumes {
			if v.HostPath != nil {
				out = append(out, fmt.Sprintf("%s: volume %s is a hostPath", w.Ref, v.Name))
			}
		}
		pod := ps.SecurityContext
		if pod == nil {
			pod = &corev1.PodSecurityContext{}
		}
		if pod.RunAsUser != nil && *pod.RunAsUser == 0 {
			out = append(out, w.Ref+": pod runAsUser 0")
		}
		for _, c := range Containers(ps) {
			at := fmt.Sprintf("%s container %s", w.Ref, c.Name)
			sc := c.SecurityContext
			if sc == nil {
				out = append(out, at+": no securityContext")
				continue
			}
			if sc.Privileged != nil && *sc.Privileged {
				out = append(out, at+": privileged")
			}
			nonRoot := pod.RunAsNonRoot
			if sc.RunAsNonRoot != nil {
				nonRoot = sc.RunAsNonRoot
			}
			if nonRoot == nil || !*nonRoot {
				out = append(out, at+": runAsNonRoot is not true")
			}
			if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
				out = append(out, at+": runAsUser 0")
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				out = append(out, at+": allowPrivilegeEscalation is not false")
			}
			if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				out = append(out, at+": capabilities do not drop ALL")
			}
			if sc.Capabilities != nil {
				for _, a := range sc.Capabilities.Add {
					if a != "NET_BIND_SERVICE" {
						out = append(out, fmt.Sprintf("%s: adds capability %s", at, a))
					}
				}
			}
			seccomp := pod.SeccompProfile
			if sc.SeccompProfile != nil {
				seccomp = sc.SeccompProfile
			}
			if seccomp == nil || (seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault && seccomp.Type != corev1.SeccompProfileTypeLocalhost) {
				out = append(out, at+": seccompProfile is not RuntimeDefault (or Localhost)")
			}
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				out = append(out, at+": readOnlyRootFilesystem is not true")
			}
		}
	}
	return out
}

// CheckResources: every container requests and limits cpu and memory,
// each request at most its limit.
func CheckResources(r Render) []string {
	var out []string
	for _, w := range r.Workloads() {
		for _, c := range Containers(w.Spec) {
			at := fmt.Sprintf("%s container %s", w.Ref, c.Name)
			for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, okReq := c.Resources.Requests[res]
				lim, okLim := c.Resources.Limits[res]
				if !okReq {
					out = append(out, fmt.Sprintf("%s: no %s request", at, res))
				}
				if !okLim {
					out = append(out, fmt.Sprintf("%s: no %s limit", at, res))
				}
				if okReq && okLim && req.Cmp(lim) > 0 {
					out = append(out, fmt.Sprintf("%s: %s request %s above its limit %s", at, res, req.String(), lim.String()))
				}
			}
		}
	}
	return out
}

// CheckProbes: every container of a Deployment or StatefulSet has a
// liveness and a readiness probe (a Job's container runs to completion
// and has none), and a probe's named port is a port of its container.
func CheckProbes(r Render) []string {
	var out []string
	for _, w := range r.Workloads() {
		for i := range w.Spec.Containers {
			c := &w.Spec.Containers[i]
			at := fmt.Sprintf("%s container %s", w.Ref, c.Name)
			if w.LongRunning && c.LivenessProbe == nil {
				out = append(out, at+": no livenessProbe")
			}
			if w.LongRunning && c.ReadinessProbe == nil {
				out = append(out, at+": no readinessProbe")
			}
		}
		for _, c := range Containers(w.Spec) {
			at := fmt.Sprintf("%s container %s", w.Ref, c.Name)
			for kind, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe, "startup": c.StartupProbe} {
				if port, ok := probePort(p); ok && port.Type == intstr.String && !hasPort(c, port.StrVal) {
					out = append(out, fmt.Sprintf("%s: %s probe's port %q is none of the container's ports", at, kind, port.StrVal))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func probePort(p *corev1.Probe) (intstr.IntOrString, bool) {
	switch {
	case p == nil:
	case p.HTTPGet != nil:
		return p.HTTPGet.Port, true
	case p.TCPSocket != nil:
		return p.TCPSocket.Port, true
	}
	return intstr.IntOrString{}, false
}

func hasPort(c *corev1.Container, name string) bool {
	return slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == name })
}

// CheckImages: every image names a version: a tag other than latest, or
// a digest.
func CheckImages(r Render) []string {
	var out []string
	for _, w := range r.Workloads() {
		for _, c := range Containers(w.Spec) {
			if msg := imageProblem(c.Image); msg != "" {
				out = append(out, fmt.Sprintf("%s container %s: image %q %s", w.Ref, c.Name, c.Image, msg))
			}
		}
	}
	return out
}

func imageProblem(image string) string {
	if image == "" {
		return "is empty"
	}
	if strings.Contains(image, "@sha256:") {
		return ""
	}
	name := image[strings.LastIndex(image, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	switch {
	case !ok || tag == "":
		return "has no tag"
	case tag == "latest":
		return "is tagged latest"
	}
	return ""
}

// CheckHeadless: every StatefulSet's serviceName is a headless Service
// (clusterIP None) of the render selecting the StatefulSet's pods.
func CheckHeadless(r Render) []string {
	var out []string
	for _, o := range r.Kind("StatefulSet") {
		s := o.Value.(*appsv1.StatefulSet)
		name := s.Spec.ServiceName
		if name == "" {
			out = append(out, o.Ref()+": no serviceName")
			continue
		}
		so, ok := r.Find("Service", name)
		if !ok {
			out = append(out, fmt.Sprintf("%s: serviceName %s is no Service of the render", o.Ref(), name))
			continue
		}
		svc := so.Value.(*corev1.Service)
		if svc.Spec.ClusterIP != corev1.ClusterIPNone {
			out = append(out, fmt.Sprintf("%s: Service %s is not headless (clusterIP: None)", o.Ref(), name))
		}
		if len(svc.Spec.Selector) == 0 || !selectsLabels(svc.Spec.Selector, s.Spec.Template.Labels) {
			out = append(out, fmt.Sprintf("%s: Service %s does not select its pods", o.Ref(), name))
		}
	}
	return out
}

func selectsLabels(selector, l map[string]string) bool {
	for k, v := range selector {
		if l[k] != v {
			return false
		}
	}
	return true
}

// CheckDefaultDeny: a render with services (Deployments, StatefulSets)
// has NetworkPolicies denying all ingress and all egress by default
// (empty podSelector, policyTypes Ingress or Egress, no rule); the
// policies allowing each path come on top (TestReachability). A render
// of Jobs alone (overlays/load) runs next to such a render, in its
// namespace.
func CheckDefaultDeny(r Render) []string {
	if !slices.ContainsFunc(r.Workloads(), func(w Workload) bool { return w.LongRunning }) {
		return nil
	}
	var out []string
	for _, typ := range []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress} {
		found := false
		for _, o := range r.Kind("NetworkPolicy") {
			np := o.Value.(*networkingv1.NetworkPolicy)
			sel := np.Spec.PodSelector
			rules := len(np.Spec.Ingress)
			if typ == networkingv1.PolicyTypeEgress {
				rules = len(np.Spec.Egress)
			}
			found = found || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 && slices.Contains(np.Spec.PolicyTypes, typ) && rules == 0)
		}
		if !found {
			out = append(out, fmt.Sprintf("no NetworkPolicy denies %s by default (podSelector {}, policyTypes [%s], no rule)", strings.ToLower(string(typ)), typ))
		}
	}
	return out
}

// CheckNamespaces: every Namespace enforces the "restricted" Pod Security
// Standard (label pod-security.kubernetes.io/enforce).
func CheckNamespaces(r Render) []string {
	var out []string
	for _, o := range r.Kind("Namespace") {
		if o.Value.(*corev1.Namespace).Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
			out = append(out, o.Ref()+": label pod-security.kubernetes.io/enforce is not restricted")
		}
	}
	return out
}

// CheckSpread: a Deployment or StatefulSet of more than one replica
// spreads them over machines: a topology spread constraint on
// kubernetes.io/hostname selecting its pods, or a pod anti-affinity.
func CheckSpread(r Render) []string {
	var out []string
	for _, w := range r.Workloads() {
		if !w.LongRunning || w.Replicas < 2 {
			continue
		}
		ok := w.Spec.Affinity != nil && w.Spec.Affinity.PodAntiAffinity != nil
		for _, t := range w.Spec.TopologySpreadConstraints {
			ok = ok || (t.TopologyKey == "kubernetes.io/hostname" && Selects(t.LabelSelector, w.Labels))
		}
		if !ok {
			out = append(out, fmt.Sprintf("%s: %d replicas and no spread over kubernetes.io/hostname (topologySpreadConstraints or podAntiAffinity)", w.Ref, w.Replicas))
		}
	}
	return out
}

// CheckReferences: what an object names exists in the render and fits:
// workload selectors match their pods; volume mounts name a volume or a
// claim template; ConfigMaps mounted or read (not optional) are in the
// render; Services, PodDisruptionBudgets and NetworkPolicies select pods;
// a Service's target ports are ports of the pods it selects; HPAs scale
// a workload of the render; Ingress backends are Service ports; a
// ServiceMonitor's ports are ports of the Services it selects.
func CheckReferences(r Render) []string {
	var out []string
	ws := r.Workloads()
	selectsSome := func(sel map[string]string) []Workload {
		var hit []Workload
		for _, w := range ws {
			if selectsLabels(sel, w.Labels) {
				hit = append(hit, w)
			}
		}
		return hit
	}
	for _, o := range r {
		switch v := o.Value.(type) {
		case *appsv1.Deployment:
			if !Selects(v.Spec.Selector, v.Spec.Template.Labels) {
				out = append(out, o.Ref()+": selector does not match the pod template's labels")
			}
		case *appsv1.StatefulSet:
			if !Selects(v.Spec.Selector, v.Spec.Template.Labels) {
				out = append(out, o.Ref()+": selector does not match the pod template's labels")
			}
		case *corev1.Service:
			if len(v.Spec.Selector) == 0 {
				break
			}
			pods := selectsSome(v.Spec.Selector)
			if len(pods) == 0 {
				out = append(out, o.Ref()+": selects no pod of the render")
				break
			}
			for _, p := range v.Spec.Ports {
				if !servesPort(pods, p) {
					out = append(out, fmt.Sprintf("%s: port %s (%d) is no port of the pods it selects", o.Ref(), p.Name, p.Port))
				}
			}
		case *policyv1.PodDisruptionBudget:
			if v.Spec.Selector == nil || len(selectsSome(v.Spec.Selector.MatchLabels)) == 0 {
				out = append(out, o.Ref()+": selects no pod of the render")
			}
		case *networkingv1.NetworkPolicy:
			if sel := v.Spec.PodSelector.MatchLabels; len(sel) > 0 && len(selectsSome(sel)) == 0 && !externalPods(sel) {
				out = append(out, o.Ref()+": selects no pod of the render")
			}
		case *autoscalingv2.HorizontalPodAutoscaler:
			if _, ok := r.Find(v.Spec.ScaleTargetRef.Kind, v.Spec.ScaleTargetRef.Name); !ok {
				out = append(out, fmt.Sprintf("%s: scales %s/%s, not in the render", o.Ref(), v.Spec.ScaleTargetRef.Kind, v.Spec.ScaleTargetRef.Name))
			}
		case *networkingv1.Ingress:
			for _, rule := range v.Spec.Rules {
				if rule.HTTP == nil {
					continue
				}
				for _, p := range rule.HTTP.Paths {
					if msg := backendProblem(r, p.Backend); msg != "" {
						out = append(out, fmt.Sprintf("%s: path %s: %s", o.Ref(), p.Path, msg))
					}
				}
			}
		case *ServiceMonitor:
			for _, e := range v.Spec.Endpoints {
				found := false
				for _, so := range r.Kind("Service") {
					svc := so.Value.(*corev1.Service)
					found = found || (Selects(&v.Spec.Selector, so.Meta.Labels) &&
						slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == e.Port }))
				}
				if !found {
					out = append(out, fmt.Sprintf("%s: port %s is in no Service it selects", o.Ref(), e.Port))
				}
			}
		}
	}
	for _, w := range ws {
		out = append(out, podReferences(r, w)...)
	}
	return out
}

// externalPods: a selector of pods the operator runs, not the manifests:
// NATS readers (label chemmy.io/nats-reader), which the base's policies
// let reach NATS.
func externalPods(sel map[string]string) bool {
	_, ok := sel["chemmy.io/nats-reader"]
	return ok
}

func servesPort(pods []Workload, p corev1.ServicePort) bool {
	target := p.TargetPort
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(p.Port)
	}
	for _, w := range pods {
		for _, c := range w.Spec.Containers {
			for _, cp := range c.Ports {
				if (target.Type == intstr.String && cp.Name == target.StrVal) || (target.Type == intstr.Int && cp.ContainerPort == target.IntVal) {
					return true
				}
			}
		}
	}
	return false
}

func backendProblem(r Render, b networkingv1.IngressBackend) string {
	if b.Service == nil {
		return "backend is not a Service"
	}
	so, ok := r.Find("Service", b.Service.Name)
	if !ok {
		return fmt.Sprintf("Service %s is not in the render", b.Service.Name)
	}
	for _, p := range so.Value.(*corev1.Service).Spec.Ports {
		if (b.Service.Port.Name != "" && p.Name == b.Service.Port.Name) || (b.Service.Port.Number != 0 && p.Port == b.Service.Port.Number) {
			return ""
		}
	}
	return fmt.Sprintf("Service %s has no port %s%d", b.Service.Name, b.Service.Port.Name, b.Service.Port.Number)
}

func podReferences(r Render, w Workload) []string {
	var out []string
	volumes := slices.Clone(w.Claims)
	for _, v := range w.Spec.Volumes {
		volumes = append(volumes, v.Name)
		if cm := v.ConfigMap; cm != nil && (cm.Optional == nil || !*cm.Optional) {
			if _, ok := r.Find("ConfigMap", cm.Name); !ok {
				out = append(out, fmt.Sprintf("%s: volume %s mounts ConfigMap %s, not in the render", w.Ref, v.Name, cm.Name))
			}
		}
	}
	for _, c := range Containers(w.Spec) {
		for _, m := range c.VolumeMounts {
			if !slices.Contains(volumes, m.Name) {
				out = append(out, fmt.Sprintf("%s container %s: mounts %s, no volume or claim template", w.Ref, c.Name, m.Name))
			}
		}
		for _, e := range c.EnvFrom {
			if cm := e.ConfigMapRef; cm != nil && (cm.Optional == nil || !*cm.Optional) {
				if _, ok := r.Find("ConfigMap", cm.Name); !ok {
					out = append(out, fmt.Sprintf("%s container %s: reads ConfigMap %s, not in the render", w.Ref, c.Name, cm.Name))
				}
			}
		}
	}
	return out
}

// CheckCertificates: cert-manager objects fit together: a Certificate's
// Issuer is in the render (a ClusterIssuer is the cluster's), its
// durations parse with renewBefore shorter than duration; a CA Issuer's
// Secret is a CA Certificate's; and when the render has Certificates,
// every mounted Secret named *-tls is one of theirs (a workload waiting
// for a certificate nobody makes never starts).
func CheckCertificates(r Render) []string {
	var out []string
	certs := r.Kind("Certificate")
	made := map[string]*Certificate{}
	for _, o := range certs {
		c := o.Value.(*Certificate)
		made[c.Spec.SecretName] = c
		if c.Spec.SecretName == "" {
			out = append(out, o.Ref()+": no secretName")
		}
		if ref := c.Spec.IssuerRef; ref.Kind == "" || ref.Kind == "Issuer" {
			if _, ok := r.Find("Issuer", ref.Name); !ok {
				out = append(out, fmt.Sprintf("%s: Issuer %s is not in the render", o.Ref(), ref.Name))
			}
		}
		d, errD := time.ParseDuration(c.Spec.Duration)
		rb, errR := time.ParseDuration(c.Spec.RenewBefore)
		switch {
		case errD != nil || errR != nil:
			out = append(out, fmt.Sprintf("%s: duration %q or renewBefore %q is not a duration", o.Ref(), c.Spec.Duration, c.Spec.RenewBefore))
		case rb >= d:
			out = append(out, fmt.Sprintf("%s: renewBefore %s is not shorter than duration %s", o.Ref(), rb, d))
		}
	}
	for _, o := range r.Kind("Issuer") {
		is := o.Value.(*Issuer)
		if is.Spec.CA == nil {
			continue
		}
		if c, ok := made[is.Spec.CA.SecretName]; !ok || !c.Spec.IsCA {
			out = append(out, fmt.Sprintf("%s: CA Secret %s is no CA Certificate's", o.Ref(), is.Spec.CA.SecretName))
		}
	}
	if len(certs) == 0 {
		return out
	}
	for _, w := range r.Workloads() {
		for _, v := range w.Spec.Volumes {
			if s := v.Secret; s != nil && strings.HasSuffix(s.SecretName, "-tls") && made[s.SecretName] == nil {
				out = append(out, fmt.Sprintf("%s: mounts Secret %s, which no Certificate makes", w.Ref, s.SecretName))
			}
		}
	}
	return out
}

// The sharding contract between the gateway and table-svc: shard i is
// pod table-svc-<i> (its table-svc on 7001, its shoe-svc on 7003); the
// gateway's -table-addr and -shoe-addr list the shards in order.
const (
	tableSvc  = "table-svc"
	shoeSvc   = "shoe-svc"
	tablePort = 7001
	shoePort  = 7003
)

// CheckShards: the gateway's -table-addr and -shoe-addr list exactly the
// table-svc StatefulSet's pods, shard i at position i
// (table-svc-<i>.<serviceName>:7001 and :7003), and both containers of a
// shard take -shard=$(POD_NAME) with POD_NAME the pod's name.
func CheckShards(r Render) []string {
	so, ok := r.Find("StatefulSet", tableSvc)
	if !ok {
		return nil
	}
	sts := so.Value.(*appsv1.StatefulSet)
	n := int(replicas(sts.Spec.Replicas))
	var out []string
	for _, name := range []string{tableSvc, shoeSvc} {
		c := Container(&sts.Spec.Template.Spec, name)
		if c == nil {
			out = append(out, fmt.Sprintf("%s: no container %s", so.Ref(), name))
			continue
		}
		if v, _ := Arg(c.Args, "shard"); v != "$(POD_NAME)" {
			out = append(out, fmt.Sprintf("%s container %s: -shard is %q, not $(POD_NAME)", so.Ref(), name, v))
		}
		if !envFromField(c, "POD_NAME", "metadata.name") {
			out = append(out, fmt.Sprintf("%s container %s: env POD_NAME is not the pod's metadata.name", so.Ref(), name))
		}
	}
	want := func(port int) string {
		addrs := make([]string, n)
		for i := range addrs {
			addrs[i] = fmt.Sprintf("%s-%d.%s:%d", tableSvc, i, sts.Spec.ServiceName, port)
		}
		return strings.Join(addrs, ",")
	}
	for _, w := range r.Workloads() {
		for _, c := range Containers(w.Spec) {
			for flag, port := range map[string]int{"table-addr": tablePort, "shoe-addr": shoePort} {
				got, ok := Arg(c.Args, flag)
				if !ok || w.Name == tableSvc {
					continue // a shard's table-svc calls its own shoe-svc
				}
				if got != want(port) {
					out = append(out, fmt.Sprintf("%s container %s: -%s=%s, want the %d shards in order: %s", w.Ref, c.Name, flag, got, n, want(port)))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func envFromField(c *corev1.Container, name, field string) bool {
	return slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == field
	})
}

// CheckNATSClients: every -nats-url lists every node of the nats
// StatefulSet (nats://nats-<i>.<serviceName>:4222, in order), and every
// NATS client sets the same -stream-replicas, at least 2 when there are
// several nodes (the stream is replicated) and at most the nodes.
func CheckNATSClients(r Render) []string {
	so, ok := r.Find("StatefulSet", "nats")
	if !ok {
		return nil
	}
	sts := so.Value.(*appsv1.StatefulSet)
	nodes := int(replicas(sts.Spec.Replicas))
	urls := make([]string, nodes)
	for i := range urls {
		urls[i] = fmt.Sprintf("nats://nats-%d.%s:4222", i, sts.Spec.ServiceName)
	}
	want := strings.Join(urls, ",")
	var out []string
	streamReplicas := map[string]bool{}
	for _, w := range r.Workloads() {
		for _, c := range Containers(w.Spec) {
			got, ok := Arg(c.Args, "nats-url")
			if !ok {
				continue
			}
			at := fmt.Sprintf("%s container %s", w.Ref, c.Name)
			if got != want {
				out = append(out, fmt.Sprintf("%s: -nats-url=%s, want every node: %s", at, got, want))
			}
			sr, _ := Arg(c.Args, "stream-replicas")
			streamReplicas[sr] = true
			k, err := strconv.Atoi(sr)
			switch {
			case err != nil:
				out = append(out, fmt.Sprintf("%s: -stream-replicas %q is not a number", at, sr))
			case k < 1 || k > nodes:
				out = append(out, fmt.Sprintf("%s: -stream-replicas=%d, want 1..%d (the NATS nodes)", at, k, nodes))
			case nodes > 1 && k < 2:
				out = append(out, fmt.Sprintf("%s: -stream-replicas=%d on %d NATS nodes: the stream is not replicated", at, k, nodes))
			}
		}
	}
	if len(streamReplicas) > 1 {
		out = append(out, fmt.Sprintf("the NATS clients disagree on -stream-replicas (%d values): the first to create the stream wins", len(streamReplicas)))
	}
	return out
}

// CheckNoSecretData: no Secret of the render holds data. The base and
// the production overlay reference their secrets; only the local demo
// overlays ship some.
func CheckNoSecretData(r Render) []string {
	var out []string
	for _, o := range r.Kind("Secret") {
		s := o.Value.(*corev1.Secret)
		if len(s.Data) > 0 || len(s.StringData) > 0 {
			out = append(out, o.Ref()+": holds data (reference the operator's Secret instead)")
		}
	}
	return out
}

// CheckServiceAccounts: every pod template names a ServiceAccount of its
// own (not "default", not another workload's) that is in the render, and
// mounts no API token: automountServiceAccountToken false on the pod
// template and on the ServiceAccount (no chemmy process calls the
// Kubernetes API).
func CheckServiceAccounts(r Render) []string {
	var out []string
	owner := map[string]string{}
	for _, w := range r.Workloads() {
		name := w.Spec.ServiceAccountName
		if name == "" || name == "default" {
			out = append(out, w.Ref+": runs as the namespace's default ServiceAccount (serviceAccountName unset)")
			continue
		}
		if other, ok := owner[name]; ok {
			out = append(out, fmt.Sprintf("%s: shares ServiceAccount %s with %s", w.Ref, name, other))
		}
		owner[name] = w.Ref
		if a := w.Spec.AutomountServiceAccountToken; a == nil || *a {
			out = append(out, w.Ref+": automountServiceAccountToken is not false")
		}
		o, ok := r.Find("ServiceAccount", name)
		if !ok {
			out = append(out, fmt.Sprintf("%s: ServiceAccount %s is not in the render", w.Ref, name))
			continue
		}
		if a := o.Value.(*corev1.ServiceAccount).AutomountServiceAccountToken; a == nil || *a {
			out = append(out, o.Ref()+": automountServiceAccountToken is not false")
		}
	}
	return out
}

// GOMEMLIMIT bounds, as a fraction of the container's memory limit: the
// Go runtime collects harder as the heap nears GOMEMLIMIT, which must
// leave room under the limit for what it does not count.
const (
	memLimitMin = 0.80
	memLimitMax = 0.90
)

// CheckGOMEMLIMIT: every container with a memory limit sets GOMEMLIMIT to
// a literal value (a resourceFieldRef can only give 100% of the limit)
// between 80% and 90% of that limit.
func CheckGOMEMLIMIT(r Render) []string {
	var out []string
	for _, w := range r.Workloads() {
		for _, c := range Containers(w.Spec) {
			lim, ok := c.Resources.Limits[corev1.ResourceMemory]
			if !ok {
				continue
			}
			at := fmt.Sprintf("%s container %s", w.Ref, c.Name)
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" })
			if i < 0 {
				out = append(out, fmt.Sprintf("%s: memory limit %s and no GOMEMLIMIT", at, lim.String()))
				continue
			}
			e := c.Env[i]
			if e.ValueFrom != nil {
				out = append(out, at+": GOMEMLIMIT is not a literal value (a resourceFieldRef gives 100% of the limit)")
				continue
			}
			v, err := parseGoMemLimit(e.Value)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: GOMEMLIMIT=%s: %v", at, e.Value, err))
				continue
			}
			f := float64(v) / float64(lim.Value())
			if f < memLimitMin || f > memLimitMax {
				out = append(out, fmt.Sprintf("%s: GOMEMLIMIT=%s is %.1f%% of the memory limit %s, want %.0f%% to %.0f%%",
					at, e.Value, 100*f, lim.String(), 100*memLimitMin, 100*memLimitMax))
			}
		}
	}
	return out
}

// parseGoMemLimit parses GOMEMLIMIT as the Go runtime does: a number of
// bytes with an optional unit B, KiB, MiB, GiB or TiB.
func parseGoMemLimit(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("not a size the Go runtime reads (bytes, or a number with B, KiB, MiB, GiB, TiB)")
	}
	return n * mult, nil
}

// CheckTrustedProxies: a render exposing the gateway through an Ingress
// gives the gateway -trusted-proxies (or CHEMMY_GATEWAY_TRUSTED_PROXIES
// from its env or envFrom ConfigMaps), so that failed authentications
// and connections count against the clients the controller forwards for,
// not against the controller; every range is a valid CIDR or address,
// private (in-cluster), and none is a /0.
func CheckTrustedProxies(r Render) []string {
	exposed := false
	for _, o := range r.Kind("Ingress") {
		for _, rule := range o.Value.(*networkingv1.Ingress).Spec.Rules {
			if rule.HTTP == nil {
				continue
			}
			for _, p := range rule.HTTP.Paths {
				exposed = exposed || (p.Backend.Service != nil && p.Backend.Service.Name == "gateway")
			}
		}
	}
	if !exposed {
		return nil
	}
	o, ok := r.Find("Deployment", "gateway")
	if !ok {
		return nil
	}
	c := Container(&o.Value.(*appsv1.Deployment).Spec.Template.Spec, "gateway")
	if c == nil {
		return []string{o.Ref() + ": no container gateway"}
	}
	at := o.Ref() + " container gateway"
	v, ok := Arg(c.Args, "trusted-proxies")
	if !ok {
		v, ok = envValue(r, c, "CHEMMY_GATEWAY_TRUSTED_PROXIES")
	}
	if !ok || strings.TrimSpace(v) == "" {
		return []string{at + ": behind an Ingress without -trusted-proxies (the controller's pod range)"}
	}
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, errA := netip.ParseAddr(f)
			if errA != nil {
				out = append(out, fmt.Sprintf("%s: trusted proxy %q is not a CIDR or an address", at, f))
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		switch {
		case p.Bits() == 0:
			out = append(out, fmt.Sprintf("%s: trusted proxy %s trusts every address: any client could name any other", at, f))
		case !p.Addr().IsPrivate():
			out = append(out, fmt.Sprintf("%s: trusted proxy %s is not a private (in-cluster) range", at, f))
		}
	}
	return out
}
