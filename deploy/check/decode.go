// Package check validates chemmy's Kubernetes manifests offline: it
// renders the kustomize base and overlays (deploy/k8s), decodes every
// object strictly into its Kubernetes API type (an unknown or duplicated
// field is an error, as is an unknown kind), and checks the project's
// policies on them (policy.go). `make deploy-check` runs its tests.
package check

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Object is one decoded manifest: its apiVersion, kind, metadata and the
// typed value (*appsv1.Deployment, *Certificate, ...).
type Object struct {
	APIVersion, Kind string
	Meta             metav1.ObjectMeta
	Value            any
}

// Ref names the object for messages: "Kind/name".
func (o Object) Ref() string { return o.Kind + "/" + o.Meta.Name }

// kinds are the types every rendered object must decode into, by
// "apiVersion/kind". A kind not listed is refused: a new kind in the
// manifests needs its type here, so that it is checked too.
var kinds = map[string]func() any{
	"v1/ConfigMap":                            func() any { return new(corev1.ConfigMap) },
	"v1/Namespace":                            func() any { return new(corev1.Namespace) },
	"v1/PersistentVolumeClaim":                func() any { return new(corev1.PersistentVolumeClaim) },
	"v1/Secret":                               func() any { return new(corev1.Secret) },
	"v1/Service":                              func() any { return new(corev1.Service) },
	"v1/ServiceAccount":                       func() any { return new(corev1.ServiceAccount) },
	"apps/v1/Deployment":                      func() any { return new(appsv1.Deployment) },
	"apps/v1/StatefulSet":                     func() any { return new(appsv1.StatefulSet) },
	"batch/v1/Job":                            func() any { return new(batchv1.Job) },
	"policy/v1/PodDisruptionBudget":           func() any { return new(policyv1.PodDisruptionBudget) },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return new(networkingv1.NetworkPolicy) },
	"networking.k8s.io/v1/Ingress":            func() any { return new(networkingv1.Ingress) },
	"cert-manager.io/v1/Certificate":          func() any { return new(Certificate) },
	"cert-manager.io/v1/Issuer":               func() any { return new(Issuer) },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return new(ServiceMonitor) },
	"monitoring.coreos.com/v1/PrometheusRule": func() any { return new(PrometheusRule) },
}

// Decode splits a multi-document YAML stream (kustomize's output) and
// decodes each document strictly into the type of its apiVersion and
// kind: unknown fields (names are case-sensitive), duplicated keys and
// unknown kinds are errors. An error names the document (its index, kind
// and name).
func Decode(stream []byte) ([]Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var out []Object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		o, err := decodeOne(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, o.Ref(), err)
		}
		out = append(out, o)
	}
}

func decodeOne(doc []byte) (Object, error) {
	var head struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
	}
	// Not strict: only the head is read here; the whole document is
	// decoded strictly below.
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return Object{}, err
	}
	o := Object{APIVersion: head.APIVersion, Kind: head.Kind, Meta: head.Metadata}
	newValue, ok := kinds[head.APIVersion+"/"+head.Kind]
	if !ok {
		return o, fmt.Errorf("unknown kind %s %s (add its type to check.kinds)", head.APIVersion, head.Kind)
	}
	o.Value = newValue()
	// As the API server decodes with fieldValidation=Strict: field names
	// case-sensitive, unknown and duplicated fields refused.
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return o, err
	}
	strict, err := kjson.UnmarshalStrict(j, o.Value)
	if err != nil {
		return o, err
	}
	if len(strict) > 0 {
		return o, errors.Join(strict...)
	}
	if o.Meta.Name == "" {
		return o, errors.New("metadata.name is empty")
	}
	return o, nil
}

// Kustomize returns the path of the kustomize binary: $KUSTOMIZE, else the
// repository's bin/kustomize (installed at its pinned version by make
// deploy-check), else kustomize on PATH.
func Kustomize(repo string) (string, error) {
	if k := os.Getenv("KUSTOMIZE"); k != "" {
		return k, nil
	}
	if k := filepath.Join(repo, "bin", "kustomize"); isExecutable(k) {
		return k, nil
	}
	k, err := exec.LookPath("kustomize")
	if err != nil {
		return "", errors.New("kustomize not found: run make deploy-check (it installs bin/kustomize) or set KUSTOMIZE")
	}
	return k, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Build runs `kustomize build dir` and decodes its output (Decode).
func Build(kustomize, dir string) ([]Object, error) {
	cmd := exec.Command(kustomize, "build", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, stderr.String())
	}
	return Decode(out)
}
