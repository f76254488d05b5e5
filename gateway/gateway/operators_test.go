package gateway

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// testIdP is an operator's identity provider: a key and its JWKS.
type testIdP struct {
	issuer string
	key    *ecdsa.PrivateKey
	jwks   []byte
}

func newTestIdP(t *testing.T, issuer string) *testIdP {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: issuer + "-k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	return &testIdP{issuer: issuer, key: k, jwks: set}
}

// token signs a JWT of sub with role, the audience aud and the issuer
// iss (the IdP's own when empty); operator, when not empty, is its
// chemmy_operator claim.
func (p *testIdP) token(t *testing.T, iss, aud, sub, role, operator string, now time.Time) string {
	t.Helper()
	if iss == "" {
		iss = p.issuer
	}
	cl := map[string]any{"iss": iss, "aud": aud, "sub": sub, "chemmy_role": role, "exp": now.Add(time.Hour).Unix()}
	if operator != "" {
		cl[ClaimOperator] = operator
	}
	return signJWT(t, p.issuer+"-k1", p.key, cl)
}

// serve publishes the IdP's JWKS on a loopback http server and returns
// its URL.
func (p *testIdP) serve(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(p.jwks) }))
	t.Cleanup(srv.Close)
	return srv.URL + "/jwks.json"
}

// twoOperators is an operators file: casino-a, whose JWKS is served over
// loopback http and whose JWTs carry the audience aud-a, and casino-b,
// whose JWKS is a file and whose audience is the gateway's.
func twoOperators(t *testing.T, a, b *testIdP) string {
	t.Helper()
	return fmt.Sprintf(`operators:
  - id: casino-a
    jwt: {issuer: %q, jwks_url: %q, audience: aud-a}
  - id: casino-b
    jwt: {issuer: %q, jwks_file: %q}
    currencies: [EUR]
`, a.issuer, a.serve(t), b.issuer, writeFile(t, string(b.jwks)))
}

// TestOperatorsFileJWTs: with an operators file, a JWT's iss names its
// operator: each operator's JWT (signed by its key, its audience: its
// entry's or the gateway's) is its operator's caller; a chemmy_operator
// claim naming the issuer's operator is accepted, naming another one is
// refused TOKEN_INVALID; an issuer no operator lists, a JWT of one
// issuer signed by another's key, and one of the other operator's
// audience are refused TOKEN_INVALID.
func TestOperatorsFileJWTs(t *testing.T) {
	a, b := newTestIdP(t, "https://idp.casino-a.example/"), newTestIdP(t, "casino-b-idp")
	now := time.Now()
	id, err := newIdentities(Config{OperatorsFile: writeFile(t, twoOperators(t, a, b)), JWTAudience: "aud"},
		slog.New(slog.DiscardHandler), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		token string
		want  auth.Caller
	}{
		"a's player":                   {a.token(t, "", "aud-a", "alice", "player", "", now), auth.Caller{Subject: "alice", Role: auth.RolePlayer, Operator: "casino-a"}},
		"a's croupier naming casino-a": {a.token(t, "", "aud-a", "cora", "croupier", "casino-a", now), auth.Caller{Subject: "cora", Role: auth.RoleCroupier, Operator: "casino-a"}},
		"b's player":                   {b.token(t, "", "aud", "alice", "player", "", now), auth.Caller{Subject: "alice", Role: auth.RolePlayer, Operator: "casino-b"}},
		"b's operator naming casino-b": {b.token(t, "", "aud", "olga", "operator", "casino-b", now), auth.Caller{Subject: "olga", Role: auth.RoleOperator, Operator: "casino-b"}},
	} {
		if got, err := id.lookup(c.token); err != nil || got != c.want {
			t.Errorf("%s: %v, %v, want %v", name, got, err, c.want)
		}
	}
	for name, c := range map[string]struct{ token, about string }{
		"a's JWT naming casino-b":    {a.token(t, "", "aud-a", "alice", "player", "casino-b", now), ClaimOperator},
		"b's JWT naming casino-a":    {b.token(t, "", "aud", "alice", "player", "casino-a", now), ClaimOperator},
		"a's JWT naming every one":   {a.token(t, "", "aud-a", "alice", "auditor", auth.AllOperators, now), ClaimOperator},
		"an unknown issuer":          {a.token(t, "https://evil.example/", "aud-a", "alice", "player", "", now), "is no operator's"},
		"a's issuer, b's key":        {b.token(t, a.issuer, "aud-a", "alice", "player", "", now), "key"},
		"a's JWT of the default aud": {a.token(t, "", "aud", "alice", "player", "", now), "aud-a"},
		"b's JWT of a's aud":         {b.token(t, "", "aud-a", "alice", "player", "", now), `"aud"`},
	} {
		_, err := id.lookup(c.token)
		if status.Code(err) != codes.Unauthenticated || errs.Reason(err) != ReasonTokenInvalid || !strings.Contains(status.Convert(err).Message(), c.about) {
			t.Errorf("%s: %v, want UNAUTHENTICATED %s about %s", name, err, ReasonTokenInvalid, c.about)
		}
	}
}

