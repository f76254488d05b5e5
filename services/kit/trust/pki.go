package trust

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// DevPKI is a throw-away certificate authority made at start by the local
// stack (`chemmy run`) and by tests: ca.crt, and <name>.crt / <name>.key
// for each service, ECDSA P-256, valid for 30 days.
type DevPKI struct {
	Dir    string
	CAFile string
	caCert *x509.Certificate
	caKey  crypto.Signer
}

// NewDevPKI creates a CA in dir (created 0700), replacing any files there,
// and a certificate for each of names.
func NewDevPKI(dir string, names ...string) (*DevPKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("trust: pki: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "chemmy development CA", Organization: []string{"chemmy"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := &DevPKI{Dir: dir, CAFile: filepath.Join(dir, "ca.crt"), caCert: ca, caKey: key}
	if err := writePEM(p.CAFile, "CERTIFICATE", der, 0o644); err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, err := p.Issue(n, now.Add(30*24*time.Hour)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Config is the trust Config of service name (issued by NewDevPKI or
// Issue).
func (p *DevPKI) Config(name string) Config {
	return Config{
		CertFile: filepath.Join(p.Dir, name+".crt"),
		KeyFile:  filepath.Join(p.Dir, name+".key"),
		CAFile:   p.CAFile,
	}
}

// Issue writes <name>.crt and <name>.key: a client and server certificate
// with the URI SAN spiffe://chemmy/<name>, the DNS SANs name and
// localhost and the IP SAN 127.0.0.1, valid until notAfter.
func (p *DevPKI) Issue(name string, notAfter time.Time) (Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Config{}, err
	}
	u, err := url.Parse(IdentityURI(name))
	if err != nil {
		return Config{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"chemmy"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{name, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		URIs:         []*url.URL{u},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return Config{}, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Config{}, err
	}
	c := p.Config(name)
	// Key first: a reader that sees the new certificate finds its key.
	if err := writePEM(c.KeyFile, "PRIVATE KEY", kder, 0o600); err != nil {
		return Config{}, err
	}
	if err := writePEM(c.CertFile, "CERTIFICATE", der, 0o644); err != nil {
		return Config{}, err
	}
	return c, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// writePEM writes one PEM block through a temporary file and a rename.
func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		return fmt.Errorf("trust: pki: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("trust: pki: %w", err)
	}
	return nil
}
