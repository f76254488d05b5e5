package check

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

const (
	tcp = corev1.ProtocolTCP
	udp = corev1.ProtocolUDP
)

// endpoints: the render's pods (by workload name, in namespace chemmy)
// and what is around them: the cluster's DNS, Prometheus in namespace
// monitoring, a NATS reader in the namespace, a pod of another
// namespace, an address on the Internet and the seamless component's
// placeholder operator wallet.
func endpoints(r Render) map[string]Endpoint {
	eps := PodEndpoints(r, "chemmy")
	pod := func(name, ns string, labels map[string]string, ip netip.Addr, ports ...corev1.ContainerPort) {
		eps[name] = Endpoint{Name: name, Namespace: ns, NSLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			Labels: labels, IP: ip, Ports: ports}
	}
	pod("kube-dns", "kube-system", map[string]string{"k8s-app": "kube-dns"}, netip.MustParseAddr("10.244.200.10"),
		corev1.ContainerPort{Name: "dns", ContainerPort: 53, Protocol: udp}, corev1.ContainerPort{Name: "dns-tcp", ContainerPort: 53})
	pod("prometheus", "monitoring", map[string]string{"app.kubernetes.io/name": "prometheus"}, netip.MustParseAddr("10.244.201.10"))
	pod("reader", "chemmy", map[string]string{"chemmy.io/nats-reader": "true"}, netip.MustParseAddr("10.244.202.10"))
	pod("other-pod", "other", map[string]string{"app.kubernetes.io/name": "other"}, netip.MustParseAddr("10.244.203.10"))
	eps["internet"] = Endpoint{Name: "internet", IP: netip.MustParseAddr("203.0.113.7")}
	eps["operator-wallet"] = Endpoint{Name: "operator-wallet", IP: netip.MustParseAddr("192.0.2.10")}
	return eps
}

// The design's paths: what chemmy's processes call (their flags in the
// base: the gateway's -table-addr, -shoe-addr, -wallet-addr and JWKS;
// table-svc's -shoe-addr, -wallet-addr, -nats-url; wallet-svc's and
// shoe-svc's -nats-url; the NATS routes), what reaches them from outside
// (callers, Prometheus, readers), and what must not be reachable.
var (
	requiredPaths = []Path{
		{"gateway", "table-svc", 7001, tcp}, {"gateway", "table-svc", 7003, tcp}, {"gateway", "wallet-svc", 7002, tcp},
		{"gateway", "internet", 443, tcp},
		{"table-svc", "wallet-svc", 7002, tcp}, {"table-svc", "table-svc", 7003, tcp}, {"table-svc", "nats", 4222, tcp},
		{"wallet-svc", "nats", 4222, tcp},
		{"nats", "nats", 6222, tcp},
		{"reader", "nats", 4222, tcp},
		{"internet", "gateway", 7000, tcp}, {"internet", "gateway", 8080, tcp},
		{"prometheus", "gateway", 9090, tcp}, {"prometheus", "table-svc", 9090, tcp}, {"prometheus", "table-svc", 9091, tcp},
		{"prometheus", "wallet-svc", 9090, tcp}, {"prometheus", "nats", 8222, tcp},
	}
	forbiddenPaths = []Path{
		{"gateway", "nats", 4222, tcp}, {"gateway", "internet", 80, tcp}, {"gateway", "other-pod", 8080, tcp},
		{"table-svc", "gateway", 7000, tcp}, {"table-svc", "internet", 443, tcp}, {"table-svc", "nats", 6222, tcp},
		{"wallet-svc", "table-svc", 7001, tcp}, {"wallet-svc", "table-svc", 7003, tcp}, {"wallet-svc", "gateway", 7000, tcp},
		{"wallet-svc", "internet", 443, tcp},
		{"nats", "table-svc", 7001, tcp}, {"nats", "wallet-svc", 7002, tcp}, {"nats", "internet", 443, tcp},
		{"reader", "wallet-svc", 7002, tcp}, {"reader", "internet", 443, tcp},
		{"internet", "nats", 4222, tcp}, {"internet", "table-svc", 7001, tcp}, {"internet", "wallet-svc", 7002, tcp},
		{"other-pod", "nats", 4222, tcp}, {"other-pod", "wallet-svc", 7002, tcp},
		{"prometheus", "wallet-svc", 7002, tcp},
	}
	// seamless mode: only wallet-svc reaches the operator's wallet
	seamlessRequired  = []Path{{"wallet-svc", "operator-wallet", 443, tcp}}
	seamlessForbidden = []Path{{"gateway", "operator-wallet", 443, tcp}, {"table-svc", "operator-wallet", 443, tcp},
		{"nats", "operator-wallet", 443, tcp}, {"wallet-svc", "internet", 443, tcp}}
	// the load Job, run next to a deployment
	loadRequired = []Path{{"chemmy-load", "gateway", 7000, tcp}, {"chemmy-load", "table-svc", 9090, tcp},
		{"chemmy-load", "table-svc", 9091, tcp}, {"chemmy-load", "wallet-svc", 9090, tcp}}
	// the check after a load run on the one-node cluster (overlays/onenode-load):
	// the gateway and the stream, nothing else
	checkRequired  = []Path{{"chemmy-check", "gateway", 7000, tcp}, {"chemmy-check", "nats", 4222, tcp}}
	checkForbidden = []Path{{"chemmy-check", "wallet-svc", 7002, tcp}, {"chemmy-check", "table-svc", 7001, tcp},
		{"chemmy-check", "internet", 443, tcp}}
	loadForbidden = []Path{{"chemmy-load", "nats", 4222, tcp}, {"chemmy-load", "wallet-svc", 7002, tcp},
		{"chemmy-load", "table-svc", 7001, tcp}, {"chemmy-load", "internet", 443, tcp}}
)

