package check

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func ptr[T any](v T) *T { return &v }

// Each case spoils one thing of a render that keeps every policy (the
// local overlay: it has every kind, cert-manager's included) and expects
// that policy to name it. TestManifests shows the unspoilt render clean.
func TestPoliciesCatchBadObjects(t *testing.T) {
	tableSvc := func(r Render) *corev1.Container {
		return &statefulSet(t, r, "table-svc").Spec.Template.Spec.Containers[0]
	}
	shoe := func(r Render) *corev1.Container {
		return &statefulSet(t, r, "table-svc").Spec.Template.Spec.Containers[1]
	}
	gateway := func(r Render) *corev1.Container { return &deployment(t, r, "gateway").Spec.Template.Spec.Containers[0] }
	setArg := func(c *corev1.Container, name, value string) {
		for i, a := range c.Args {
			if strings.HasPrefix(a, "-"+name+"=") {
				c.Args[i] = "-" + name + "=" + value
				return
			}
		}
		t.Fatalf("container %s has no -%s", c.Name, name)
	}
	cases := []struct {
		name   string
		policy func(Render) []string
		spoil  func(Render) Render
		want   string
	}{
		{"runAsNonRoot false", CheckRestricted, func(r Render) Render {
			gateway(r).SecurityContext.RunAsNonRoot = ptr(false)
			return r
		}, "Deployment/gateway container gateway: runAsNonRoot is not true"},
		{"runAsNonRoot nowhere", CheckRestricted, func(r Render) Render {
			statefulSet(t, r, "nats").Spec.Template.Spec.SecurityContext.RunAsNonRoot = nil
			statefulSet(t, r, "nats").Spec.Template.Spec.Containers[0].SecurityContext.RunAsNonRoot = nil
			return r
		}, "StatefulSet/nats container nats: runAsNonRoot is not true"},
		{"privilege escalation unset", CheckRestricted, func(r Render) Render {
			shoe(r).SecurityContext.AllowPrivilegeEscalation = nil
			return r
		}, "container shoe-svc: allowPrivilegeEscalation is not false"},
		{"capabilities kept", CheckRestricted, func(r Render) Render {
			tableSvc(r).SecurityContext.Capabilities.Drop = []corev1.Capability{"NET_RAW"}
			return r
		}, "container table-svc: capabilities do not drop ALL"},
		{"capability added", CheckRestricted, func(r Render) Render {
			tableSvc(r).SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
			return r
		}, "adds capability SYS_ADMIN"},
		{"seccomp unconfined", CheckRestricted, func(r Render) Render {
			gateway(r).SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
			return r
		}, "container gateway: seccompProfile is not RuntimeDefault"},
		{"writable root", CheckRestricted, func(r Render) Render {
			gateway(r).SecurityContext.ReadOnlyRootFilesystem = ptr(false)
			return r
		}, "container gateway: readOnlyRootFilesystem is not true"},
		{"privileged", CheckRestricted, func(r Render) Render {
			gateway(r).SecurityContext.Privileged = ptr(true)
			return r
		}, "container gateway: privileged"},
		{"no securityContext", CheckRestricted, func(r Render) Render {
			gateway(r).SecurityContext = nil
			return r
		}, "container gateway: no securityContext"},
		{"host network", CheckRestricted, func(r Render) Render {
			deployment(t, r, "gateway").Spec.Template.Spec.HostNetwork = true
			return r
		}, "Deployment/gateway: uses a host namespace"},
		{"hostPath", CheckRestricted, func(r Render) Render {
			ps := &deployment(t, r, "gateway").Spec.Template.Spec
			ps.Volumes = append(ps.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
			return r
		}, "volume host is a hostPath"},
		{"root user", CheckRestricted, func(r Render) Render {
			tableSvc(r).SecurityContext.RunAsUser = ptr(int64(0))
			return r
		}, "container table-svc: runAsUser 0"},
		{"no memory limit", CheckResources, func(r Render) Render {
			delete(shoe(r).Resources.Limits, corev1.ResourceMemory)
			return r
		}, "container shoe-svc: no memory limit"},
		{"no cpu request", CheckResources, func(r Render) Render {
			delete(gateway(r).Resources.Requests, corev1.ResourceCPU)
			return r
		}, "container gateway: no cpu request"},
		{"request above limit", CheckResources, func(r Render) Render {
			gateway(r).Resources.Requests[corev1.ResourceMemory] = resource.MustParse("1Gi")
			return r
		}, "memory request 1Gi above its limit"},
		{"no liveness", CheckProbes, func(r Render) Render {
			shoe(r).LivenessProbe = nil
			return r
		}, "container shoe-svc: no livenessProbe"},
		{"no readiness", CheckProbes, func(r Render) Render {
			statefulSet(t, r, "nats").Spec.Template.Spec.Containers[0].ReadinessProbe = nil
			return r
		}, "container nats: no readinessProbe"},
		{"probe on another container's port", CheckProbes, func(r Render) Render {
			shoe(r).ReadinessProbe.HTTPGet.Port.StrVal = "metrics" // table-svc's, not shoe-svc's
			return r
		}, `container shoe-svc: readiness probe's port "metrics"`},
		{"latest", CheckImages, func(r Render) Render {
			gateway(r).Image = "registry.example.com:5000/chemmy/gateway:latest"
			return r
		}, "is tagged latest"},
		{"untagged", CheckImages, func(r Render) Render {
			shoe(r).Image = "registry.example.com:5000/chemmy/shoe-svc"
			return r
		}, "has no tag"},
		{"serviceName not headless", CheckHeadless, func(r Render) Render {
			statefulSet(t, r, "wallet-svc").Spec.ServiceName = "wallet-svc"
			return r
		}, "StatefulSet/wallet-svc: Service wallet-svc is not headless"},
		{"serviceName missing", CheckHeadless, func(r Render) Render {
			statefulSet(t, r, "nats").Spec.ServiceName = "nats-routes"
			return r
		}, "serviceName nats-routes is no Service"},
		{"no default deny", CheckDefaultDeny, func(r Render) Render {
			networkPolicy(t, r, "default-deny-ingress").Spec.Ingress = networkPolicy(t, r, "gateway").Spec.Ingress
			return r
		}, "no NetworkPolicy denies ingress by default"},
		{"no default deny of egress", CheckDefaultDeny, func(r Render) Render {
			networkPolicy(t, r, "default-deny-egress").Spec.Egress = networkPolicy(t, r, "nats-egress").Spec.Egress
			return r
		}, "no NetworkPolicy denies egress by default"},
		{"namespace baseline", CheckNamespaces, func(r Render) Render {
			ns, _ := r.Find("Namespace", "chemmy")
			ns.Value.(*corev1.Namespace).Labels["pod-security.kubernetes.io/enforce"] = "baseline"
			return r
		}, "Namespace/chemmy: label pod-security.kubernetes.io/enforce is not restricted"},
		{"no spread", CheckSpread, func(r Render) Render {
			statefulSet(t, r, "nats").Spec.Template.Spec.TopologySpreadConstraints = nil
			return r
		}, "StatefulSet/nats: 3 replicas and no spread"},
		{"spread selects other pods", CheckSpread, func(r Render) Render {
			c := deployment(t, r, "gateway").Spec.Template.Spec.TopologySpreadConstraints
			c[0].LabelSelector.MatchLabels["app.kubernetes.io/name"] = "nats"
			return r
		}, "Deployment/gateway: 2 replicas and no spread"},
		{"mount without volume", CheckReferences, func(r Render) Render {
			shoe(r).VolumeMounts[0].Name = "shoe-store"
			return r
		}, "container shoe-svc: mounts shoe-store, no volume or claim template"},
		{"service port nowhere", CheckReferences, func(r Render) Render {
			o, _ := r.Find("Service", "table-svc-headless")
			o.Value.(*corev1.Service).Spec.Ports[1].Port = 7004
			return r
		}, "Service/table-svc-headless: port shoe-grpc (7004) is no port of the pods"},
		{"service selects nothing", CheckReferences, func(r Render) Render {
			o, _ := r.Find("Service", "gateway")
			o.Value.(*corev1.Service).Spec.Selector["app.kubernetes.io/name"] = "gateways"
			return r
		}, "Service/gateway: selects no pod"},
		{"selector off its pods", CheckReferences, func(r Render) Render {
			statefulSet(t, r, "nats").Spec.Selector.MatchLabels["app.kubernetes.io/name"] = "nats-server"
			return r
		}, "StatefulSet/nats: selector does not match"},
		{"servicemonitor port", CheckReferences, func(r Render) Render {
			r = render(t, "overlays/local-monitoring")
			o, _ := r.Find("ServiceMonitor", "chemmy")
			o.Value.(*ServiceMonitor).Spec.Endpoints[1].Port = "shoe-metric"
			return r
		}, "ServiceMonitor/chemmy: port shoe-metric is in no Service"},
		{"tls Secret nobody makes", CheckCertificates, func(r Render) Render {
			return slices.DeleteFunc(r, func(o Object) bool { return o.Kind == "Certificate" && o.Meta.Name == "nats" })
		}, "StatefulSet/nats: mounts Secret nats-tls, which no Certificate makes"},
		{"renewal after expiry", CheckCertificates, func(r Render) Render {
			o, _ := r.Find("Certificate", "gateway")
			o.Value.(*Certificate).Spec.RenewBefore = "800h"
			return r
		}, "Certificate/gateway: renewBefore 800h0m0s is not shorter than duration 720h0m0s"},
		{"issuer missing", CheckCertificates, func(r Render) Render {
			o, _ := r.Find("Certificate", "wallet-svc")
			o.Value.(*Certificate).Spec.IssuerRef.Name = "chemmy"
			return r
		}, "Certificate/wallet-svc: Issuer chemmy is not in the render"},
		{"shard not appended", CheckShards, func(r Render) Render {
			statefulSet(t, r, "table-svc").Spec.Replicas = ptr(int32(3))
			return r
		}, "-table-addr=table-svc-0.table-svc-headless:7001,table-svc-1.table-svc-headless:7001, want the 3 shards"},
		{"shards reordered", CheckShards, func(r Render) Render {
			setArg(gateway(r), "shoe-addr", "table-svc-1.table-svc-headless:7003,table-svc-0.table-svc-headless:7003")
			return r
		}, "container gateway: -shoe-addr=table-svc-1"},
		{"shard flag missing", CheckShards, func(r Render) Render {
			setArg(shoe(r), "shard", "0")
			return r
		}, `container shoe-svc: -shard is "0"`},
		{"nats node left out", CheckNATSClients, func(r Render) Render {
			setArg(tableSvc(r), "nats-url", "nats://nats:4222")
			return r
		}, "container table-svc: -nats-url=nats://nats:4222, want every node"},
		{"stream not replicated", CheckNATSClients, func(r Render) Render {
			for _, c := range []*corev1.Container{tableSvc(r), shoe(r), &statefulSet(t, r, "wallet-svc").Spec.Template.Spec.Containers[0]} {
				setArg(c, "stream-replicas", "1")
			}
			return r
		}, "-stream-replicas=1 on 3 NATS nodes"},
		{"stream replicas disagree", CheckNATSClients, func(r Render) Render {
			setArg(shoe(r), "stream-replicas", "2")
			return r
		}, "the NATS clients disagree on -stream-replicas"},
		{"default service account", CheckServiceAccounts, func(r Render) Render {
			deployment(t, r, "gateway").Spec.Template.Spec.ServiceAccountName = ""
			return r
		}, "Deployment/gateway: runs as the namespace's default ServiceAccount"},
		{"shared service account", CheckServiceAccounts, func(r Render) Render {
			statefulSet(t, r, "nats").Spec.Template.Spec.ServiceAccountName = "wallet-svc"
			return r
		}, "shares ServiceAccount wallet-svc"},
		{"service account missing", CheckServiceAccounts, func(r Render) Render {
			return slices.DeleteFunc(r, func(o Object) bool { return o.Kind == "ServiceAccount" && o.Meta.Name == "table-svc" })
		}, "StatefulSet/table-svc: ServiceAccount table-svc is not in the render"},
		{"token mounted", CheckServiceAccounts, func(r Render) Render {
			statefulSet(t, r, "wallet-svc").Spec.Template.Spec.AutomountServiceAccountToken = nil
			return r
		}, "StatefulSet/wallet-svc: automountServiceAccountToken is not false"},
		{"service account mounts", CheckServiceAccounts, func(r Render) Render {
			o, _ := r.Find("ServiceAccount", "gateway")
			o.Value.(*corev1.ServiceAccount).AutomountServiceAccountToken = ptr(true)
			return r
		}, "ServiceAccount/gateway: automountServiceAccountToken is not false"},
		{"no GOMEMLIMIT", CheckGOMEMLIMIT, func(r Render) Render {
			c := &statefulSet(t, r, "nats").Spec.Template.Spec.Containers[0]
			c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" })
			return r
		}, "StatefulSet/nats container nats: memory limit 1Gi and no GOMEMLIMIT"},
		{"GOMEMLIMIT at the limit", CheckGOMEMLIMIT, func(r Render) Render {
			c := shoe(r)
			for i := range c.Env {
				if c.Env[i].Name == "GOMEMLIMIT" {
					c.Env[i] = corev1.EnvVar{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{
						ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "shoe-svc", Resource: "limits.memory"}}}
				}
			}
			return r
		}, "container shoe-svc: GOMEMLIMIT is not a literal value"},
		{"limit raised alone", CheckGOMEMLIMIT, func(r Render) Render {
			tableSvc(r).Resources.Limits[corev1.ResourceMemory] = resource.MustParse("1Gi")
			return r
		}, "container table-svc: GOMEMLIMIT=460MiB is 44.9% of the memory limit 1Gi"},
		{"GOMEMLIMIT without unit", CheckGOMEMLIMIT, func(r Render) Render {
			for i, e := range gateway(r).Env {
				if e.Name == "GOMEMLIMIT" {
					gateway(r).Env[i].Value = "230Mi"
				}
			}
			return r
		}, "container gateway: GOMEMLIMIT=230Mi: not a size"},
		{"secret in the base", CheckNoSecretData, func(r Render) Render {
			return append(render(t, "base"), Object{Kind: "Secret", Value: &corev1.Secret{Data: map[string][]byte{"tls.key": []byte("k")}}})
		}, "holds data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.policy(tc.spoil(render(t, "overlays/local")))
			if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }) {
				t.Errorf("not caught: want a violation with %q, got %q", tc.want, got)
			}
		})
	}
}

