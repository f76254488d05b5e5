# The one-node cluster's pinned parts (make k8s-up; docs/kubernetes.md).
# Sourced by deploy/cluster/k8s.sh. Changing a version here rebuilds that
# part on the next k8s-up (the cache in .k8s/bin is keyed by these).
K8S_VERSION=v1.37.2          # k8s.io/kubernetes: control plane, kubelet, kube-proxy (deploy/cluster/build/go.mod)
CONTAINERD_VERSION=v2.4.2    # github.com/containerd/containerd/v2
RUNC_VERSION=v1.3.3          # github.com/opencontainers/runc, built with -tags seccomp
COREDNS_VERSION=v1.14.7      # github.com/coredns/coredns
CRANE_VERSION=v0.22.1        # github.com/google/go-containerregistry: crane (images, registry)
NATS_SERVER_VERSION=v2.15.2  # github.com/nats-io/nats-server/v2: the NATS image (the version chemmy's modules use)
KUSTOMIZE_VERSION=v5.8.2     # sigs.k8s.io/kustomize/kustomize/v5 (the Makefile's pin)
# CRDs only, for the server-side dry run (make k8s-dry-run): from their modules' deploy files
CERT_MANAGER_VERSION=v1.21.2             # github.com/cert-manager/cert-manager: Certificate, Issuer
PROMETHEUS_OPERATOR_VERSION=v0.85.0      # github.com/prometheus-operator/prometheus-operator: ServiceMonitor, PrometheusRule
