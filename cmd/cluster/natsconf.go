package cluster

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// natsNode is what one node's configuration file needs.
type natsNode struct {
	// Name is the server_name (nats-0, nats-1, ...): JetStream knows its
	// peers by it, so it is kept across restarts.
	Name string
	// Port (clients), HTTPPort (monitoring: /healthz, /jsz), RoutePort
	// (the cluster routes), all on 127.0.0.1.
	Port, HTTPPort, RoutePort int
	// StoreDir is the JetStream file store of this node alone.
	StoreDir string
	// RoutePorts are every node's route port, this one's included (a
	// node skips a route to itself).
	RoutePorts []int
	// TLS: the routes' certificate, key and CA (mutual TLS between the
	// nodes, as in deploy/k8s); empty: plaintext routes.
	CertFile, KeyFile, CAFile string
	// Users are the nkey users with their permissions
	// (natsauth.DevKeys.ServerUsers).
	Users []*server.NkeyUser
}

// natsConfig renders n as a nats-server configuration file: the same
// settings as deploy/k8s/base/nats/nats.conf (JetStream, a cluster named
// chemmy with routes to every node over mutual TLS, clients told no
// other node's address, every client an nkey user with the permissions of
// package natsauth), with loopback addresses.
func natsConfig(n natsNode) string {
	var b strings.Builder
	q := strconv.Quote
	fmt.Fprintf(&b, "# %s of the local rehearsal (cmd/cluster); written at each start.\n", n.Name)
	fmt.Fprintf(&b, "server_name: %s\n", q(n.Name))
	fmt.Fprintf(&b, "listen: %s\n", q(fmt.Sprintf("127.0.0.1:%d", n.Port)))
	fmt.Fprintf(&b, "http: %s\n", q(fmt.Sprintf("127.0.0.1:%d", n.HTTPPort)))
	fmt.Fprintf(&b, "jetstream {\n  store_dir: %s\n  max_memory_store: 256MB\n  max_file_store: 4GB\n}\n", q(n.StoreDir))
	b.WriteString("cluster {\n  name: \"chemmy\"\n")
	fmt.Fprintf(&b, "  listen: %s\n", q(fmt.Sprintf("127.0.0.1:%d", n.RoutePort)))
	b.WriteString("  routes: [\n")
	for _, p := range n.RoutePorts {
		fmt.Fprintf(&b, "    %s\n", q(fmt.Sprintf("nats://127.0.0.1:%d", p)))
	}
	b.WriteString("  ]\n")
	if n.CertFile != "" {
		fmt.Fprintf(&b, "  tls {\n    cert_file: %s\n    key_file: %s\n    ca_file: %s\n    verify: true\n    timeout: 5\n  }\n",
			q(n.CertFile), q(n.KeyFile), q(n.CAFile))
	}
	b.WriteString("  no_advertise: true\n}\n")
	b.WriteString("authorization {\n  users: [\n")
	for _, u := range n.Users {
		fmt.Fprintf(&b, "    {\n      nkey: %s\n", q(u.Nkey))
		if p := u.Permissions; p != nil {
			b.WriteString("      permissions: {\n")
			subjects(&b, "publish", p.Publish)
			subjects(&b, "subscribe", p.Subscribe)
			b.WriteString("      }\n")
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

// subjects writes one direction of a user's permissions.
func subjects(b *strings.Builder, name string, p *server.SubjectPermission) {
	if p == nil {
		return
	}
	fmt.Fprintf(b, "        %s: {\n", name)
	list := func(key string, s []string) {
		if len(s) == 0 {
			return
		}
		quoted := make([]string, len(s))
		for i, v := range s {
			quoted[i] = strconv.Quote(v)
		}
		fmt.Fprintf(b, "          %s: [%s]\n", key, strings.Join(quoted, ", "))
	}
	list("allow", p.Allow)
	list("deny", p.Deny)
	b.WriteString("        }\n")
}