// Decode refuses what the API server would not take as written: unknown
// fields (at any depth), duplicated keys, unknown kinds, wrong types.
func TestDecodeIsStrict(t *testing.T) {
	const svc = `apiVersion: v1
kind: Service
metadata:
  name: gateway
spec:
  selector:
    app: gateway
  ports:
    - name: grpc
      port: 7000
`
	if _, err := Decode([]byte(svc)); err != nil {
		t.Fatalf("a good Service refused: %v", err)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", strings.Replace(svc, "      port: 7000", "      port: 7000\n      targetport: grpc", 1), `unknown field "spec.ports[0].targetport"`},
		{"unknown top field", svc + "status2: {}\n", `unknown field "status2"`},
		{"duplicated key", strings.Replace(svc, "  name: gateway", "  name: gateway\n  name: gateway2", 1), "already set in map"},
		{"wrong type", strings.Replace(svc, "port: 7000", "port: seven", 1), "cannot unmarshal string"},
		{"unknown kind", strings.Replace(svc, "kind: Service", "kind: Servce", 1), "unknown kind v1 Servce"},
		{"unknown CRD field", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: x\nspec:\n  secretName: x-tls\n  dnsName: [x]\n  issuerRef: {name: ca}\n", `unknown field "spec.dnsName"`},
		{"CRD of other version", "apiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata:\n  name: x\nspec:\n  secretName: x-tls\n  issuerRef: {name: ca}\n", "unknown kind cert-manager.io/v1alpha2 Certificate"},
		{"no name", strings.Replace(svc, "  name: gateway\n", "  labels: {a: b}\n", 1), "metadata.name is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n---\n" + tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "document 1") {
				t.Errorf("got %v, want an error about document 1 with %q", err, tc.want)
			}
		})
	}
}
