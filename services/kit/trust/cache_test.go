package trust

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/chemmy/chemmy/services/kit/auth"
)

// clock is a settable time for a Signer's or an Authenticator's now: t0
// (a whole second, within the test certificates' validity) plus d.
type clock struct{ t0, t time.Time }

func newClock() *clock {
	t0 := time.Now().Truncate(time.Second)
	return &clock{t0: t0, t: t0}
}

func (c *clock) now() time.Time      { return c.t }
func (c *clock) set(d time.Duration) { c.t = c.t0.Add(d) }

// claimsOf is token's claims, unverified.
func claimsOf(t *testing.T, token string) assertionClaims {
	t.Helper()
	tok, err := jwt.ParseSigned(token, assertionAlgs)
	if err != nil {
		t.Fatal(err)
	}
	var cl assertionClaims
	if err := tok.UnsafeClaimsWithoutVerification(&cl); err != nil {
		t.Fatal(err)
	}
	return cl
}

// mustAssert is s's assertion that c calls audience.
func mustAssert(t testing.TB, s *Signer, c auth.Caller, audience string) string {
	t.Helper()
	a, err := s.Assert(c, audience)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// refusedFor fails t unless err is a refusal with reason.
func refusedFor(t *testing.T, what string, err error, reason string) {
	t.Helper()
	if r, ok := err.(*auth.Refusal); !ok || r.Reason != reason {
		t.Fatalf("%s: %v, want a refusal %s", what, err, reason)
	}
}

var olga = auth.Caller{Subject: "olga", Role: auth.RolePlayer}

// TestAssertionReuse: the Signer hands out the same assertion for the same
// caller and audience for AssertionReuse after its iat, always with at
// least AssertionTTL - AssertionReuse of validity left, and a new one
// after that.
func TestAssertionReuse(t *testing.T) {
	_, m := devGateway(t)
	clk := newClock()
	s := NewSigner(m, clk.now)
	first := mustAssert(t, s, olga, Wallet)
	for _, d := range []time.Duration{0, time.Second, AssertionReuse - time.Nanosecond} {
		clk.set(d)
		a := mustAssert(t, s, olga, Wallet)
		if a != first {
			t.Fatalf("a new assertion %v after the first", d)
		}
		if left := claimsOf(t, a).Expiry.Time().Sub(clk.now()); left <= AssertionTTL-AssertionReuse {
			t.Fatalf("handed out %v after the first with %v left", d, left)
		}
	}
	for name, c := range map[string]auth.Caller{"another subject": {Subject: "ivan", Role: auth.RolePlayer}, "another role": {Subject: "olga", Role: auth.RoleCroupier}} {
		if a, err := s.Assert(c, Wallet); err != nil || a == first {
			t.Fatalf("%s: the first assertion reused (%v)", name, err)
		}
	}
	if a, err := s.Assert(olga, Shoe); err != nil || a == first {
		t.Fatalf("another audience: the first assertion reused (%v)", err)
	}
	clk.set(AssertionReuse)
	second := mustAssert(t, s, olga, Wallet)
	if second == first {
		t.Fatalf("the first assertion reused %v after its iat", AssertionReuse)
	}
	if cl := claimsOf(t, second); !cl.IssuedAt.Time().Equal(clk.now()) || !cl.Expiry.Time().Equal(clk.now().Add(AssertionTTL)) {
		t.Fatalf("the new assertion's iat %v, exp %v at %v", cl.IssuedAt.Time(), cl.Expiry.Time(), clk.now())
	}
	// A clock set back does not hand out an assertion from its future.
	clk.set(-time.Second)
	if a, err := s.Assert(olga, Wallet); err != nil || a == second {
		t.Fatalf("an assertion issued after now handed out (%v)", err)
	}
}

// TestAssertionAfterRotation: once the gateway's certificate rotates, the
// assertions reused are dropped and new ones are signed with the new key
// (and carry the new certificate), within the reuse window.
func TestAssertionAfterRotation(t *testing.T) {
	pki, m := devGateway(t)
	clk := newClock()
	s := NewSigner(m, clk.now)
	old := mustAssert(t, s, olga, Wallet)
	oldCert, err := m.pair.get()
	if err != nil {
		t.Fatal(err)
	}
	rotate(t, pki, m)
	clk.set(time.Second)
	fresh := mustAssert(t, s, olga, Wallet)
	if fresh == old {
		t.Fatal("the assertion signed with the old key was reused after rotation")
	}
	newCert, err := m.pair.get()
	if err != nil {
		t.Fatal(err)
	}
	if newCert == oldCert {
		t.Fatal("the rotation was not picked up")
	}
	tok, err := jwt.ParseSigned(fresh, assertionAlgs)
	if err != nil {
		t.Fatal(err)
	}
	var cl assertionClaims
	if err := tok.Claims(newCert.Leaf.PublicKey, &cl); err != nil {
		t.Fatalf("the new assertion does not verify with the new key: %v", err)
	}
	if err := tok.Claims(oldCert.Leaf.PublicKey, &cl); err == nil {
		t.Fatal("the new assertion verifies with the old key")
	}
	chains, err := tok.Headers[0].Certificates(x509.VerifyOptions{Roots: m.pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil || chains[0][0].SerialNumber.Cmp(newCert.Leaf.SerialNumber) != 0 {
		t.Fatalf("the new assertion's x5c is not the new certificate (%v)", err)
	}
	au := NewAuthenticator(m, Wallet, nil, clk.now)
	for _, a := range []string{old, fresh} {
		if c, err := au.verify(a); err != nil || c != olga {
			t.Fatalf("verify = %v, %v", c, err)
		}
	}
}

// TestVerifiedAssertionTime: a remembered verification is still held to
// the assertion's time: refused ASSERTION_EXPIRED past exp plus the leeway
// and ASSERTION_INVALID before nbf less the leeway, as without one.
func TestVerifiedAssertionTime(t *testing.T) {
	_, m := devGateway(t)
	clk := newClock()
	a := mustAssert(t, NewSigner(m, clk.now), olga, Wallet)
	au := NewAuthenticator(m, Wallet, nil, clk.now)
	accepted := func(d time.Duration) {
		t.Helper()
		clk.set(d)
		if c, err := au.verify(a); err != nil || c != olga {
			t.Fatalf("verify %v after iat = %v, %v", d, c, err)
		}
		if au.verified.Len() != 1 {
			t.Fatalf("%d verifications remembered, want 1", au.verified.Len())
		}
	}
	accepted(0)
	accepted(AssertionTTL + assertionLeeway)
	clk.set(AssertionTTL + assertionLeeway + time.Nanosecond)
	_, err := au.verify(a)
	refusedFor(t, "verify just past exp and the leeway", err, auth.ReasonAssertionExpired)
	_, err = au.verify(a)
	refusedFor(t, "verify again past exp and the leeway", err, auth.ReasonAssertionExpired)

	accepted(-assertionLeeway)
	clk.set(-assertionLeeway - time.Nanosecond)
	_, err = au.verify(a)
	refusedFor(t, "verify just before nbf less the leeway", err, auth.ReasonAssertionInvalid)
	if au.verified.Len() != 0 {
		t.Fatal("a refused assertion is still remembered")
	}
	accepted(time.Second) // a refusal is not remembered either
}

// TestVerifiedAssertionRemembered: an assertion that verified is not
// verified again while it is valid (shown by taking the CA away, which a
// running process never does: the pool is read once at start).
func TestVerifiedAssertionRemembered(t *testing.T) {
	_, m := devGateway(t)
	s := NewSigner(m, nil)
	a := mustAssert(t, s, olga, Wallet)
	au := NewAuthenticator(m, Wallet, nil, nil)
	if _, err := au.verify(a); err != nil {
		t.Fatal(err)
	}
	au.pool = x509.NewCertPool()
	if c, err := au.verify(a); err != nil || c != olga {
		t.Fatalf("a remembered assertion: %v, %v", c, err)
	}
	other := mustAssert(t, s, auth.Caller{Subject: "ivan", Role: auth.RolePlayer}, Wallet)
	_, err := au.verify(other)
	refusedFor(t, "a new assertion without the CA", err, auth.ReasonAssertionInvalid)
}

// TestVerifiedAssertionCertificateExpiry: a remembered verification ends
// when the gateway certificate it was signed with does, even before the
// assertion's exp.
func TestVerifiedAssertionCertificateExpiry(t *testing.T) {
	pki, m := devGateway(t)
	clk := newClock()
	if _, err := pki.Issue(Gateway, clk.t0.Add(AssertionTTL/2)); err != nil {
		t.Fatal(err)
	}
	short, err := Load(pki.Config(Gateway))
	if err != nil {
		t.Fatal(err)
	}
	a := mustAssert(t, NewSigner(short, clk.now), olga, Wallet)
	au := NewAuthenticator(m, Wallet, nil, clk.now)
	if _, err := au.verify(a); err != nil {
		t.Fatal(err)
	}
	clk.set(AssertionTTL/2 + time.Second)
	_, err = au.verify(a)
	refusedFor(t, "verify after the gateway certificate expired", err, auth.ReasonAssertionInvalid)
}

// TestVerifiedAssertionAudience: a verification remembered for this
// service is no answer for another audience.
func TestVerifiedAssertionAudience(t *testing.T) {
	_, m := devGateway(t)
	s := NewSigner(m, nil)
	forWallet := mustAssert(t, s, olga, Wallet)
	forShoe := mustAssert(t, s, olga, Shoe)
	au := NewAuthenticator(m, Wallet, nil, nil)
	if _, err := au.verify(forWallet); err != nil {
		t.Fatal(err)
	}
	_, err := au.verify(forShoe)
	refusedFor(t, "an assertion for shoe-svc at wallet-svc", err, auth.ReasonAssertionInvalid)
	_, err = NewAuthenticator(m, Shoe, nil, nil).verify(forWallet)
	refusedFor(t, "an assertion for wallet-svc at shoe-svc", err, auth.ReasonAssertionInvalid)
	// The remembered verification names its audience.
	au.Self = Shoe
	_, err = au.verify(forWallet)
	refusedFor(t, "a remembered assertion for wallet-svc once Self is shoe-svc", err, auth.ReasonAssertionInvalid)
}

// TestRefusalNotRemembered: a bad assertion is refused every time, and a
// good one after it passes.
func TestRefusalNotRemembered(t *testing.T) {
	_, m := devGateway(t)
	a := mustAssert(t, NewSigner(m, nil), olga, Wallet)
	forged := a[:len(a)-4] + "AAAA"
	if forged == a {
		forged = a[:len(a)-4] + "BBBB"
	}
	au := NewAuthenticator(m, Wallet, nil, nil)
	for range 2 {
		_, err := au.verify(forged)
		refusedFor(t, "a forged signature", err, auth.ReasonAssertionInvalid)
		if au.verified.Len() != 0 {
			t.Fatal("a refusal was remembered")
		}
	}
	if c, err := au.verify(a); err != nil || c != olga {
		t.Fatalf("verify = %v, %v", c, err)
	}
	_, err := au.verify(forged)
	refusedFor(t, "a forged signature after the good one", err, auth.ReasonAssertionInvalid)
}

// TestCachesBounded: filled past their size, the Signer and the
// Authenticator keep their size; entries past their time are dropped as
// new ones come.
func TestCachesBounded(t *testing.T) {
	_, m := devGateway(t)
	const size = 4
	clk := newClock()
	s := newSigner(m, clk.now, size)
	au := newAuthenticator(m, Wallet, nil, clk.now, size)
	var tokens []string
	for i := range 2 * size {
		a := mustAssert(t, s, auth.Caller{Subject: fmt.Sprint("punter-", i), Role: auth.RolePlayer}, Wallet)
		if _, err := au.verify(a); err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, a)
	}
	if s.signed.Len() != size || au.verified.Len() != size {
		t.Fatalf("%d assertions and %d verifications kept, want %d", s.signed.Len(), au.verified.Len(), size)
	}
	// An assertion no longer remembered verifies in full.
	if _, err := au.verify(tokens[0]); err != nil {
		t.Fatal(err)
	}
	// Past their time, the others go as a new one comes.
	clk.set(AssertionTTL + assertionLeeway + time.Second)
	a := mustAssert(t, s, olga, Wallet)
	if _, err := au.verify(a); err != nil {
		t.Fatal(err)
	}
	if s.signed.Len() != 1 || au.verified.Len() != 1 {
		t.Fatalf("%d assertions and %d verifications kept past their time, want 1", s.signed.Len(), au.verified.Len())
	}
}

// fromGateway is ctx as a backend sees a call over the gateway's verified
// mutual-TLS connection carrying assertion a.
func fromGateway(t testing.TB, m *Material, a string) context.Context {
	t.Helper()
	cert, err := m.pair.get()
	if err != nil {
		t.Fatal(err)
	}
	p := &peer.Peer{AuthInfo: credentials.TLSInfo{State: tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert.Leaf}}}}}
	return metadata.NewIncomingContext(peer.NewContext(context.Background(), p), metadata.Pairs(MDAssertion, a))
}