// reachProblems: the required paths the render's policies deny and the
// forbidden ones they allow; every pod of the render reaching the
// cluster's DNS is required too.
func reachProblems(t *testing.T, r Render, required, forbidden []Path) []string {
	t.Helper()
	eps := endpoints(r)
	m := NewReach(r, "chemmy")
	for _, w := range r.Workloads() {
		required = append(required, Path{w.Name, "kube-dns", 53, udp}, Path{w.Name, "kube-dns", 53, tcp})
	}
	var out []string
	check := func(paths []Path, want bool) {
		for _, p := range paths {
			src, ok1 := eps[p.From]
			dst, ok2 := eps[p.To]
			if !ok1 || !ok2 {
				t.Fatalf("%s: no such endpoint", p)
			}
			if got := m.Allowed(src, dst, p.Port, p.Proto); got != want {
				verb := "denied, but needed"
				if !want {
					verb = "allowed, but must not be"
				}
				out = append(out, p.String()+": "+verb)
			}
		}
	}
	check(required, true)
	check(forbidden, false)
	return out
}

func isSeamless(r Render) bool {
	for _, w := range r.Workloads() {
		for _, c := range Containers(w.Spec) {
			if v, _ := Arg(c.Args, "wallet-mode"); v == "seamless" {
				return true
			}
		}
	}
	return false
}

