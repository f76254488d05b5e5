package check

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
)

// NATS config in the pods: the ConfigMap's files are mounted at natsConfDir
// and the routes' certificate at natsTLSDir (base/nats.yaml).
const (
	natsConfDir = "/etc/nats/"
	natsTLSDir  = "/etc/nats-tls/"
)

// ParseNATSConfig parses the rendered ConfigMap nats-config as a NATS
// server of the StatefulSet would (nats-server's own parser, so syntax,
// users, nkeys and the cluster block are checked), for the node podName.
// Its files are written to dir; the paths of the routes' certificate are
// taken from tlsDir instead of /etc/nats-tls (it must hold tls.crt,
// tls.key and ca.crt: the parser loads them).
func ParseNATSConfig(cm *corev1.ConfigMap, dir, tlsDir, podName string) (*server.Options, error) {
	if _, ok := cm.Data["nats.conf"]; !ok {
		return nil, fmt.Errorf("ConfigMap %s has no nats.conf", cm.Name)
	}
	for name, text := range cm.Data {
		text = strings.ReplaceAll(text, natsTLSDir, filepath.Clean(tlsDir)+"/")
		text = strings.ReplaceAll(text, natsConfDir, filepath.Clean(dir)+"/")
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	// server_name: $POD_NAME, from the pod's environment
	if err := os.Setenv("POD_NAME", podName); err != nil {
		return nil, err
	}
	defer os.Unsetenv("POD_NAME")
	return server.ProcessConfigFile(filepath.Join(dir, "nats.conf"))
}
