package trust

import (
	"context"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/services/kit/auth"
)

// devGateway makes a throw-away CA and loads its gateway certificate.
func devGateway(t testing.TB) (*DevPKI, *Material) {
	t.Helper()
	pki, err := NewDevPKI(t.TempDir(), Gateway)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(pki.Config(Gateway))
	if err != nil {
		t.Fatal(err)
	}
	return pki, m
}

// rotate issues the gateway a new certificate and key and makes m see
// them on its next read.
func rotate(t testing.TB, pki *DevPKI, m *Material) {
	t.Helper()
	if _, err := pki.Issue(Gateway, time.Now().Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Make the change visible to the modification-time check whatever the
	// file system's time resolution, and skip the once-a-second throttle.
	later := time.Now().Add(time.Minute)
	for _, f := range []string{pki.Config(Gateway).CertFile, pki.Config(Gateway).KeyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	m.pair.mu.Lock()
	m.pair.checked = time.Time{}
	m.pair.mu.Unlock()
}

func TestCertificateRotationIsPickedUp(t *testing.T) {
	pki, m := devGateway(t)
	first, err := m.pair.get()
	if err != nil {
		t.Fatal(err)
	}
	rotate(t, pki, m)
	second, err := m.pair.get()
	if err != nil {
		t.Fatal(err)
	}
	if first.Leaf.SerialNumber.Cmp(second.Leaf.SerialNumber) == 0 {
		t.Fatal("the rotated certificate was not loaded")
	}
	if name, err := m.Name(); err != nil || name != Gateway {
		t.Fatalf("Name = %q, %v", name, err)
	}
}

func TestConfigCheck(t *testing.T) {
	if err := (Config{}).Check(); err == nil {
		t.Error("an empty Config passed: neither TLS files nor Insecure")
	}
	if err := (Config{Insecure: true}).Check(); err != nil {
		t.Error(err)
	}
	if m, err := Load(Config{Insecure: true}); m != nil || err != nil {
		t.Errorf("insecure Load = %v, %v", m, err)
	}
	if _, err := Load(Config{CertFile: "a", KeyFile: "b", CAFile: "/nonexistent"}); err == nil {
		t.Error("Load of missing files passed")
	}
}

// TestAssertionOutsidePeer: an assertion is verified only on a connection
// whose certificate the TLS layer verified; without one (e.g. a context
// not from a TLS connection) the call is refused before the assertion is
// read.
func TestAssertionOutsidePeer(t *testing.T) {
	_, m := devGateway(t)
	a, err := NewSigner(m, nil).Assert(auth.Caller{Subject: "olga", Role: auth.RoleOperator}, Wallet)
	if err != nil {
		t.Fatal(err)
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MDAssertion, a))
	_, err = NewAuthenticator(m, Wallet, []string{Table}, nil).Authenticate(ctx)
	if r, ok := err.(*auth.Refusal); !ok || r.Reason != auth.ReasonUnauthenticated {
		t.Fatalf("Authenticate without a peer = %v", err)
	}
	// The assertion itself verifies for its audience, and only for it.
	au := NewAuthenticator(m, Wallet, nil, nil)
	if c, err := au.verify(a); err != nil || c.Subject != "olga" || c.Role != auth.RoleOperator {
		t.Fatalf("verify = %v, %v", c, err)
	}
	if _, err := NewAuthenticator(m, Shoe, nil, nil).verify(a); err == nil {
		t.Fatal("an assertion for wallet-svc verified at shoe-svc")
	}
	late := NewAuthenticator(m, Wallet, nil, func() time.Time { return time.Now().Add(AssertionTTL + time.Minute) })
	if _, err := late.verify(a); err == nil || err.(*auth.Refusal).Reason != auth.ReasonAssertionExpired {
		t.Fatalf("verify after expiry = %v", err)
	}
}

// TestAssertionCarriesTheLaunchSession: a player's game-launch session
// travels in the assertion (chemmy_session), and the same player with
// another session (or none) gets another assertion.
func TestAssertionCarriesTheLaunchSession(t *testing.T) {
	_, m := devGateway(t)
	sig, au := NewSigner(m, nil), NewAuthenticator(m, Wallet, nil, nil)
	bob := auth.Caller{Subject: "bob", Role: auth.RolePlayer, Session: "ls-1"}
	a, err := sig.Assert(bob, Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := au.verify(a); err != nil || c != bob {
		t.Fatalf("verify = %v, %v", c, err)
	}
	plain, err := sig.Assert(auth.Caller{Subject: "bob", Role: auth.RolePlayer}, Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if plain == a {
		t.Fatal("the assertion of bob in a session was reused without it")
	}
	if c, err := au.verify(plain); err != nil || c.Session != "" {
		t.Fatalf("verify without a session = %v, %v", c, err)
	}
	// Only a player has a session.
	op, err := sig.Assert(auth.Caller{Subject: "olga", Role: auth.RoleOperator, Session: "ls-2"}, Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := au.verify(op); err == nil || err.(*auth.Refusal).Reason != auth.ReasonAssertionInvalid {
		t.Fatalf("an operator's assertion with a session: %v", err)
	}
}

// TestAssertionCarriesTheOperator: the caller's operator travels in the
// assertion (chemmy_operator), the same caller of another operator gets
// another assertion, and only an auditor may belong to every operator.
func TestAssertionCarriesTheOperator(t *testing.T) {
	_, m := devGateway(t)
	sig, au := NewSigner(m, nil), NewAuthenticator(m, Wallet, nil, nil)
	olgaA := auth.Caller{Subject: "olga", Role: auth.RoleOperator, Operator: "casino-a"}
	a, err := sig.Assert(olgaA, Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := au.verify(a); err != nil || c != olgaA {
		t.Fatalf("verify = %v, %v", c, err)
	}
	olgaB := olgaA
	olgaB.Operator = "casino-b"
	b, err := sig.Assert(olgaB, Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if b == a {
		t.Fatal("the assertion of olga of casino-a was reused for casino-b")
	}
	if c, err := au.verify(b); err != nil || c != olgaB {
		t.Fatalf("verify of another operator = %v, %v", c, err)
	}
	// No operator: no claim at all.
	none, err := sig.Assert(auth.Caller{Subject: "olga", Role: auth.RoleOperator}, Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := au.verify(none); err != nil || c.Operator != "" {
		t.Fatalf("verify without an operator = %v, %v", c, err)
	}
	// A deployment-wide auditor, and no one else, belongs to every operator.
	audrey := auth.Caller{Subject: "audrey", Role: auth.RoleAuditor, Operator: auth.AllOperators}
	if c, err := au.verify(mustAssert(t, sig, audrey, Wallet)); err != nil || c != audrey {
		t.Fatalf("verify of an auditor of every operator = %v, %v", c, err)
	}
	all, err := sig.Assert(auth.Caller{Subject: "olga", Role: auth.RoleOperator, Operator: auth.AllOperators}, Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := au.verify(all); err == nil || err.(*auth.Refusal).Reason != auth.ReasonAssertionInvalid {
		t.Fatalf("an operator's assertion for every operator: %v", err)
	}
}

// TestForgedOperatorMetadataIgnored: with mutual TLS the operator is the
// assertion's; an x-chemmy-operator (or other identity) metadata on the
// call is never read.
func TestForgedOperatorMetadataIgnored(t *testing.T) {
	_, m := devGateway(t)
	bob := auth.Caller{Subject: "bob", Role: auth.RolePlayer, Operator: "casino-a"}
	a := mustAssert(t, NewSigner(m, nil), bob, Wallet)
	ctx := fromGateway(t, m, a)
	md, _ := metadata.FromIncomingContext(ctx)
	md = md.Copy()
	md.Set(auth.MDOperator, "casino-b")
	md.Set(auth.MDSubject, "mallory")
	ctx = metadata.NewIncomingContext(ctx, md)
	c, err := NewAuthenticator(m, Wallet, nil, nil).Authenticate(ctx)
	if err != nil || c != bob {
		t.Fatalf("Authenticate = %v, %v, want %v", c, err, bob)
	}
	// Without an assertion, the gateway's connection gains nothing by it.
	md.Delete(MDAssertion)
	_, err = NewAuthenticator(m, Wallet, nil, nil).Authenticate(metadata.NewIncomingContext(ctx, md))
	if r, ok := err.(*auth.Refusal); !ok || r.Reason != auth.ReasonPeerNotAllowed {
		t.Fatalf("identity metadata without an assertion: %v", err)
	}
}