// TestOperatorsFileReload: an operator added to the file works at the
// next reload, without restart; a bad file is refused at reload (logged,
// counted in chemmy_gateway_reload_errors_total{what="operators"}) and the
// last good one kept; an operator removed is refused at the next reload.
func TestOperatorsFileReload(t *testing.T) {
	a, b, c := newTestIdP(t, "iss-a"), newTestIdP(t, "iss-b"), newTestIdP(t, "iss-c")
	now := time.Now()
	file := writeFile(t, twoOperators(t, a, b))
	var logs syncBuffer
	id, err := newIdentities(Config{OperatorsFile: file, JWTAudience: "aud"},
		slog.New(slog.NewTextHandler(&logs, nil)), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ofC := c.token(t, "", "aud", "carl", "player", "", now)
	if _, err := id.lookup(ofC); errs.Reason(err) != ReasonTokenInvalid {
		t.Fatalf("casino-c's JWT before it is listed: %v", err)
	}
	withC := twoOperators(t, a, b) + fmt.Sprintf("  - id: casino-c\n    jwt: {issuer: %q, jwks_url: %q}\n", c.issuer, c.serve(t))
	write(withC)
	id.reload(t.Context())
	want := auth.Caller{Subject: "carl", Role: auth.RolePlayer, Operator: "casino-c"}
	if got, err := id.lookup(ofC); err != nil || got != want {
		t.Fatalf("casino-c's JWT after the reload: %v, %v, want %v", got, err, want)
	}

	write(withC + "  - id: casino-a\n") // casino-a listed twice
	id.reload(t.Context())
	if got, err := id.lookup(ofC); err != nil || got != want {
		t.Fatalf("casino-c's JWT after a bad file: %v, %v, want %v", got, err, want)
	}
	if got, err := id.lookup(a.token(t, "", "aud-a", "alice", "player", "", now)); err != nil || got.Operator != "casino-a" {
		t.Fatalf("casino-a's JWT after a bad file: %v, %v", got, err)
	}
	if n := testutil.ToFloat64(id.reloadErrors.WithLabelValues("operators")); n != 1 {
		t.Fatalf("reload errors of the operators file: %v, want 1", n)
	}
	if !strings.Contains(logs.String(), "keeping the last good ones") || !strings.Contains(logs.String(), `listed twice`) {
		t.Fatalf("the bad file is not logged: %s", logs.String())
	}

	write(twoOperators(t, a, b)) // casino-c removed
	id.reload(t.Context())
	if _, err := id.lookup(ofC); errs.Reason(err) != ReasonTokenInvalid {
		t.Fatalf("casino-c's JWT after it was removed: %v", err)
	}
	if !strings.Contains(logs.String(), "identities reloaded after an error") {
		t.Fatalf("the recovery is not logged: %s", logs.String())
	}
}

// TestOperatorsFileNewJWKSUnreadable: an operator added whose JWKS cannot
// be read yet is taken (the others keep working), its JWTs refused
// TOKEN_INVALID and the failure counted (what="jwks") until a reload
// reads its keys; a JWKS that fails later keeps the keys read last.
func TestOperatorsFileNewJWKSUnreadable(t *testing.T) {
	a, b := newTestIdP(t, "iss-a"), newTestIdP(t, "iss-b")
	now := time.Now()
	file := writeFile(t, "operators:\n  - id: casino-a\n    jwt: {issuer: iss-a, jwks_file: "+writeFile(t, string(a.jwks))+"}\n")
	id, err := newIdentities(Config{OperatorsFile: file, JWTAudience: "aud"}, slog.New(slog.DiscardHandler), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	jwksB := writeFile(t, "not yet")
	if err := os.WriteFile(file, []byte("operators:\n  - id: casino-a\n    jwt: {issuer: iss-a, jwks_file: "+writeFile(t, string(a.jwks))+"}\n"+
		"  - id: casino-b\n    jwt: {issuer: iss-b, jwks_file: "+jwksB+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id.reload(t.Context())
	ofB := b.token(t, "", "aud", "bea", "player", "", now)
	if _, err := id.lookup(ofB); errs.Reason(err) != ReasonTokenInvalid {
		t.Fatalf("casino-b's JWT, its keys unread: %v", err)
	}
	if got, err := id.lookup(a.token(t, "", "aud", "alice", "player", "", now)); err != nil || got.Operator != "casino-a" {
		t.Fatalf("casino-a's JWT: %v, %v", got, err)
	}
	if n := testutil.ToFloat64(id.reloadErrors.WithLabelValues("jwks")); n != 1 {
		t.Fatalf("jwks reload errors: %v, want 1", n)
	}
	if err := os.WriteFile(jwksB, b.jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	id.reload(t.Context())
	if got, err := id.lookup(ofB); err != nil || got.Operator != "casino-b" {
		t.Fatalf("casino-b's JWT once its keys are read: %v, %v", got, err)
	}
	// Its JWKS unreadable again: the keys read last are kept.
	if err := os.WriteFile(jwksB, []byte("broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	id.reload(t.Context())
	if got, err := id.lookup(ofB); err != nil || got.Operator != "casino-b" {
		t.Fatalf("casino-b's JWT after its JWKS failed to load: %v, %v", got, err)
	}
	if n := testutil.ToFloat64(id.reloadErrors.WithLabelValues("jwks")); n != 2 {
		t.Fatalf("jwks reload errors: %v, want 2", n)
	}
}

// TestOperatorsFileRefusedAtStart: the gateway does not start with both
// an operators file and -jwks or -jwt-issuer, with a bad operators file,
// with an operator whose JWTs have no audience (neither its entry's nor
// -jwt-audience), a JWKS over plain http to another host, or a JWKS that
// cannot be read; each error says which.
func TestOperatorsFileRefusedAtStart(t *testing.T) {
	a := newTestIdP(t, "iss-a")
	good := writeFile(t, "operators:\n  - id: casino-a\n    jwt: {issuer: iss-a, jwks_file: "+writeFile(t, string(a.jwks))+"}\n")
	for name, c := range map[string]struct {
		cfg  Config
		want string
	}{
		"with -jwks":       {Config{OperatorsFile: good, JWTAudience: "aud", JWKS: writeFile(t, string(a.jwks)), JWTIssuer: "iss"}, "-operators and -jwks"},
		"with -jwt-issuer": {Config{OperatorsFile: good, JWTAudience: "aud", JWTIssuer: "iss"}, "-operators and -jwks"},
		"no audience":      {Config{OperatorsFile: good}, `operator "casino-a": jwt: no audience`},
		"bad file":         {Config{OperatorsFile: writeFile(t, "operators:\n  - id: casino-a\n    colour: red\n"), JWTAudience: "aud"}, `unknown field "colour"`},
		"plain http":       {Config{OperatorsFile: writeFile(t, "operators:\n  - id: casino-a\n    jwt: {issuer: i, jwks_url: 'http://192.0.2.10/jwks.json'}\n"), JWTAudience: "aud"}, "plain http"},
		"jwks unreadable":  {Config{OperatorsFile: writeFile(t, "operators:\n  - id: casino-a\n    jwt: {issuer: i, jwks_file: /nonexistent/jwks.json}\n"), JWTAudience: "aud"}, `operator "casino-a": jwks /nonexistent/jwks.json`},
	} {
		if _, err := newIdentities(c.cfg, slog.New(slog.DiscardHandler), time.Now); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}

// TestGetCallerOfOperatorJWTs: through the gateway, GetCaller answers the
// operator of each operator's JWT.
func TestGetCallerOfOperatorJWTs(t *testing.T) {
	a, b := newTestIdP(t, "iss-a"), newTestIdP(t, "iss-b")
	file := writeFile(t, twoOperators(t, a, b))
	e := startEnvConfig(t, func(c *Config) { c.OperatorsFile, c.JWTAudience = file, "aud" })
	gc := gatewayv1.NewGatewayServiceClient(e.conn)
	now := time.Now()
	for _, c := range []struct{ token, operator string }{
		{a.token(t, "", "aud-a", "alice", "player", "", now), "casino-a"},
		{b.token(t, "", "aud", "alice", "player", "", now), "casino-b"},
	} {
		resp, err := gc.GetCaller(e.as(c.token), &gatewayv1.GetCallerRequest{})
		if err != nil || resp.GetOperatorId() != c.operator || resp.GetSubject() != "alice" {
			t.Errorf("GetCaller: %v, %v, want alice of %s", resp, err, c.operator)
		}
	}
	_, err := gc.GetCaller(e.as(a.token(t, "", "aud-a", "alice", "player", "casino-b", now)), &gatewayv1.GetCallerRequest{})
	if errs.Reason(err) != ReasonTokenInvalid {
		t.Errorf("casino-a's JWT naming casino-b: %v, want %s", err, ReasonTokenInvalid)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
