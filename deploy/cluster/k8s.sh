#!/usr/bin/env bash
# A one-node Kubernetes cluster on this machine, from pinned upstream
# sources, in a network namespace of its own (docs/kubernetes.md).
#
#   deploy/cluster/k8s.sh up       build what is missing, start the cluster
#   deploy/cluster/k8s.sh down     stop everything up started, remove the namespace
#   deploy/cluster/k8s.sh images   build chemmy's images into the cluster's registry
#   deploy/cluster/k8s.sh deploy   deploy chemmy (overlay onenode), wait until Ready
#   deploy/cluster/k8s.sh status   what runs
#
# Needs root (network namespace, cgroups, mounts) and, from Debian,
# etcd-server, kubectl, containernetworking-plugins, iptables, conntrack,
# libseccomp-dev, pkg-config, openssl and curl (`up` installs what is
# missing with apt-get).
#
# Where things are:
#   .k8s/bin/         built binaries (the cache: kept by down), kubectl wrapper
#   .k8s/kubeconfig   the cluster's admin kubeconfig (server 10.87.255.2:6443,
#                     reachable from this machine through the namespace's veth)
#   .k8s/logs/        one log per process (etcd, kube-apiserver, kubelet, ...)
#   /var/lib/chemmy-k8s/  the cluster's state (etcd, containerd, kubelet,
#                     volumes, registry blobs); removed by down, except the
#                     registry's blobs (the image cache)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=versions.sh
. "$ROOT/deploy/cluster/versions.sh"

K8S=$ROOT/.k8s
BIN=$K8S/bin
LOGS=$K8S/logs
RUN=/run/chemmy-k8s
STATE=/var/lib/chemmy-k8s
PKI=$STATE/pki
CACHE=/var/cache/chemmy-k8s
NS=chemmy-k8s
NETNS=/var/run/netns/$NS
# addresses: the node (netns side of the veth), the host side, pods, services
NODE_IP=10.87.255.2
HOST_IP=10.87.255.1
POD_CIDR=10.88.0.0/16
SERVICE_CIDR=10.96.0.0/16
API_SERVICE_IP=10.96.0.1
NODE_NAME=chemmy-node
REGISTRY=127.0.0.1:5000
PAUSE_IMAGE=$REGISTRY/pause:chemmy
export PATH=$BIN:$PATH

