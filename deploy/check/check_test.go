package check

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// repo is the repository's root, from deploy/check.
const repo = "../.."

// dirs are the kustomizations to check: the base and every overlay.
func dirs(t *testing.T) []string {
	t.Helper()
	overlays, err := filepath.Glob(filepath.Join(repo, "deploy/k8s/overlays/*/kustomization.yaml"))
	if err != nil || len(overlays) == 0 {
		t.Fatalf("no overlay found (%v)", err)
	}
	out := []string{"base"}
	for _, o := range overlays {
		out = append(out, "overlays/"+filepath.Base(filepath.Dir(o)))
	}
	return out
}

var (
	buildMu sync.Mutex
	built   = map[string][]byte{}
)

// rendered is `kustomize build deploy/k8s/<dir>`, built once per run.
func rendered(t *testing.T, dir string) []byte {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if out, ok := built[dir]; ok {
		return out
	}
	root, err := filepath.Abs(repo)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Kustomize(root)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(k, "build", filepath.Join(root, "deploy/k8s", dir))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	built[dir] = out
	return out
}

// render decodes a fresh copy of a build (tests may change it).
func render(t *testing.T, dir string) Render {
	t.Helper()
	objs, err := Decode(rendered(t, dir))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return Render(objs)
}

// TestManifests: the base and every overlay build, decode strictly and
// keep every policy.
func TestManifests(t *testing.T) {
	for _, dir := range dirs(t) {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			if len(r.Workloads()) == 0 {
				t.Fatal("no workload rendered")
			}
			for _, v := range CheckAll(r) {
				t.Error(v)
			}
		})
	}
}

// TestNoSecretsShipped: the base and the production example hold no
// Secret data (the operator makes them); the local demo overlay does,
// which the check sees.
func TestNoSecretsShipped(t *testing.T) {
	for _, dir := range []string{"base", "overlays/production", "overlays/load", "overlays/onenode-load"} {
		for _, v := range CheckNoSecretData(render(t, dir)) {
			t.Errorf("%s: %s", dir, v)
		}
	}
	if v := CheckNoSecretData(render(t, "overlays/local")); len(v) == 0 {
		t.Error("overlays/local: its demo Secrets were not seen")
	}
}

// TestTopology: what the base and the production example deploy: shards,
// NATS nodes, one wallet, the gateway's Ingress in production.
func TestTopology(t *testing.T) {
	for _, tc := range []struct {
		dir                           string
		shards, nats, wallet, ingress int
	}{
		{"base", 2, 3, 1, 0},
		{"overlays/local", 2, 3, 1, 0},
		{"overlays/production", 3, 3, 1, 2},
	} {
		r := render(t, tc.dir)
		got := [4]int{
			int(replicas(statefulSet(t, r, "table-svc").Spec.Replicas)),
			int(replicas(statefulSet(t, r, "nats").Spec.Replicas)),
			int(replicas(statefulSet(t, r, "wallet-svc").Spec.Replicas)),
			len(r.Kind("Ingress")),
		}
		if want := [4]int{tc.shards, tc.nats, tc.wallet, tc.ingress}; got != want {
			t.Errorf("%s: shards, NATS nodes, wallets, Ingresses = %v, want %v", tc.dir, got, want)
		}
	}
}

