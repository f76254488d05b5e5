package check

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Endpoint is one end of a connection in the reachability model: a pod
// (of the render, or outside it: kube-dns, Prometheus) or an address
// outside the cluster (no namespace).
type Endpoint struct {
	Name      string
	Namespace string            // "" outside the cluster
	NSLabels  map[string]string // its namespace's labels
	Labels    map[string]string // the pod's labels
	Ports     []corev1.ContainerPort
	IP        netip.Addr
}

// InCluster: a pod, which pod and namespace selectors can match.
func (e Endpoint) InCluster() bool { return e.Namespace != "" }

// Reach is the NetworkPolicies of a render, evaluated as Kubernetes
// does: a connection from src to dst on port/protocol is allowed when
// src's egress allows it (no Egress policy selects src, or a rule of one
// that does matches dst and the port) and dst's ingress allows it (the
// same, with Ingress policies and src). Policies apply to the pods of
// their namespace; an endpoint outside the cluster has none.
type Reach struct {
	policies []*networkingv1.NetworkPolicy
}

// NewReach takes the NetworkPolicies of the render; ns is the namespace
// of objects that name none (the base's).
func NewReach(r Render, ns string) Reach {
	var out Reach
	for _, o := range r.Kind("NetworkPolicy") {
		np := o.Value.(*networkingv1.NetworkPolicy).DeepCopy()
		if np.Namespace == "" {
			np.Namespace = ns
		}
		out.policies = append(out.policies, np)
	}
	return out
}

// PodEndpoints are the render's workloads as endpoints, in namespace ns
// (for objects naming none) with the namespace's labels (its
// kubernetes.io/metadata.name, and a Namespace object's of the render),
// each given an address of the pod range 10.244.0.0/16.
func PodEndpoints(r Render, ns string) map[string]Endpoint {
	out := map[string]Endpoint{}
	for i, w := range r.Workloads() {
		o, _ := r.Find(w.Kind, w.Name)
		n := o.Meta.Namespace
		if n == "" {
			n = ns
		}
		nsl := map[string]string{"kubernetes.io/metadata.name": n}
		if no, ok := r.Find("Namespace", n); ok {
			for k, v := range no.Meta.Labels {
				nsl[k] = v
			}
		}
		var ports []corev1.ContainerPort
		for _, c := range w.Spec.Containers {
			ports = append(ports, c.Ports...)
		}
		out[w.Name] = Endpoint{Name: w.Ref, Namespace: n, NSLabels: nsl, Labels: w.Labels, Ports: ports,
			IP: netip.AddrFrom4([4]byte{10, 244, byte(i + 1), 10})}
	}
	return out
}

// Allowed reports whether src may open a connection to dst's port.
func (m Reach) Allowed(src, dst Endpoint, port int32, proto corev1.Protocol) bool {
	return m.side(src, dst, dst, port, proto, networkingv1.PolicyTypeEgress) &&
		m.side(dst, src, dst, port, proto, networkingv1.PolicyTypeIngress)
}

// side: the policies of `self` of type typ allow traffic with `peer`
// (the destination's port, resolved against dst's named ports).
func (m Reach) side(self, peer, dst Endpoint, port int32, proto corev1.Protocol, typ networkingv1.PolicyType) bool {
	if !self.InCluster() {
		return true
	}
	selected := false
	for _, np := range m.policies {
		if np.Namespace != self.Namespace || !Selects(&np.Spec.PodSelector, self.Labels) || !hasType(np, typ) {
			continue
		}
		selected = true
		if typ == networkingv1.PolicyTypeEgress {
			for _, rule := range np.Spec.Egress {
				if peersMatch(rule.To, np.Namespace, peer) && portsMatch(rule.Ports, dst, port, proto) {
					return true
				}
			}
		} else {
			for _, rule := range np.Spec.Ingress {
				if peersMatch(rule.From, np.Namespace, peer) && portsMatch(rule.Ports, dst, port, proto) {
					return true
				}
			}
		}
	}
	return !selected
}

// hasType: the policy's policyTypes, or when unset Ingress, and Egress
// if it has egress rules (the API server's defaulting).
func hasType(np *networkingv1.NetworkPolicy, typ networkingv1.PolicyType) bool {
	if len(np.Spec.PolicyTypes) > 0 {
		return slices.Contains(np.Spec.PolicyTypes, typ)
	}
	return typ == networkingv1.PolicyTypeIngress || len(np.Spec.Egress) > 0
}

func peersMatch(peers []networkingv1.NetworkPolicyPeer, ns string, e Endpoint) bool {
	if len(peers) == 0 {
		return true
	}
	for _, p := range peers {
		if peerMatches(p, ns, e) {
			return true
		}
	}
	return false
}

// peerMatches: an ipBlock matches the endpoint's address (pods' too:
// whether a CNI applies ipBlocks to pod traffic is its own choice, and
// taking it as matching is the safe reading for what must be denied);
// selectors match pods only, a podSelector alone in the policy's
// namespace.
func peerMatches(p networkingv1.NetworkPolicyPeer, ns string, e Endpoint) bool {
	if p.IPBlock != nil {
		return inBlock(p.IPBlock, e.IP)
	}
	if !e.InCluster() {
		return false
	}
	if p.NamespaceSelector == nil {
		if e.Namespace != ns {
			return false
		}
	} else if !selectsOrEmpty(p.NamespaceSelector, e.NSLabels) {
		return false
	}
	return p.PodSelector == nil || selectsOrEmpty(p.PodSelector, e.Labels)
}

func selectsOrEmpty(s *metav1.LabelSelector, l map[string]string) bool {
	if len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
		return true
	}
	return Selects(s, l)
}

func inBlock(b *networkingv1.IPBlock, ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil || !cidr.Contains(ip) {
		return false
	}
	for _, ex := range b.Except {
		if p, err := netip.ParsePrefix(ex); err == nil && p.Contains(ip) {
			return false
		}
	}
	return true
}

func portsMatch(ports []networkingv1.NetworkPolicyPort, dst Endpoint, port int32, proto corev1.Protocol) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		pp := corev1.ProtocolTCP
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if pp != proto {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.Type == intstr.Int:
			end := p.Port.IntVal
			if p.EndPort != nil {
				end = *p.EndPort
			}
			if port >= p.Port.IntVal && port <= end {
				return true
			}
		default:
			for _, cp := range dst.Ports {
				if cp.Name == p.Port.StrVal && cp.ContainerPort == port {
					return true
				}
			}
		}
	}
	return false
}

// Path is one connection the design needs, or forbids.
type Path struct {
	From, To string
	Port     int32
	Proto    corev1.Protocol
}

func (p Path) String() string { return fmt.Sprintf("%s -> %s:%d/%s", p.From, p.To, p.Port, p.Proto) }