log() { printf '%s k8s: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
innet() { nsenter --net="$NETNS" "$@"; }

# --- build -----------------------------------------------------------------

# stamp NAME VERSION: true when .k8s/bin holds NAME built at VERSION
stamped() { [ -x "$BIN/$1" ] && [ "$(cat "$BIN/.$1.version" 2>/dev/null)" = "$2" ]; }
stamp() { echo "$2" >"$BIN/.$1.version"; }

debian_deps() {
  local missing=()
  command -v etcd >/dev/null || missing+=(etcd-server)
  [ -x /usr/bin/kubectl ] || missing+=(kubectl)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v conntrack >/dev/null || missing+=(conntrack)
  command -v openssl >/dev/null || missing+=(openssl)
  command -v curl >/dev/null || missing+=(curl)
  command -v pkg-config >/dev/null || missing+=(pkg-config)
  [ -f /usr/include/seccomp.h ] || missing+=(libseccomp-dev)
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# build_kubernetes CMD...: the Kubernetes commands of CMD not yet built
build_kubernetes() {
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)"
  local c todo=()
  mkdir -p "$BIN"
  for c in "$@"; do stamped "$c" "$K8S_VERSION" || todo+=("k8s.io/kubernetes/cmd/$c"); done
  [ ${#todo[@]} -gt 0 ] || return 0
  log "building Kubernetes $K8S_VERSION: ${todo[*]##*/} (about 10 CPU-minutes for all five the first time)"
  (cd "$ROOT/deploy/cluster/build" && GOWORK=off go build -trimpath -ldflags "$ldflags" -o "$BIN/" "${todo[@]}")
  for c in "$@"; do stamp "$c" "$K8S_VERSION"; done
}

build_kustomize() {
  if ! stamped kustomize "$KUSTOMIZE_VERSION"; then
    GOBIN=$BIN GOWORK=off go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
    stamp kustomize "$KUSTOMIZE_VERSION"
  fi
}

build() {
  mkdir -p "$BIN" "$LOGS"
  debian_deps
  build_kubernetes kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy
  if ! stamped pause 1; then
    (cd "$ROOT/deploy/cluster/build" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags "-s -w" -o "$BIN/pause" ./pause)
    stamp pause 1
  fi
  if ! stamped containerd "$CONTAINERD_VERSION"; then
    log "building containerd $CONTAINERD_VERSION"
    GOBIN=$BIN GOWORK=off go install "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION" \
      "github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION" \
      "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION"
    stamp containerd "$CONTAINERD_VERSION"
  fi
  if ! stamped runc "$RUNC_VERSION"; then
    log "building runc $RUNC_VERSION (tags seccomp)"
    local src
    mkdir -p "$CACHE"
    src=$(cd "$CACHE" && GOWORK=off go mod download -json "github.com/opencontainers/runc@$RUNC_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
    rm -rf "$CACHE/runc-src" && cp -r "$src" "$CACHE/runc-src" && chmod -R u+w "$CACHE/runc-src"
    # the module's vendor/ and its replace of selinux do not build outside
    # its repository: resolve them through the module proxy instead
    (cd "$CACHE/runc-src" && rm -rf vendor && go mod edit -dropreplace github.com/opencontainers/selinux &&
      GOWORK=off GOFLAGS=-mod=mod go build -trimpath -tags seccomp -ldflags "-X main.version=${RUNC_VERSION#v}" -o "$BIN/runc" .)
    stamp runc "$RUNC_VERSION"
  fi
  if ! stamped coredns "$COREDNS_VERSION"; then
    log "building CoreDNS $COREDNS_VERSION"
    GOBIN=$BIN GOWORK=off go install "github.com/coredns/coredns@$COREDNS_VERSION"
    stamp coredns "$COREDNS_VERSION"
  fi
  if ! stamped crane "$CRANE_VERSION"; then
    GOBIN=$BIN GOWORK=off go install "github.com/google/go-containerregistry/cmd/crane@$CRANE_VERSION"
    stamp crane "$CRANE_VERSION"
  fi
  if ! stamped nats-server "$NATS_SERVER_VERSION"; then
    log "building nats-server $NATS_SERVER_VERSION"
    CGO_ENABLED=0 GOBIN=$BIN GOWORK=off go install -trimpath -ldflags "-s -w" "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
    stamp nats-server "$NATS_SERVER_VERSION"
  fi
  build_kustomize
  # kubectl: Debian's, run inside the namespace (its kubeconfig also works
  # from outside: the server address is the node's, routed through the veth)
  cat >"$BIN/kubectl" <<EOF
#!/bin/sh
# Debian's kubectl with the one-node cluster's kubeconfig (make k8s-up).
exec /usr/bin/kubectl --kubeconfig "$K8S/kubeconfig" "\$@"
EOF
  chmod +x "$BIN/kubectl"
}

# --- certificates ------------------------------------------------------------

# cert NAME CN ORG SANS [server|client|both]: NAME.crt/.key signed by the
# CA ca.crt/ca.key, all in $CERTS
cert() {
  local name=$1 cn=$2 org=$3 sans=$4 usage=${5:-both} eku
  case $usage in
  server) eku=serverAuth ;; client) eku=clientAuth ;; *) eku=serverAuth,clientAuth ;;
  esac
  local subj="/CN=$cn"
  [ -n "$org" ] && subj="/O=$org$subj"
  openssl ecparam -name prime256v1 -genkey -noout -out "$CERTS/$name.key" 2>/dev/null
  openssl req -new -key "$CERTS/$name.key" -subj "$subj" -out "$CERTS/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -n "$sans" ] && echo "subjectAltName=$sans"
  } >"$CERTS/$name.ext"
  openssl x509 -req -in "$CERTS/$name.csr" -CA "$CERTS/ca.crt" -CAkey "$CERTS/ca.key" -CAcreateserial \
    -days 30 -sha256 -extfile "$CERTS/$name.ext" -out "$CERTS/$name.crt" 2>/dev/null
  rm -f "$CERTS/$name.csr" "$CERTS/$name.ext"
}

# ca DIR CN: a fresh CA in DIR (ca.crt, ca.key), the one cert signs with
ca() {
  CERTS=$1
  mkdir -p "$CERTS" && chmod 700 "$CERTS"
  openssl ecparam -name prime256v1 -genkey -noout -out "$CERTS/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$CERTS/ca.key" -subj "/CN=$2" -days 30 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$CERTS/ca.crt" 2>/dev/null
}

# kubeconfig FILE USER CERTNAME SERVER
kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: chemmy-k8s
    cluster:
      server: $4
      certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
users:
  - name: $2
    user:
      client-certificate-data: $(base64 -w0 "$PKI/$3.crt")
      client-key-data: $(base64 -w0 "$PKI/$3.key")
contexts:
  - name: chemmy-k8s
    context: {cluster: chemmy-k8s, user: $2}
current-context: chemmy-k8s
EOF
  chmod 600 "$1"
}

