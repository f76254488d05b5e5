package check

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// renderWithComponent builds a kustomization made for the test: the base
// with components/<component>, as an operator's overlay would use it.
func renderWithComponent(t *testing.T, component string) Render {
	t.Helper()
	root, err := filepath.Abs(repo)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rel := func(p string) string {
		r, err := filepath.Rel(dir, filepath.Join(root, "deploy/k8s", p))
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(r)
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: chemmy\n" +
		"resources:\n  - " + rel("base") + "\ncomponents:\n  - " + rel("components/"+component) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := Kustomize(root)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "build", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build of the base with components/%s: %v", component, err)
	}
	objs, err := Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	return Render(objs)
}

// TestSeamlessComponent: the base with components/seamless-wallet keeps
// every policy, ships no Secret, runs wallet-svc in seamless mode against
// the placeholder https URL with the operator's Secret mounted, and
// fences egress: wallet-svc alone may reach the operator's address, which
// the gateway's Internet egress (its JWKS) excepts (TestReachability
// evaluates the paths).
func TestSeamlessComponent(t *testing.T) {
	r := renderWithComponent(t, "seamless-wallet")
	for _, v := range CheckAll(r) {
		t.Error(v)
	}
	for _, v := range CheckNoSecretData(r) {
		t.Error(v)
	}
	c := Container(&statefulSet(t, r, "wallet-svc").Spec.Template.Spec, "wallet-svc")
	for flag, want := range map[string]string{
		"wallet-mode":          "seamless",
		"operator-url":         "$(CHEMMY_OPERATOR_URL)",
		"operator-id":          "$(CHEMMY_OPERATOR_ID)",
		"operator-secret-file": "/var/run/chemmy/operator/secret",
	} {
		if got, _ := Arg(c.Args, flag); got != want {
			t.Errorf("wallet-svc -%s=%q, want %q", flag, got, want)
		}
	}
	if got, _ := envValue(r, c, "CHEMMY_OPERATOR_URL"); !strings.HasPrefix(got, "https://") {
		t.Errorf("the component's operator URL %q is not https", got)
	}
	vols := statefulSet(t, r, "wallet-svc").Spec.Template.Spec.Volumes
	if !slices.ContainsFunc(vols, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == "operator-wallet-secret"
	}) {
		t.Error("wallet-svc does not mount the Secret operator-wallet-secret")
	}
	own := networkPolicy(t, r, "operator-wallet-egress")
	gw := networkPolicy(t, r, "gateway-egress")
	for _, w := range r.Workloads() {
		if got := Selects(&own.Spec.PodSelector, w.Labels); got != (w.Name == "wallet-svc") {
			t.Errorf("operator-wallet-egress selects %s: %v", w.Ref, got)
		}
	}
	// The placeholder address is the one wallet-svc may reach, and the
	// one the gateway's Internet egress (the JWKS) excepts.
	var allowed, excepted []string
	for _, rule := range own.Spec.Egress {
		for _, p := range rule.To {
			if p.IPBlock != nil {
				allowed = append(allowed, p.IPBlock.CIDR)
			}
		}
	}
	for _, rule := range gw.Spec.Egress {
		for _, p := range rule.To {
			if p.IPBlock != nil {
				excepted = append(excepted, p.IPBlock.Except...)
			}
		}
	}
	if len(allowed) == 0 || !slices.Equal(allowed, excepted) {
		t.Errorf("wallet-svc may reach %v, the gateway is kept from %v: want the same addresses", allowed, excepted)
	}
	if slices.ContainsFunc(own.Spec.Egress, func(rule networkingv1.NetworkPolicyEgressRule) bool {
		return len(rule.To) == 0 || len(rule.Ports) == 0
	}) {
		t.Error("operator-wallet-egress has a rule open to every address or every port")
	}
}

