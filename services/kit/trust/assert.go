package trust

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
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
	"github.com/hashicorp/golang-lru/v2/simplelru"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/services/kit/auth"
)

// MDAssertion is the metadata key of the end caller's assertion: a
// compact JWS (JWT) that the gateway signs with its TLS key. Header: alg
// (ES256 for a P-256 key; ES384, RS256 or EdDSA for other keys) and x5c
// (the gateway's certificate). Claims: iss "spiffe://chemmy/gateway",
// sub (the caller's subject), chemmy_role (player, croupier, operator or
// auditor), aud (the target service's name, e.g. "wallet-svc"), iat, nbf
// and exp (AssertionTTL after iat); chemmy_session, the player's
// game-launch session id, when he called with a launch token (absent
// otherwise); chemmy_operator, the operator (tenant) the caller belongs
// to ("*" only for a deployment-wide auditor; absent when he has none).
const MDAssertion = "x-chemmy-assertion"

// AssertionTTL is how long an assertion is valid: a forwarded call starts
// within it (a stream is checked once, when it opens).
const AssertionTTL = 15 * time.Second

// AssertionReuse is how long a Signer hands out the same assertion again
// for the same subject, role and audience, counted from its iat (whole
// seconds): every assertion Assert returns has at least AssertionTTL -
// AssertionReuse (10 s) of validity left, so the call it is forwarded
// with starts well within it. An assertion is bound to its caller and
// audience, not to a request, so reusing it grants nothing new.
const AssertionReuse = 5 * time.Second

// assertionLeeway is the clock skew tolerated on nbf and exp.
const assertionLeeway = 5 * time.Second

// Cache bounds. A Signer keeps at most signedCap assertions (about 1 KiB
// each with the x5c certificate), an Authenticator at most verifiedCap
// verifications (about 150 bytes each); beyond that the least recently
// used goes, and an entry past its time is dropped when it is next looked
// up or reaches the least recently used end as another is added.
const (
	signedCap   = 8192
	verifiedCap = 16384
)

var assertionAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.RS256, jose.EdDSA}

type assertionClaims struct {
	jwt.Claims
	Role     string `json:"chemmy_role"`
	Session  string `json:"chemmy_session,omitempty"`
	Operator string `json:"chemmy_operator,omitempty"`
}

// Signer makes assertions with the gateway's certificate key. It reuses an
// assertion for AssertionReuse (see there), and signs anew once the
// certificate in use rotates.
type Signer struct {
	m   *Material
	now func() time.Time

	mu     sync.Mutex
	cert   *tls.Certificate
	signer jose.Signer
	signed *simplelru.LRU[signedKey, signedAssertion]
}

// signedKey is what an assertion is bound to.
type signedKey struct{ subject, role, session, operator, audience string }

// signedAssertion is an assertion handed out: its token, the certificate
// it was signed with and its iat.
type signedAssertion struct {
	token string
	cert  *tls.Certificate
	iat   time.Time
}

// fresh reports whether a may be handed out again at now with cert in use.
func (a signedAssertion) fresh(now time.Time, cert *tls.Certificate) bool {
	return a.cert == cert && !now.Before(a.iat) && now.Sub(a.iat) < AssertionReuse
}

// NewSigner signs with m's (reloading) key; now is the clock (nil:
// time.Now).
func NewSigner(m *Material, now func() time.Time) *Signer {
	return newSigner(m, now, signedCap)
}

// newSigner is NewSigner keeping at most size assertions.
func newSigner(m *Material, now func() time.Time, size int) *Signer {
	if now == nil {
		now = time.Now
	}
	return &Signer{m: m, now: now, signed: newLRU[signedKey, signedAssertion](size)}
}

// newLRU is a cache of at most size (at least 1) entries.
func newLRU[K comparable, V any](size int) *simplelru.LRU[K, V] {
	c, err := simplelru.NewLRU[K, V](size, nil)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return c
}

