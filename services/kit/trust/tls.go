// Package trust is how chemmy processes know whom they talk to: mutual TLS
// between every pair of services, a service's identity taken from its
// verified certificate, and the end caller's identity carried as a
// short-lived assertion the gateway signs (assert.go).
//
// Identities. Every certificate of the suite is issued by the suite's CA
// and names its service twice: the URI SAN "spiffe://chemmy/<name>" (the
// identity a server reads from a client certificate) and the DNS SAN
// "<name>" (the name a client verifies a server against, whatever address
// it dialled). Names: "gateway", "table-svc", "wallet-svc", "shoe-svc".
//
// Development. Config.Insecure turns all of it off: plaintext gRPC, and
// backends believe the x-chemmy-subject / x-chemmy-role metadata of
// whoever connects. It exists for tests and local debugging and logs a
// warning at start; nothing that holds real money runs with it.
package trust

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"

	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/grpcx"
)

// Service names: the identities of chemmy's processes.
const (
	Gateway = "gateway"
	Table   = "table-svc"
	Wallet  = "wallet-svc"
	Shoe    = "shoe-svc"
)

// TrustDomain is the authority of the identity URIs: spiffe://chemmy/<name>.
const TrustDomain = "chemmy"

// IdentityURI is the URI SAN a certificate of service name carries.
func IdentityURI(name string) string { return "spiffe://" + TrustDomain + "/" + name }

// Config locates a process's certificate, key and the suite's CA (PEM
// files), or says Insecure. Flags: -tls-cert, -tls-key, -tls-ca,
// -insecure; environment CHEMMY_TLS_CERT, CHEMMY_TLS_KEY, CHEMMY_TLS_CA,
// CHEMMY_INSECURE.
type Config struct {
	// CertFile: this process's certificate chain (leaf first); re-read
	// when the file changes, so a rotated certificate needs no restart.
	CertFile string
	// KeyFile: the certificate's private key (ECDSA, RSA or Ed25519).
	KeyFile string
	// CAFile: the suite's CA certificates; read once at start.
	CAFile string
	// Insecure: plaintext and metadata identity (development only).
	Insecure bool
}

// Check reports a Config that can be neither secure nor insecure.
func (c Config) Check() error {
	if c.Insecure {
		return nil
	}
	if c.CertFile == "" || c.KeyFile == "" || c.CAFile == "" {
		return errors.New("trust: -tls-cert, -tls-key and -tls-ca are required (or -insecure for plaintext development)")
	}
	return nil
}

// Material is a loaded Config: the keypair (reloading) and the CA pool.
// A nil *Material means insecure.
type Material struct {
	pair *keypair
	pool *x509.CertPool
	// caNotAfter: when the first of the CA's certificates expires.
	caNotAfter time.Time
}

// Load reads the files of c. It returns nil, nil for an insecure Config.
func Load(c Config) (*Material, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if c.Insecure {
		return nil, nil
	}
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("trust: CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("trust: CA %s holds no PEM certificate", c.CAFile)
	}
	kp := &keypair{certFile: c.CertFile, keyFile: c.KeyFile}
	if _, err := kp.get(); err != nil {
		return nil, err
	}
	return &Material{pair: kp, pool: pool, caNotAfter: firstExpiry(ca)}, nil
}

// Name is the service name in this process's own certificate.
func (m *Material) Name() (string, error) {
	c, err := m.pair.get()
	if err != nil {
		return "", err
	}
	name, ok := identity(c.Leaf)
	if !ok {
		return "", errors.New("trust: own certificate has no spiffe://chemmy/<name> URI SAN")
	}
	return name, nil
}

// ServerOption returns the gRPC server credentials: TLS 1.3 with a client
// certificate required and verified against the suite's CA. For nil m
// (insecure) it returns no option.
func (m *Material) ServerOption() []grpc.ServerOption {
	if m == nil {
		return nil
	}
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs:  m.pool,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return m.pair.get()
		},
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(cfg))}
}

// DialOption returns the client credentials for a call to service name:
// this process's certificate, and the server verified against the CA and
// the DNS name "name". For nil m it returns plaintext credentials.
func (m *Material) DialOption(name string) grpc.DialOption {
	if m == nil {
		return grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		RootCAs:    m.pool,
		ServerName: name,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return m.pair.get()
		},
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(cfg))
}

// Dial returns a client of service target at addr for service self:
// mutual TLS with m's certificate; for nil m (insecure), plaintext with
// self as the "service" caller in metadata. A lost connection is tried
// again within grpcx.ReconnectDelayMax (grpcx.Reconnect).
func (m *Material) Dial(addr, target, self string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	opts = append([]grpc.DialOption{grpcx.Reconnect()}, append(opts, m.DialOption(target))...)
	if m == nil {
		opts = append(opts, grpc.WithChainUnaryInterceptor(auth.ServiceIdentity(auth.Caller{Subject: self, Role: auth.RoleService})))
	}
	return grpc.NewClient(addr, opts...)
}

// PeerName is the service name of the caller's verified client
// certificate, if the connection has one.
func PeerName(ctx context.Context) (string, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.AuthInfo == nil {
		return "", false
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(ti.State.VerifiedChains) == 0 || len(ti.State.VerifiedChains[0]) == 0 {
		return "", false
	}
	return identity(ti.State.VerifiedChains[0][0])
}

// identity reads the service name from c's spiffe://chemmy/<name> URI SAN.
func identity(c *x509.Certificate) (string, bool) {
	if c == nil {
		return "", false
	}
	for _, u := range c.URIs {
		if name, ok := parseIdentity(u); ok {
			return name, true
		}
	}
	return "", false
}

func parseIdentity(u *url.URL) (string, bool) {
	if u.Scheme != "spiffe" || u.Host != TrustDomain {
		return "", false
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || strings.Contains(name, "/") {
		return "", false
	}
	return name, true
}

// keypair is a certificate and key read from files, re-read when either
// file's modification time changes (checked at most once a second).
type keypair struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	mod     [2]time.Time
	checked time.Time
}

func (k *keypair) get() (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	if k.cert != nil && now.Sub(k.checked) < time.Second {
		return k.cert, nil
	}
	k.checked = now
	var mod [2]time.Time
	for i, f := range []string{k.certFile, k.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			if k.cert != nil {
				return k.cert, nil // keep serving the last good pair
			}
			return nil, fmt.Errorf("trust: %w", err)
		}
		mod[i] = st.ModTime()
	}
	if k.cert != nil && mod == k.mod {
		return k.cert, nil
	}
	c, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		if k.cert != nil {
			return k.cert, nil // half-written rotation: try again later
		}
		return nil, fmt.Errorf("trust: certificate: %w", err)
	}
	k.cert, k.mod = &c, mod
	return k.cert, nil
}