// TestReachability evaluates every render's NetworkPolicies (ingress and
// egress, by pod and namespace selectors, ipBlocks and ports): each path
// the design needs is allowed, in both directions' policies, and the
// paths it does not need are denied; in seamless mode only wallet-svc
// reaches the operator's wallet; the load Job, beside a deployment,
// reaches the gateway and the figures only.
func TestReachability(t *testing.T) {
	for _, dir := range dirs(t) {
		if jobsOnly[dir] != "" {
			continue
		}
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			req, forb := requiredPaths, forbiddenPaths
			if isSeamless(r) {
				req, forb = append(slices.Clone(req), seamlessRequired...), append(slices.Clone(forb), seamlessForbidden...)
			}
			for _, v := range reachProblems(t, r, req, forb) {
				t.Error(v)
			}
		})
	}
	t.Run("seamless component", func(t *testing.T) {
		r := renderWithComponent(t, "seamless-wallet")
		for _, v := range reachProblems(t, r, append(slices.Clone(requiredPaths), seamlessRequired...), append(slices.Clone(forbiddenPaths), seamlessForbidden...)) {
			t.Error(v)
		}
	})
	for jobs, beside := range jobsOnly {
		t.Run(jobs+" beside "+beside, func(t *testing.T) {
			r := append(render(t, beside), render(t, jobs)...)
			req, forb := append(slices.Clone(requiredPaths), loadRequired...), append(slices.Clone(forbiddenPaths), loadForbidden...)
			if slices.ContainsFunc(r.Workloads(), func(w Workload) bool { return w.Name == "chemmy-check" }) {
				req, forb = append(req, checkRequired...), append(forb, checkForbidden...)
			}
			for _, v := range reachProblems(t, r, req, forb) {
				t.Error(v)
			}
		})
	}
}

// jobsOnly: the overlays of Jobs alone (the load Job), each applied
// beside a deployment: the overlay it runs next to.
var jobsOnly = map[string]string{
	"overlays/load":         "overlays/local",
	"overlays/onenode-load": "overlays/onenode",
}

// Each case spoils the local render's policies and expects the model to
// see the path it opens or closes.
func TestReachabilityCatches(t *testing.T) {
	drop := func(r Render, names ...string) Render {
		return slices.DeleteFunc(r, func(o Object) bool { return o.Kind == "NetworkPolicy" && slices.Contains(names, o.Meta.Name) })
	}
	for _, tc := range []struct {
		name  string
		spoil func(Render) Render
		want  string
	}{
		{"gateway's egress dropped", func(r Render) Render { return drop(r, "gateway-egress") },
			"gateway -> table-svc:7001/TCP: denied, but needed"},
		{"no egress deny", func(r Render) Render { return drop(r, "default-deny-egress", "dns-egress", "gateway-egress") },
			"gateway -> internet:80/TCP: allowed, but must not be"},
		{"neither egress nor ingress", func(r Render) Render {
			return drop(r, "default-deny-egress", "dns-egress", "gateway-egress", "default-deny-ingress", "nats")
		},
			"gateway -> nats:4222/TCP: allowed, but must not be"},
		{"wallet egress opened", func(r Render) Render {
			np := networkPolicy(t, r, "wallet-svc-egress")
			np.Spec.Egress = append(np.Spec.Egress, networkingv1.NetworkPolicyEgressRule{})
			return r
		}, "wallet-svc -> internet:443/TCP: allowed, but must not be"},
		{"DNS to any namespace's kube-dns only by label", func(r Render) Render {
			np := networkPolicy(t, r, "dns-egress")
			np.Spec.Egress[0].To[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] = "dns"
			return r
		}, "gateway -> kube-dns:53/UDP: denied, but needed"},
		{"shoe-svc not reachable from its table-svc", func(r Render) Render {
			np := networkPolicy(t, r, "table-svc-egress")
			np.Spec.Egress = slices.Delete(np.Spec.Egress, 1, 2)
			return r
		}, "table-svc -> table-svc:7003/TCP: denied, but needed"},
		{"ingress opened", func(r Render) Render { return drop(r, "default-deny-ingress", "wallet-svc") },
			"prometheus -> wallet-svc:7002/TCP: allowed, but must not be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := reachProblems(t, tc.spoil(render(t, "overlays/local")), requiredPaths, forbiddenPaths)
			if !containsSub(got, tc.want) {
				t.Errorf("not caught: want %q, got %q", tc.want, got)
			}
		})
	}
}