// Assert returns a signed assertion that c calls service audience: the
// one handed out for the same c and audience less than AssertionReuse ago
// with the certificate still in use, or else a new one.
func (s *Signer) Assert(c auth.Caller, audience string) (string, error) {
	sig, cert, err := s.current()
	if err != nil {
		return "", err
	}
	// iat and exp are whole seconds: reuse is counted from the iat signed.
	now := s.now()
	iat := time.Unix(now.Unix(), 0)
	k := signedKey{subject: c.Subject, role: string(c.Role), session: c.Session, operator: c.Operator, audience: audience}
	s.mu.Lock()
	prev, ok := s.signed.Get(k)
	s.mu.Unlock()
	if ok && prev.fresh(now, cert) {
		return prev.token, nil
	}
	cl := assertionClaims{
		Claims: jwt.Claims{
			Issuer: IdentityURI(Gateway), Subject: c.Subject, Audience: jwt.Audience{audience},
			IssuedAt: jwt.NewNumericDate(iat), NotBefore: jwt.NewNumericDate(iat),
			Expiry: jwt.NewNumericDate(iat.Add(AssertionTTL)),
		},
		Role: string(c.Role), Session: c.Session, Operator: c.Operator,
	}
	token, err := jwt.Signed(sig).Claims(cl).Serialize()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signed.Add(k, signedAssertion{token: token, cert: cert, iat: iat})
	pruneOldest(s.signed, func(a signedAssertion) bool { return !a.fresh(now, s.cert) })
	return token, nil
}

// pruneOldest removes c's least recently used entries while stale says
// they are past their time.
func pruneOldest[K comparable, V any](c *simplelru.LRU[K, V], stale func(V) bool) {
	for {
		k, v, ok := c.GetOldest()
		if !ok || !stale(v) {
			return
		}
		c.Remove(k)
	}
}

// current is a JOSE signer for the keypair in use and its certificate,
// rebuilt after rotation (which drops the assertions signed before).
func (s *Signer) current() (jose.Signer, *tls.Certificate, error) {
	cert, err := s.m.pair.get()
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cert == s.cert {
		return s.signer, cert, nil
	}
	key, ok := cert.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New("trust: the certificate's key cannot sign")
	}
	alg, err := algorithm(key.Public())
	if err != nil {
		return nil, nil, err
	}
	chain := make([]string, len(cert.Certificate))
	for i, der := range cert.Certificate {
		chain[i] = base64.StdEncoding.EncodeToString(der)
	}
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("x5c", chain)
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		return nil, nil, err
	}
	s.cert, s.signer = cert, sig
	s.signed.Purge()
	return sig, cert, nil
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
//     the caller is the assertion's subject, role, launch session and
//     operator;
//   - a call without one is the calling service itself, with the role
//     "service", if that service is in Services; otherwise it is refused.
//
// Identity metadata (x-chemmy-subject, x-chemmy-role, x-chemmy-session,
// x-chemmy-operator) is never read.
//
// The connection is checked on every call. An assertion that verified is
// remembered (by its SHA-256, at most verifiedCap of them) with its caller,
// audience and the time it is valid in: while that time lasts, the same
// assertion on a later call takes the caller without verifying the
// signature and x5c chain again; outside it, it is verified in full, and
// refused as before (ASSERTION_EXPIRED past exp plus the leeway). A
// refusal is never remembered. The CA pool is read once at start, so a
// remembered verification cannot outlive the pool it was made against.
type Authenticator struct {
	// Self is this service's name: the audience its assertions must name.
	Self string
	// Services may call with the role "service" (e.g. table-svc for
	// wallet-svc); the gateway never may, except the methods of
	// GatewayMethods.
	Services []string
	// GatewayMethods are the full method names ("/pkg.Service/Method")
	// the gateway may call on its own behalf, without an assertion, with
	// the role "service" (wallet-svc's AuthenticateLaunchSession: the
	// gateway asks it before it knows the caller).
	GatewayMethods []string

	pool *x509.CertPool
	now  func() time.Time

	mu       sync.Mutex
	verified *simplelru.LRU[[sha256.Size]byte, verification]
}

// verification is an assertion that verified: its caller, the audience it
// verified for and when it is valid (nbf, iat and exp with the leeway,
// within the x5c chain's certificates' validity).
type verification struct {
	caller      auth.Caller
	audience    string
	from, until time.Time
}

// NewAuthenticator checks calls to service self; services may call with
// the role "service". now is the clock (nil: time.Now).
func NewAuthenticator(m *Material, self string, services []string, now func() time.Time) *Authenticator {
	return newAuthenticator(m, self, services, now, verifiedCap)
}