// TestAuthenticateChecksThePeerEveryCall: a remembered assertion is still
// refused on a connection that is not the gateway's.
func TestAuthenticateChecksThePeerEveryCall(t *testing.T) {
	pki, err := NewDevPKI(t.TempDir(), Gateway, Table)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := Load(pki.Config(Gateway))
	if err != nil {
		t.Fatal(err)
	}
	table, err := Load(pki.Config(Table))
	if err != nil {
		t.Fatal(err)
	}
	a := mustAssert(t, NewSigner(gw, nil), olga, Wallet)
	au := NewAuthenticator(gw, Wallet, []string{Table}, nil)
	if c, err := au.Authenticate(fromGateway(t, gw, a)); err != nil || c != olga {
		t.Fatalf("Authenticate from the gateway = %v, %v", c, err)
	}
	_, err = au.Authenticate(fromGateway(t, table, a))
	refusedFor(t, "the gateway's assertion from table-svc's connection", err, auth.ReasonPeerNotAllowed)
}

// BenchmarkAssert signs the same caller's assertion for one backend again
// and again: the gateway's cost per forwarded call.
func BenchmarkAssert(b *testing.B) {
	_, m := devGateway(b)
	s := NewSigner(m, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Assert(olga, Table); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticate authenticates the same forwarded call again and
// again: a backend's cost per call.
func BenchmarkAuthenticate(b *testing.B) {
	_, m := devGateway(b)
	a := mustAssert(b, NewSigner(m, nil), olga, Table)
	ctx := fromGateway(b, m, a)
	au := NewAuthenticator(m, Table, nil, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := au.Authenticate(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