// TestSeamlessRehearsal: overlays/local-seamless runs the reference
// wallet in wallet-svc's pod, on loopback, with the same Secret on both
// sides and the same currency, and holds its demo Secrets.
func TestSeamlessRehearsal(t *testing.T) {
	r := render(t, "overlays/local-seamless")
	ps := &statefulSet(t, r, "wallet-svc").Spec.Template.Spec
	if ps.Containers[0].Name != "wallet-svc" {
		t.Errorf("wallet-svc's pod's first container is %s, want wallet-svc (kubectl logs' default)", ps.Containers[0].Name)
	}
	wallet, op := Container(ps, "wallet-svc"), Container(ps, "opwallet")
	if op == nil {
		t.Fatal("no opwallet container beside wallet-svc")
	}
	if got, _ := envValue(r, wallet, "CHEMMY_OPERATOR_URL"); got != "http://127.0.0.1:7090" {
		t.Errorf("wallet-svc calls %q, want the reference wallet at http://127.0.0.1:7090", got)
	}
	if got, _ := Arg(op.Args, "listen"); !strings.HasSuffix(got, ":7090") {
		t.Errorf("opwallet -listen=%s, want port 7090", got)
	}
	mountOf := func(c *corev1.Container, file string) string {
		dir := filepath.Dir(file)
		for _, m := range c.VolumeMounts {
			if m.MountPath == dir {
				return m.Name
			}
		}
		return ""
	}
	ws, _ := Arg(wallet.Args, "operator-secret-file")
	opFile, _ := Arg(op.Args, "secret-file")
	if a, b := mountOf(wallet, ws), mountOf(op, opFile); a == "" || a != b || filepath.Base(ws) != filepath.Base(opFile) {
		t.Errorf("wallet-svc reads the secret %s (volume %q), opwallet %s (volume %q): want the same", ws, a, opFile, b)
	}
	if a, b := argOr(wallet.Args, "currency"), argOr(op.Args, "currency"); a != b {
		t.Errorf("wallet-svc -currency=%s, opwallet -currency=%s", a, b)
	}
	if len(CheckNoSecretData(r)) == 0 {
		t.Error("overlays/local-seamless: its demo Secrets were not seen")
	}
	if _, ok := r.Find("PersistentVolumeClaim", "opwallet-data"); !ok {
		t.Error("no PersistentVolumeClaim opwallet-data for the reference wallet's books")
	}
}

func argOr(args []string, name string) string {
	v, _ := Arg(args, name)
	return v
}

// Each case spoils overlays/local-seamless, which keeps every policy
// (TestManifests), and expects CheckSeamless to name it.
func TestSeamlessPolicyCatches(t *testing.T) {
	wallet := func(r Render) *corev1.Container {
		return Container(&statefulSet(t, r, "wallet-svc").Spec.Template.Spec, "wallet-svc")
	}
	operatorURL := func(r Render, u string) Render {
		for _, o := range r.Kind("ConfigMap") {
			if cm := o.Value.(*corev1.ConfigMap); strings.HasPrefix(o.Meta.Name, "operator-wallet") {
				cm.Data["CHEMMY_OPERATOR_URL"] = u
			}
		}
		return r
	}
	dropPolicy := func(r Render, names ...string) Render {
		return slices.DeleteFunc(r, func(o Object) bool { return o.Kind == "NetworkPolicy" && slices.Contains(names, o.Meta.Name) })
	}
	for _, tc := range []struct {
		name  string
		spoil func(Render) Render
		want  string
	}{
		{"http to a Service", func(r Render) Render { return operatorURL(r, "http://opwallet:7090") },
			`operator URL "http://opwallet:7090" is plain http to a non-loopback host`},
		{"URL in no ConfigMap", func(r Render) Render {
			wallet(r).EnvFrom = nil
			return r
		}, "CHEMMY_OPERATOR_URL is in neither its env nor a ConfigMap"},
		{"relative URL", func(r Render) Render { return operatorURL(r, "wallet.example.com") }, "is not an absolute URL"},
		{"secret not mounted", func(r Render) Render {
			c := wallet(r)
			c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "operator-secret" })
			return r
		}, "no volume is mounted at /var/run/chemmy/operator"},
		{"secret without the key", func(r Render) Render {
			for _, o := range r.Kind("Secret") {
				if strings.HasPrefix(o.Meta.Name, "operator-wallet-secret") {
					o.Value.(*corev1.Secret).Data = map[string][]byte{"hmac": []byte("x")}
				}
			}
			return r
		}, "has no key secret"},
		{"wallet egress open", func(r Render) Render {
			return dropPolicy(r, "default-deny-egress", "dns-egress", "wallet-svc-egress", "operator-wallet-egress")
		}, "no egress NetworkPolicy selects its pod (StatefulSet/wallet-svc)"},
		{"others' egress open", func(r Render) Render { return dropPolicy(r, "default-deny-egress", "dns-egress", "gateway-egress") },
			"no egress NetworkPolicy selects another pod (Deployment/gateway)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckSeamless(tc.spoil(render(t, "overlays/local-seamless")))
			if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }) {
				t.Errorf("not caught: want a violation with %q, got %q", tc.want, got)
			}
		})
	}
}