// newAuthenticator is NewAuthenticator remembering at most size
// verifications.
func newAuthenticator(m *Material, self string, services []string, now func() time.Time, size int) *Authenticator {
	if now == nil {
		now = time.Now
	}
	return &Authenticator{Self: self, Services: services, pool: m.pool, now: now,
		verified: newLRU[[sha256.Size]byte, verification](size)}
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
		if method, ok := grpc.Method(ctx); ok && peerName == Gateway && slices.Contains(a.GatewayMethods, method) {
			return auth.Caller{Subject: Gateway, Role: auth.RoleService}, nil
		}
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

// verify is the caller token asserts: remembered if it verified before
// and is within its time now, otherwise verified in full (verifyFull).
func (a *Authenticator) verify(token string) (auth.Caller, error) {
	k := sha256.Sum256([]byte(token))
	now := a.now()
	a.mu.Lock()
	v, ok := a.verified.Get(k)
	if ok && (v.audience != a.Self || now.Before(v.from) || now.After(v.until)) {
		a.verified.Remove(k)
		ok = false
	}
	a.mu.Unlock()
	if ok {
		return v.caller, nil
	}
	v, err := a.verifyFull(token, now)
	if err != nil {
		return auth.Caller{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.verified.Add(k, v)
	pruneOldest(a.verified, func(v verification) bool { return now.After(v.until) })
	return v.caller, nil
}

// verifyFull checks token's signature, x5c chain, issuer, audience, time,
// subject and role at now.
func (a *Authenticator) verifyFull(token string, now time.Time) (verification, error) {
	bad := func(format string, args ...any) (verification, error) {
		return verification{}, auth.Refuse(auth.ReasonAssertionInvalid, format, args...)
	}
	t, err := jwt.ParseSigned(token, assertionAlgs)
	if err != nil || len(t.Headers) != 1 {
		return bad("the caller assertion is not a signed JWT")
	}
	chain, err := a.issuer(t.Headers[0], now)
	if err != nil {
		return bad("the caller assertion's certificate: %v", err)
	}
	var cl assertionClaims
	if err := t.Claims(chain[0].PublicKey, &cl); err != nil {
		return bad("the caller assertion's signature does not verify")
	}
	err = cl.ValidateWithLeeway(jwt.Expected{Issuer: IdentityURI(Gateway), AnyAudience: jwt.Audience{a.Self}, Time: now}, assertionLeeway)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return verification{}, auth.Refuse(auth.ReasonAssertionExpired, "the caller assertion expired at %s", cl.Expiry.Time().UTC().Format(time.RFC3339))
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
	if cl.Session != "" && r != auth.RolePlayer {
		return bad("the caller assertion names a launch session for role %q", cl.Role)
	}
	if cl.Operator == auth.AllOperators && r != auth.RoleAuditor {
		return bad("the caller assertion names every operator for role %q", cl.Role)
	}
	v := verification{
		caller: auth.Caller{Subject: cl.Subject, Role: r, Session: cl.Session, Operator: cl.Operator}, audience: a.Self,
		until: cl.Expiry.Time().Add(assertionLeeway),
	}
	// The times ValidateWithLeeway and the chain's verification accept.
	for _, d := range []*jwt.NumericDate{cl.NotBefore, cl.IssuedAt} {
		if d != nil && d.Time().Add(-assertionLeeway).After(v.from) {
			v.from = d.Time().Add(-assertionLeeway)
		}
	}
	for _, c := range chain {
		if c.NotBefore.After(v.from) {
			v.from = c.NotBefore
		}
		if c.NotAfter.Before(v.until) {
			v.until = c.NotAfter
		}
	}
	return v, nil
}

// issuer verifies the x5c chain of h against the CA at now and that its
// leaf is a gateway certificate; it returns the chain, leaf first.
func (a *Authenticator) issuer(h jose.Header, now time.Time) ([]*x509.Certificate, error) {
	chains, err := h.Certificates(x509.VerifyOptions{
		Roots: a.pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	if name, ok := identity(chains[0][0]); !ok || name != Gateway {
		return nil, errors.New("not a gateway certificate")
	}
	return chains[0], nil
}
