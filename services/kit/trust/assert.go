package trust

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/services/kit/auth"
)

// MDAssertion is the metadata key of the end caller's assertion: a
// compact JWS (JWT) that the gateway signs with its TLS key. Header: alg
// (ES256 for a P-256 key; ES384, RS256 or EdDSA for other keys) and x5c
// (the gateway's certificate). Claims: iss "spiffe://chemmy/gateway",
// sub (the caller's subject), chemmy_role (player, croupier, operator or
// auditor), aud (the target service's name, e.g. "wallet-svc"), iat, nbf
// and exp (AssertionTTL after iat).
const MDAssertion = "x-chemmy-assertion"

// AssertionTTL is how long an assertion is valid: a forwarded call starts
// within it (a stream is checked once, when it opens).
const AssertionTTL = 15 * time.Second

// assertionLeeway is the clock skew tolerated on nbf and exp.
const assertionLeeway = 5 * time.Second

var assertionAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.RS256, jose.EdDSA}

type assertionClaims struct {
	jwt.Claims
	Role string `json:"chemmy_role"`
}

// Signer makes assertions with the gateway's certificate key.
type Signer struct {
	m   *Material
	now func() time.Time

	mu     sync.Mutex
	cert   *tls.Certificate
	signer jose.Signer
}

// NewSigner signs with m's (reloading) key; now is the clock (nil:
// time.Now).
func NewSigner(m *Material, now func() time.Time) *Signer {
	if now == nil {
		now = time.Now
	}
	return &Signer{m: m, now: now}
}

// Assert returns a signed assertion that c calls service audience.
func (s *Signer) Assert(c auth.Caller, audience string) (string, error) {
	sig, err := s.current()
	if err != nil {
		return "", err
	}
	now := s.now()
	cl := assertionClaims{
		Claims: jwt.Claims{
			Issuer: IdentityURI(Gateway), Subject: c.Subject, Audience: jwt.Audience{audience},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
			Expiry: jwt.NewNumericDate(now.Add(AssertionTTL)),
		},
		Role: string(c.Role),
	}
	return jwt.Signed(sig).Claims(cl).Serialize()
}

// current is a JOSE signer for the keypair in use, rebuilt after rotation.
func (s *Signer) current() (jose.Signer, error) {
	cert, err := s.m.pair.get()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cert == s.cert {
		return s.signer, nil
	}
	key, ok := cert.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("trust: the certificate's key cannot sign")
	}
	alg, err := algorithm(key.Public())
	if err != nil {
		return nil, err
	}
	chain := make([]string, len(cert.Certificate))
	for i, der := range cert.Certificate {
		chain[i] = base64.StdEncoding.EncodeToString(der)
	}
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("x5c", chain)
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		return nil, err
	}
	s.cert, s.signer = cert, sig
	return sig, nil
}

func algorithm(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		}
	case *rsa.PublicKey:
		return jose.RS256, nil
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("trust: no assertion algorithm for a %T key", pub)
}

// Authenticator finds the caller of a backend's call (auth.Authenticator):
//
//   - the connection must carry a client certificate verified against the
//     suite's CA (the TLS handshake refuses any other) naming a service;
//   - a call with an assertion must come from the gateway's connection,
//     and the assertion must be signed by a gateway certificate of the
//     suite, name this service as its audience and be within its validity:
//     the caller is the assertion's subject and role;
//   - a call without one is the calling service itself, with the role
//     "service", if that service is in Services; otherwise it is refused.
//
// Identity metadata (x-chemmy-subject, x-chemmy-role) is never read.
type Authenticator struct {
	// Self is this service's name: the audience its assertions must name.
	Self string
	// Services may call with the role "service" (e.g. table-svc for
	// wallet-svc); the gateway never may.
	Services []string

	pool *x509.CertPool
	now  func() time.Time
}

// NewAuthenticator checks calls to service self; services may call with
// the role "service". now is the clock (nil: time.Now).
func NewAuthenticator(m *Material, self string, services []string, now func() time.Time) *Authenticator {
	if now == nil {
		now = time.Now
	}
	return &Authenticator{Self: self, Services: services, pool: m.pool, now: now}
}

// Authenticate implements auth.Authenticator.
func (a *Authenticator) Authenticate(ctx context.Context) (auth.Caller, error) {
	peerName, ok := PeerName(ctx)
	if !ok {
		return auth.Caller{}, auth.Refuse(auth.ReasonUnauthenticated, "the connection carries no certificate of a chemmy service")
	}
	md, _ := metadata.FromIncomingContext(ctx)
	tokens := md.Get(MDAssertion)
	if len(tokens) == 0 {
		if peerName == Gateway || !slices.Contains(a.Services, peerName) {
			return auth.Caller{}, auth.Refuse(auth.ReasonPeerNotAllowed,
				"%s may not call %s on its own behalf, and the call carries no caller assertion", peerName, a.Self)
		}
		return auth.Caller{Subject: peerName, Role: auth.RoleService}, nil
	}
	if peerName != Gateway {
		return auth.Caller{}, auth.Refuse(auth.ReasonPeerNotAllowed, "only the gateway asserts callers; %s may not", peerName)
	}
	if len(tokens) != 1 {
		return auth.Caller{}, auth.Refuse(auth.ReasonAssertionInvalid, "more than one %s", MDAssertion)
	}
	return a.verify(tokens[0])
}

func (a *Authenticator) verify(token string) (auth.Caller, error) {
	bad := func(format string, args ...any) (auth.Caller, error) {
		return auth.Caller{}, auth.Refuse(auth.ReasonAssertionInvalid, format, args...)
	}
	t, err := jwt.ParseSigned(token, assertionAlgs)
	if err != nil || len(t.Headers) != 1 {
		return bad("the caller assertion is not a signed JWT")
	}
	cert, err := a.issuer(t.Headers[0])
	if err != nil {
		return bad("the caller assertion's certificate: %v", err)
	}
	var cl assertionClaims
	if err := t.Claims(cert.PublicKey, &cl); err != nil {
		return bad("the caller assertion's signature does not verify")
	}
	err = cl.ValidateWithLeeway(jwt.Expected{Issuer: IdentityURI(Gateway), AnyAudience: jwt.Audience{a.Self}, Time: a.now()}, assertionLeeway)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return auth.Caller{}, auth.Refuse(auth.ReasonAssertionExpired, "the caller assertion expired at %s", cl.Expiry.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrInvalidAudience):
		return bad("the caller assertion is for %v, not %s", []string(cl.Audience), a.Self)
	case err != nil:
		return bad("the caller assertion: %v", err)
	case cl.Expiry == nil:
		return bad("the caller assertion has no expiry")
	}
	r := auth.Role(cl.Role)
	if cl.Subject == "" || !r.Valid() || r == auth.RoleService {
		return bad("the caller assertion names no subject or an unknown role %q", cl.Role)
	}
	return auth.Caller{Subject: cl.Subject, Role: r}, nil
}

// issuer verifies the x5c chain of h against the CA and that its leaf is
// a gateway certificate valid now.
func (a *Authenticator) issuer(h jose.Header) (*x509.Certificate, error) {
	chains, err := h.Certificates(x509.VerifyOptions{
		Roots: a.pool, CurrentTime: a.now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	leaf := chains[0][0]
	if name, ok := identity(leaf); !ok || name != Gateway {
		return nil, errors.New("not a gateway certificate")
	}
	return leaf, nil
}