pki() {
  ca "$PKI" chemmy-k8s-ca
  cert apiserver kube-apiserver "" "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP,IP:$API_SERVICE_IP" server
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters "" client
  cert admin chemmy-admin system:masters "" client
  cert controller-manager system:kube-controller-manager "" "" client
  cert scheduler system:kube-scheduler "" "" client
  cert kubelet "system:node:$NODE_NAME" system:nodes "" client
  cert kube-proxy system:kube-proxy "" "" client
  # CoreDNS reads Services and EndpointSlices: bound below to the
  # ClusterRole system:coredns made for it (the user chemmy-coredns)
  cert coredns chemmy-coredns "" "" client
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/sa.key" 2>/dev/null
  openssl ec -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  local local_api=https://127.0.0.1:6443
  kubeconfig "$PKI/controller-manager.kubeconfig" system:kube-controller-manager controller-manager $local_api
  kubeconfig "$PKI/scheduler.kubeconfig" system:kube-scheduler scheduler $local_api
  kubeconfig "$PKI/kubelet.kubeconfig" "system:node:$NODE_NAME" kubelet $local_api
  kubeconfig "$PKI/kube-proxy.kubeconfig" system:kube-proxy kube-proxy $local_api
  kubeconfig "$PKI/coredns.kubeconfig" chemmy-coredns coredns $local_api
  kubeconfig "$K8S/kubeconfig" chemmy-admin admin "https://$NODE_IP:6443"
}

# --- processes ---------------------------------------------------------------

# start NAME CMD...: run CMD in the namespace, its log in .k8s/logs/NAME.log
start() {
  local name=$1
  shift
  log "starting $name"
  nsenter --net="$NETNS" setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
}

running() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

# wait_for WHAT SECONDS CMD...: until CMD succeeds
wait_for() {
  local what=$1 secs=$2 i
  shift 2
  for ((i = 0; i < secs * 2; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  die "$what not ready after ${secs}s (logs in $LOGS)"
}

network() {
  ip netns add "$NS"
  innet ip link set lo up
  ip link add chemmy-k8s0 type veth peer name eth0 netns "$NS"
  ip addr add "$HOST_IP/30" dev chemmy-k8s0
  ip link set chemmy-k8s0 up
  innet ip addr add "$NODE_IP/30" dev eth0
  innet ip link set eth0 up
  innet sysctl -qw net.ipv4.ip_forward=1
  innet sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true
  # nothing from a pod leaves through the veth: the namespace routes pods
  # to each other and to the node only
  innet iptables -I FORWARD -o eth0 -j DROP
  innet iptables -I FORWARD -i eth0 -j DROP
}

configs() {
  mkdir -p "$STATE/cni/net.d" "$STATE/certs.d/$REGISTRY" "$STATE/volumes" "$RUN/containerd"
  cat >"$STATE/cni/net.d/10-chemmy.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "chemmy",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$POD_CIDR"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$STATE/cni/ipam"
      }
    }
  ]
}
EOF
  cat >"$STATE/certs.d/$REGISTRY/hosts.toml" <<EOF
server = "http://$REGISTRY"
[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve"]
EOF
  cat >"$STATE/containerd.toml" <<EOF
version = 3
root = "$STATE/containerd"
state = "$RUN/containerd/state"
[grpc]
  address = "$RUN/containerd/containerd.sock"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '$PAUSE_IMAGE'
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = '$STATE/certs.d'
[plugins.'io.containerd.cri.v1.runtime']
  # no CAP_SYS_RESOURCE here: runc cannot lower a process's oom_score_adj
  restrict_oom_score_adj = true
  # the pods' network namespaces under the state directory, not in
  # /var/run/netns: down removes them with the rest
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = '$BIN/runc'
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['/usr/lib/cni']
    conf_dir = '$STATE/cni/net.d'
EOF
  # the pods' resolver: the cluster's DNS only (kubelet's clusterDNS)
  echo "options ndots:5" >"$STATE/resolv.conf"
  cat >"$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
# cgroup v1 on these machines, no systemd
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: $STATE/resolv.conf
containerRuntimeEndpoint: unix://$RUN/containerd/containerd.sock
address: $NODE_IP
healthzBindAddress: 127.0.0.1
# a shared build machine: evict only when it is really full
evictionHard: {memory.available: 200Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
serializeImagePulls: false
maxPods: 60
# the pods' logs with the rest of the cluster's state (down removes them)
podLogsDir: $STATE/pod-logs
# Secrets and ConfigMaps reach their volumes within seconds (the load
# run's token file)
syncFrequency: 10s
EOF
  cat >"$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $PKI/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE_NAME
bindAddress: $NODE_IP
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
# leave the host's conntrack table size alone
conntrack: {maxPerCore: 0, min: 0}
EOF
  cat >"$STATE/Corefile" <<EOF
.:53 {
    bind $NODE_IP
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $PKI/coredns.kubeconfig chemmy-k8s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    cache 5
}
EOF
}

# images: the sandbox image (pause) and NATS, in the registry
base_images() {
  image_from_binary "$PAUSE_IMAGE" "$BIN/pause" /pause 65535:65535
  image_from_binary "$REGISTRY/nats:${NATS_SERVER_VERSION#v}" "$BIN/nats-server" /bin/nats-server 1000:1000
}

# image_from_binary REF BINARY PATH USER [FILE...]: an image of one static
# binary at PATH (on PATH too), running as USER, with a /data owned by
# USER, and each FILE of this machine at the same path
image_from_binary() {
  local ref=$1 bin=$2 path=$3 user=$4 dir f
  shift 4
  dir=$(mktemp -d)
  mkdir -p "$dir/root$(dirname "$path")" "$dir/root/data" "$dir/root/tmp"
  cp "$bin" "$dir/root$path"
  for f in "$@"; do
    [ -f "$f" ] && mkdir -p "$dir/root$(dirname "$f")" && cp -L "$f" "$dir/root$f"
  done
  chown -R 0:0 "$dir/root"
  chown "$user" "$dir/root/data"
  chmod 1777 "$dir/root/tmp"
  # the same files make the same layer (a cached blob, the same digest)
  tar --numeric-owner --sort=name --mtime=@0 -C "$dir/root" -cf "$dir/layer.tar" .
  innet crane append --oci-empty-base -f "$dir/layer.tar" -t "$ref" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; rm -rf "$dir"; die "crane append $ref"; }
  innet crane mutate "$ref" --entrypoint "$path" --user "$user" --set-platform linux/amd64 \
    --env "PATH=$(dirname "$path"):/bin" -t "$ref" 2>"$dir/err" | tail -1 || { cat "$dir/err" >&2; rm -rf "$dir"; die "crane mutate $ref"; }
  rm -rf "$dir"
}