// TestNATSConfig: the rendered nats.conf is what nats-server accepts for
// a node of the cluster (routes to every node over mutual TLS checked
// against the routes' names, JetStream on, the node's name), except in
// the base and the production example, whose placeholder nkeys it
// refuses until the operator's are in.
func TestNATSConfig(t *testing.T) {
	tlsDir := t.TempDir()
	writeRouteCert(t, tlsDir, "nats-0.nats-headless", "nats-1.nats-headless", "nats-2.nats-headless")
	for _, dir := range dirs(t) {
		r := render(t, dir)
		cm := natsConfigMap(r)
		if cm == nil {
			continue
		}
		t.Run(dir, func(t *testing.T) {
			opts, err := ParseNATSConfig(cm, t.TempDir(), tlsDir, "nats-1")
			if dir == "base" || dir == "overlays/production" {
				if err == nil || !strings.Contains(err.Error(), "nkey") {
					t.Fatalf("the placeholder nkeys were accepted (err %v)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sts := statefulSet(t, r, "nats")
			var routes, want []string
			for _, u := range opts.Routes {
				routes = append(routes, u.Host)
			}
			for i := range replicas(sts.Spec.Replicas) {
				want = append(want, fmt.Sprintf("nats-%d.%s:6222", i, sts.Spec.ServiceName))
			}
			if !slices.Equal(routes, want) {
				t.Errorf("routes %v, want every node %v", routes, want)
			}
			if opts.ServerName != "nats-1" || opts.Cluster.Name != "chemmy" || !opts.JetStream {
				t.Errorf("server %q, cluster %q, JetStream %v", opts.ServerName, opts.Cluster.Name, opts.JetStream)
			}
			if opts.Cluster.TLSConfig == nil || !opts.Cluster.TLSCheckKnownURLs {
				t.Error("routes without mutual TLS checked against the routes' names")
			}
			if len(opts.Nkeys) != 4 {
				t.Errorf("%d nkey users, want table-svc, wallet-svc, shoe-svc and reader", len(opts.Nkeys))
			}
		})
	}
}

// TestProductionImagesByDigest: the production example names every chemmy
// image by digest (image@sha256:<64 hex>), not by a tag that can move.
// Its digests are placeholders the release pipeline replaces.
func TestProductionImagesByDigest(t *testing.T) {
	digest := regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	n := 0
	for _, w := range render(t, "overlays/production").Workloads() {
		for _, c := range Containers(w.Spec) {
			if !strings.Contains(c.Image, "chemmy/") {
				continue // NATS: the upstream image, by its version tag
			}
			n++
			if !digest.MatchString(c.Image) {
				t.Errorf("%s container %s: image %s is not by digest (@sha256:...)", w.Ref, c.Name, c.Image)
			}
		}
	}
	if n < 4 {
		t.Errorf("%d chemmy images in production, want gateway, table-svc, shoe-svc and wallet-svc at least", n)
	}
}

// TestTrustedProxies: the production example, behind its Ingress, trusts
// the controller's placeholder pod range; without it, or with 0.0.0.0/0,
// the policy trusted-proxies objects.
func TestTrustedProxies(t *testing.T) {
	r := render(t, "overlays/production")
	c := Container(&deployment(t, r, "gateway").Spec.Template.Spec, "gateway")
	if v, _ := Arg(c.Args, "trusted-proxies"); v != "10.244.0.0/16" {
		t.Errorf("production gateway -trusted-proxies=%q, want the placeholder pod range 10.244.0.0/16", v)
	}
	if v := CheckTrustedProxies(r); len(v) > 0 {
		t.Error(v)
	}
	for _, tc := range []struct{ arg, want string }{
		{"", "behind an Ingress without -trusted-proxies"},
		{"-trusted-proxies=0.0.0.0/0", "trusts every address"},
		{"-trusted-proxies=203.0.113.0/24", "not a private (in-cluster) range"},
		{"-trusted-proxies=10.244.0.0/33", "is not a CIDR"},
	} {
		r := render(t, "overlays/production")
		c := Container(&deployment(t, r, "gateway").Spec.Template.Spec, "gateway")
		c.Args = slices.DeleteFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "-trusted-proxies=") })
		if tc.arg != "" {
			c.Args = append(c.Args, tc.arg)
		}
		if got := CheckTrustedProxies(r); !containsSub(got, tc.want) {
			t.Errorf("%q: want a violation with %q, got %q", tc.arg, tc.want, got)
		}
	}
}

func natsConfigMap(r Render) *corev1.ConfigMap {
	for _, o := range r.Kind("ConfigMap") {
		if strings.HasPrefix(o.Meta.Name, "nats-config") {
			return o.Value.(*corev1.ConfigMap)
		}
	}
	return nil
}

// writeRouteCert writes ca.crt, tls.crt and tls.key (a CA and a leaf
// for the given DNS names) into dir.
func writeRouteCert(t *testing.T, dir string, names ...string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"ca.crt":  {Type: "CERTIFICATE", Bytes: caDER},
		"tls.crt": {Type: "CERTIFICATE", Bytes: leafDER},
		"tls.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func statefulSet(t *testing.T, r Render, name string) *appsv1.StatefulSet {
	t.Helper()
	o, ok := r.Find("StatefulSet", name)
	if !ok {
		t.Fatalf("no StatefulSet %s", name)
	}
	return o.Value.(*appsv1.StatefulSet)
}

func deployment(t *testing.T, r Render, name string) *appsv1.Deployment {
	t.Helper()
	o, ok := r.Find("Deployment", name)
	if !ok {
		t.Fatalf("no Deployment %s", name)
	}
	return o.Value.(*appsv1.Deployment)
}

func networkPolicy(t *testing.T, r Render, name string) *networkingv1.NetworkPolicy {
	t.Helper()
	o, ok := r.Find("NetworkPolicy", name)
	if !ok {
		t.Fatalf("no NetworkPolicy %s", name)
	}
	return o.Value.(*networkingv1.NetworkPolicy)
}