rbac() {
  "$BIN/kubectl" apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
  - apiGroups: [""]
    resources: [endpoints, services, pods, namespaces]
    verbs: [list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects:
  - {apiGroup: rbac.authorization.k8s.io, kind: User, name: chemmy-coredns}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: chemmy-local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
EOF
}

# volumes N: N hostPath PersistentVolumes of the StorageClass chemmy-local
# (no provisioner here: the cluster's claims bind to these)
volumes() {
  local i
  for ((i = 0; i < $1; i++)); do
    mkdir -p "$STATE/volumes/pv-$i" && chmod 1777 "$STATE/volumes/pv-$i"
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: chemmy-pv-$i}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: chemmy-local
  hostPath: {path: $STATE/volumes/pv-$i, type: Directory}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions:
            - {key: kubernetes.io/hostname, operator: In, values: [$NODE_NAME]}
EOF
  done | "$BIN/kubectl" apply -f - >/dev/null
}

up() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespace, cgroups, mounts)"
  if [ -e "$NETNS" ] && running kube-apiserver; then
    log "already up (make k8s-down first for a fresh one)"
    return 0
  fi
  [ -e "$NETNS" ] && down
  build
  mkdir -p "$RUN" "$STATE" "$CACHE/registry" "$LOGS"
  network
  pki
  configs
  start registry crane registry serve --address "$REGISTRY" --disk "$CACHE/registry"
  start etcd etcd --name chemmy-k8s --data-dir "$STATE/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --quota-backend-bytes 2147483648
  wait_for etcd 60 innet curl -sf http://127.0.0.1:2379/health
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=0.0.0.0 --secure-port=6443 --advertise-address="$NODE_IP" \
    --service-cluster-ip-range="$SERVICE_CIDR" --allow-privileged=false \
    --kubelet-preferred-address-types=InternalIP \
    --authorization-mode=Node,RBAC --client-ca-file="$PKI/ca.crt" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local
  wait_for kube-apiserver 120 "$BIN/kubectl" get --raw /readyz
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$PKI/controller-manager.kubeconfig" --bind-address=127.0.0.1 --leader-elect=false \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    --use-service-account-credentials=true --service-cluster-ip-range="$SERVICE_CIDR" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --allocate-node-cidrs=false
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$PKI/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false
  rbac
  start coredns coredns -conf "$STATE/Corefile"
  base_images
  start containerd containerd --config "$STATE/containerd.toml"
  wait_for containerd 60 test -S "$RUN/containerd/containerd.sock"
  start kubelet "$BIN/kubelet" --config="$STATE/kubelet.yaml" --kubeconfig="$PKI/kubelet.kubeconfig" \
    --root-dir="$STATE/kubelet" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP"
  start kube-proxy "$BIN/kube-proxy" --config="$STATE/kube-proxy.yaml"
  wait_for "node $NODE_NAME Ready" 180 "$BIN/kubectl" wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
  volumes 12
  log "up: node $NODE_NAME Ready; kubectl: $BIN/kubectl (kubeconfig $K8S/kubeconfig)"
}

# stop NAME: SIGTERM, then SIGKILL after 10 s
stop() {
  local pid i
  [ -f "$RUN/$1.pid" ] || return 0
  pid=$(cat "$RUN/$1.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$1.pid"
}

down() {
  [ "$(id -u)" = 0 ] || die "needs root"
  local p m
  stop kubelet
  stop kube-proxy
  # the pods: their shims and processes (containerd's tasks), then containerd
  for p in $(pgrep -f "containerd-shim-runc-v2 -namespace k8s.io" || true); do
    pkill -9 -P "$p" 2>/dev/null || true
    kill -9 "$p" 2>/dev/null || true
  done
  stop containerd
  for p in coredns kube-scheduler kube-controller-manager kube-apiserver etcd registry; do stop "$p"; done
  # what containerd and kubelet mounted under the state directory
  for m in $(awk -v s="$STATE" -v r="$RUN" '$2 ~ "^(" s "|" r ")" {print $2}' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  # the pods' cgroups (cgroupfs driver: kubepods under each hierarchy)
  for m in /sys/fs/cgroup/*/kubepods; do
    [ -d "$m" ] && find "$m" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  # the kubelet's links to the pods' logs (always in /var/log/containers)
  find /var/log/containers -maxdepth 1 -lname "$STATE/*" -delete 2>/dev/null || true
  ip link del chemmy-k8s0 2>/dev/null || true
  [ -e "$NETNS" ] && ip netns del "$NS"
  rm -rf "$STATE" "$RUN"
  log "down: processes stopped, namespace $NS removed (cache kept: $BIN, $CACHE)"
}

status() {
  local p
  for p in registry etcd kube-apiserver kube-controller-manager kube-scheduler coredns containerd kubelet kube-proxy; do
    if running "$p"; then echo "$p: running (log $LOGS/$p.log)"; else echo "$p: stopped"; fi
  done
}

# --- chemmy on the cluster ---------------------------------------------------

CHEMMY_NS=chemmy
SERVICES=(table-svc shoe-svc wallet-svc gateway chemmy)

# kc ARGS: kubectl on the cluster, in chemmy's namespace
kc() { "$BIN/kubectl" -n "$CHEMMY_NS" "$@"; }

# images: chemmy's five images (static binaries on an empty base, user
# 65532, as deploy/docker/Dockerfile makes them) in the cluster's
# registry; DIGESTS holds "name=digest" lines
images() {
  local out=$CACHE/images s src rev
  mkdir -p "$out"
  rev=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
  log "building chemmy's binaries (CGO off, static)"
  for s in "${SERVICES[@]}"; do
    src=./$s
    [ "$s" = chemmy ] && src=./cmd/chemmy
    (cd "$ROOT" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath \
      -ldflags "-s -w -X github.com/chemmy/chemmy/services/kit/buildinfo.version=dev -X github.com/chemmy/chemmy/services/kit/buildinfo.revision=$rev" \
      -o "$out/$s" "$src")
  done
  : >"$STATE/digests"
  for s in "${SERVICES[@]}"; do
    image_from_binary "$REGISTRY/chemmy/$s:dev" "$out/$s" /service 65532:65532 /etc/ssl/certs/ca-certificates.crt
    echo "$s=$(innet crane digest "$REGISTRY/chemmy/$s:dev")" >>"$STATE/digests"
  done
  log "images pushed: $(tr '\n' ' ' <"$STATE/digests")"
}

# pin: the render on stdin with chemmy's images by digest
pin() {
  local args=() s d
  while IFS='=' read -r s d; do
    args+=(-e "s|$REGISTRY/chemmy/$s:dev|$REGISTRY/chemmy/$s@$d|g")
  done <"$STATE/digests"
  sed "${args[@]}"
}

# secrets: chemmy's certificates (the mounted-Secret path of
# deploy/k8s/base: gateway-tls, table-svc-tls, wallet-svc-tls,
# shoe-svc-tls and nats-tls, each tls.crt, tls.key and ca.crt) from a CA
# of this cluster's, as components/cert-manager would make them
secrets() {
  local d=$STATE/chemmy-pki s n
  ca "$d" chemmy-ca
  for s in gateway table-svc wallet-svc shoe-svc; do
    n="URI:spiffe://chemmy/$s,DNS:$s,DNS:$s.$CHEMMY_NS,DNS:$s.$CHEMMY_NS.svc,DNS:$s.$CHEMMY_NS.svc.cluster.local"
    cert "$s" "$s" "" "$n"
  done
  cert nats nats "" "DNS:nats-0.nats-headless,DNS:nats-1.nats-headless,DNS:nats-2.nats-headless"
  for s in gateway table-svc wallet-svc shoe-svc nats; do
    kc create secret generic "$s-tls" --from-file=tls.crt="$d/$s.crt" --from-file=tls.key="$d/$s.key" \
      --from-file=ca.crt="$d/ca.crt" --dry-run=client -o yaml | kc apply -f - >/dev/null
  done
}

# ready SECONDS: every pod of the namespace Running and Ready
ready() {
  local i
  for ((i = 0; i < $1; i += 5)); do
    if [ -n "$(kc get pods -o name 2>/dev/null)" ] &&
      ! kc get pods --no-headers 2>/dev/null | grep -v Completed | awk '{split($2, r, "/"); if ($3 != "Running" || r[1] != r[2]) bad = 1} END {exit !bad}'; then
      return 0
    fi
    sleep 5
  done
  kc get pods -o wide >&2 || true
  die "pods not Ready after $1 s"
}

deploy() {
  running kube-apiserver || die "the cluster is not up (make k8s-up)"
  images
  log "deploying overlays/onenode"
  "$BIN/kustomize" build "$ROOT/deploy/k8s/overlays/onenode" | pin | "$BIN/kubectl" apply -f - >/dev/null
  secrets
  ready 600
  log "deployed: $(kc get pods --no-headers | wc -l) pods Ready"
}

# tokens_served SECONDS: until every gateway pod knows the last token of
# the Secret gateway-tokens (the Secret reaches the pods' volumes, then
# each gateway reads the file again every 10 s): GetCaller over HTTP
# with it, from the node
tokens_served() {
  local tok ip i ok
  tok=$(kc get secret gateway-tokens -o jsonpath='{.data.tokens\.yaml}' | base64 -d | sed -n 's/.*token: *"\{0,1\}\([^",}]*\)"\{0,1\}.*/\1/p' | tail -1)
  [ -n "$tok" ] || die "no token in the Secret gateway-tokens"
  for ((i = 0; i < $1; i += 2)); do
    ok=1
    for ip in $(kc get pods -l app.kubernetes.io/name=gateway -o jsonpath='{.items[*].status.podIP}'); do
      [ "$(innet curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' \
        -H "authorization: Bearer $tok" -d '{}' "http://$ip:8080/chemmy.gateway.v1.GatewayService/GetCaller")" = 200 ] || ok=0
    done
    [ $ok = 1 ] && return 0
    sleep 2
  done
  die "the gateways did not take the load run's tokens within $1 s"
}

# job_wait NAME SECONDS: until Job NAME succeeds (0) or fails (1)
job_wait() {
  local i st
  for ((i = 0; i < $2; i += 2)); do
    st=$(kc get job "$1" -o jsonpath='{.status.succeeded}/{.status.failed}' 2>/dev/null || true)
    case $st in 1/*) return 0 ;; */[1-9]*) return 1 ;; esac
    sleep 2
  done
  return 1
}

# e2e: a fresh cluster, chemmy deployed, the load Job with two kills
# during it (table-svc-1's pod, a NATS pod), then the check Job
e2e() {
  local duration=${E2E_DURATION:-90s} tables=${E2E_TABLES:-16} secs killed=0 coups events t0 drained broken
  secs=${duration%s}
  [[ $secs =~ ^[0-9]+$ ]] && [ "$secs" -ge 60 ] || die "E2E_DURATION must be whole seconds, at least 60s (got $duration)"
  down
  up
  deploy
  log "load: $tables tables for $duration"
  BASE_TOKENS=$ROOT/deploy/k8s/overlays/local/tokens.yaml NS=$CHEMMY_NS TABLES=$tables CHEMMY=$CACHE/images/chemmy \
    "$ROOT/deploy/k8s/overlays/load/tokens.sh" >&2
  tokens_served 300
  kc delete job chemmy-load chemmy-check --ignore-not-found >/dev/null
  # the Job's run: its length and tables, a WatchTable stream per table
  # up to 8 (the gateway's streams per caller; for the rolling update),
  # and up to 20 attempts of a call (about 30 s of retries: a killed
  # shard's pod is back within that)
  "$BIN/kustomize" build "$ROOT/deploy/k8s/overlays/onenode-load" | pin |
    sed -e "s|^\( *\)- -duration=60s\$|\1- -duration=$duration\n\1- -watchers=$((tables < 8 ? tables : 8))\n\1- -max-attempts=20|" \
      -e "s|-tables=16|-tables=$tables|" | "$BIN/kubectl" apply -f - >/dev/null
  kc wait --for=condition=Ready pod -l app.kubernetes.io/name=chemmy-load --timeout=300s >/dev/null
  t0=$(date +%s)
  sleep 10
  log "rolling update of the gateway (kubectl rollout restart: a new annotation)"
  kc rollout restart deployment/gateway >/dev/null
  sleep $((secs / 3 - 10))
  log "killing table-svc-1's pod"
  kc delete pod table-svc-1 --wait=false >/dev/null && killed=$((killed + 1))
  sleep $((secs / 4))
  log "killing nats-1's pod"
  kc delete pod nats-1 --wait=false >/dev/null && killed=$((killed + 1))
  job_wait chemmy-load $((secs + 600)) || { kc logs job/chemmy-load >&2 || true; die "the load Job failed"; }
  kc logs job/chemmy-load >"$LOGS/chemmy-load.log"
  log "load done after $(($(date +%s) - t0)) s; its report: $LOGS/chemmy-load.log"
  kc rollout status deployment/gateway --timeout=300s >/dev/null
  ready 600
  kc patch job chemmy-check --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
  job_wait chemmy-check 600 || { kc logs job/chemmy-check >&2 || true; die "the check failed"; }
  kc logs job/chemmy-check >"$LOGS/chemmy-check.log"
  cat "$LOGS/chemmy-load.log" "$LOGS/chemmy-check.log" >&2
  coups=$(sed -n 's/.*: \([0-9][0-9]*\) coups settled.*/\1/p' "$LOGS/chemmy-load.log" | head -1)
  events=$(sed -n 's/^check: .*, \([0-9][0-9]*\) events in order.*/\1/p' "$LOGS/chemmy-check.log")
  [ -n "$coups" ] && [ "$coups" -gt 0 ] || die "no coups settled (report: $LOGS/chemmy-load.log)"
  [ -n "$events" ] || die "no check line (report: $LOGS/chemmy-check.log)"
  # the rolling update: no table gave up (no call failed past its
  # retries), every watch stream a gateway ended was drained, none broken
  grep -q 'tables given up: 0$' "$LOGS/chemmy-load.log" || die "a table gave up during the load (report: $LOGS/chemmy-load.log)"
  drained=$(sed -n 's/.*(GATEWAY_DRAINING): \([0-9]*\),.*/\1/p' "$LOGS/chemmy-load.log")
  broken=$(sed -n 's/.*connection to the gateway broken: \([0-9]*\),.*/\1/p' "$LOGS/chemmy-load.log")
  [ "${drained:-0}" -gt 0 ] || die "no watch stream was drained by a stopping gateway (report: $LOGS/chemmy-load.log)"
  [ "${broken:-1}" = 0 ] || die "$broken watch streams broke without a drain (report: $LOGS/chemmy-load.log)"
  echo "rolling update of the gateway: 0 tables given up, $drained watch streams drained and watched again, 0 broken"
  echo "k8s-e2e: $coups coups, $killed pods killed, ledger balanced, $events events in order"
}

# --- server-side dry run (CI) -------------------------------------------------

# module_dir MODULE@VERSION: the module's directory in the module cache
module_dir() { (cd "$CACHE" && GOWORK=off go mod download -json "$1" | sed -n 's/.*"Dir": "\(.*\)",/\1/p'); }

# dry_run: a kube-apiserver and an etcd on loopback (no cluster, no
# namespace of ours: nothing runs but these two), the CRDs chemmy's
# overlays use from their upstream modules (cert-manager's Certificate
# and Issuer, the Prometheus Operator's ServiceMonitor and
# PrometheusRule), then every render applied with --dry-run=server: the
# API server's own validation (strict fields, defaulting, admission,
# Pod Security "restricted" of namespace chemmy, whose warnings fail the
# run). A pod that breaks the restricted standard must be refused there,
# or the run fails.
dry_run() {
  command -v etcd >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null; }
  [ -x /usr/bin/kubectl ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubectl >/dev/null; }
  command -v openssl >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null; }
  mkdir -p "$CACHE"
  build_kubernetes kube-apiserver
  build_kustomize
  local kcfg dir render out bad=0 n=0
  # globals: the EXIT trap runs after this function has returned
  DRY_DIR=$(mktemp -d) DRY_API=0 DRY_ETCD=0
  local w=$DRY_DIR
  # a throw-away API server: killed outright (its graceful stop waits
  # for etcd, which goes at the same time)
  trap 'kill -9 $DRY_API $DRY_ETCD 2>/dev/null; wait 2>/dev/null; rm -rf "$DRY_DIR"' EXIT
  ca "$w/pki" dry-run-ca
  cert apiserver kube-apiserver "" "DNS:localhost,IP:127.0.0.1" server
  cert admin dry-run-admin system:masters "" client
  openssl ecparam -name prime256v1 -genkey -noout -out "$w/pki/sa.key" 2>/dev/null
  openssl ec -in "$w/pki/sa.key" -pubout -out "$w/pki/sa.pub" 2>/dev/null
  PKI=$w/pki kubeconfig "$w/kubeconfig" dry-run-admin admin https://127.0.0.1:26443
  etcd --name dry-run --data-dir "$w/etcd" --listen-client-urls http://127.0.0.1:22379 \
    --advertise-client-urls http://127.0.0.1:22379 --listen-peer-urls http://127.0.0.1:22380 >"$w/etcd.log" 2>&1 &
  DRY_ETCD=$!
  "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:22379 --bind-address=127.0.0.1 --secure-port=26443 \
    --advertise-address=127.0.0.1 --endpoint-reconciler-type=none --service-cluster-ip-range=10.96.0.0/16 \
    --authorization-mode=RBAC --client-ca-file="$w/pki/ca.crt" \
    --tls-cert-file="$w/pki/apiserver.crt" --tls-private-key-file="$w/pki/apiserver.key" \
    --service-account-key-file="$w/pki/sa.pub" --service-account-signing-key-file="$w/pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local >"$w/apiserver.log" 2>&1 &
  DRY_API=$!
  kcfg=(/usr/bin/kubectl --kubeconfig "$w/kubeconfig")
  local i
  for ((i = 0; i < 240; i++)); do "${kcfg[@]}" get --raw /readyz >/dev/null 2>&1 && break; sleep 0.5; done
  "${kcfg[@]}" get --raw /readyz >/dev/null 2>&1 || { tail -20 "$w/apiserver.log" >&2; die "kube-apiserver not ready"; }
  log "kube-apiserver $K8S_VERSION ready on 127.0.0.1:26443 (etcd $(etcd --version | head -1 | awk '{print $3}'))"
  local cm pom
  cm=$(module_dir "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION")
  pom=$(module_dir "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION")
  "${kcfg[@]}" apply -f "$cm/deploy/crds/cert-manager.io_certificates.yaml" -f "$cm/deploy/crds/cert-manager.io_issuers.yaml" \
    -f "$pom/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
    -f "$pom/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" >/dev/null
  "${kcfg[@]}" wait --for=condition=Established crd --all --timeout=60s >/dev/null
  local dirs=("$ROOT/deploy/k8s/base" "$ROOT"/deploy/k8s/overlays/*/)
  # the namespaces for real first (a dry run cannot make what the rest
  # goes into; the Jobs-only overlays go into chemmy, made by the others)
  "${kcfg[@]}" create namespace chemmy --dry-run=client -o yaml | "${kcfg[@]}" apply -f - >/dev/null
  for dir in "${dirs[@]}"; do
    "$BIN/kustomize" build "${dir%/}" | awk 'BEGIN{RS="\n---\n"} /(^|\n)kind: Namespace\n/ {print; print "---"}' >"$w/ns.yaml"
    [ -s "$w/ns.yaml" ] && "${kcfg[@]}" apply -f "$w/ns.yaml" >/dev/null
  done
  for dir in "${dirs[@]}"; do
    dir=${dir%/}
    render=$w/render.yaml
    "$BIN/kustomize" build "$dir" >"$render"
    if out=$("${kcfg[@]}" apply --dry-run=server --validate=strict -f "$render" 2>&1) && ! grep -q '^Warning:' <<<"$out"; then
      log "dry run ${dir#"$ROOT"/}: $(grep -c . <<<"$out") objects accepted"
      n=$((n + 1))
    else
      log "dry run ${dir#"$ROOT"/}: refused"
      echo "$out" >&2
      bad=1
    fi
  done
  # the enforcement itself: a root pod in namespace chemmy is refused (by
  # Pod Security, not for want of the ServiceAccount a controller-manager
  # would have made)
  "${kcfg[@]}" -n chemmy create serviceaccount default >/dev/null
  if out=$("${kcfg[@]}" -n chemmy run dry-run-root --image=127.0.0.1:5000/x:1 --restart=Never --dry-run=server 2>&1); then
    log "a pod breaking the restricted standard was accepted in namespace chemmy: $out"
    bad=1
  elif ! grep -q 'violates PodSecurity "restricted' <<<"$out"; then
    log "the root pod was refused, but not by Pod Security: $out"
    bad=1
  fi
  # and a Deployment whose pods would break it is warned about, the
  # warning this run fails a render for
  out=$("${kcfg[@]}" -n chemmy create deployment dry-run-root --image=127.0.0.1:5000/x:1 --dry-run=server 2>&1 || true)
  if ! grep -q '^Warning: would violate PodSecurity "restricted' <<<"$out"; then
    log "a Deployment breaking the restricted standard drew no Pod Security warning: $out"
    bad=1
  fi
  [ $bad = 0 ] || die "server-side dry run failed"
  echo "k8s-dry-run: $n renders accepted by kube-apiserver $K8S_VERSION (Pod Security restricted enforced in chemmy)"
}

case ${1:-} in
up) up ;;
down) down ;;
build) build ;;
images) images ;;
deploy) deploy ;;
e2e) e2e ;;
dry-run) dry_run ;;
status) status ;;
*) die "usage: $0 up|down|build|status|images|deploy|e2e|dry-run" ;;
esac
