package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestJWKSFromURL: the operator's JWKS is fetched from an http URL (a
// loopback server here) and fetched again on reload, so a new key works
// without a restart and a withdrawn one fails.
func TestJWKSFromURL(t *testing.T) {
	k1, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var current atomic.Pointer[jose.JSONWebKeySet]
	publish := func(kid string, k *ecdsa.PrivateKey) {
		current.Store(&jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"}}})
	}
	publish("k1", k1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(current.Load())
	}))
	defer srv.Close()

	now := time.Now()
	id, err := newIdentities(Config{JWKS: srv.URL, JWTIssuer: "iss", JWTAudience: "aud"}, slog.New(slog.DiscardHandler), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	sign := func(kid string, k *ecdsa.PrivateKey) string {
		return signJWT(t, kid, k, map[string]any{"iss": "iss", "aud": "aud", "sub": "u1", "chemmy_role": "auditor",
			"exp": now.Add(time.Hour).Unix()})
	}
	c, err := id.lookup(sign("k1", k1))
	if err != nil || c != (auth.Caller{Subject: "u1", Role: auth.RoleAuditor, Operator: DefaultOperatorID}) {
		t.Fatalf("k1: %v, %v", c, err)
	}
	publish("k2", k2)
	id.reload(t.Context())
	if _, err := id.lookup(sign("k2", k2)); err != nil {
		t.Fatalf("k2 after reload: %v", err)
	}
	_, err = id.lookup(sign("k1", k1))
	if errs.Reason(err) != ReasonTokenInvalid {
		t.Fatalf("k1 after it was withdrawn: %v", err)
	}
	// A JWKS server that fails keeps the last good set.
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	id.reload(t.Context())
	if _, err := id.lookup(sign("k2", k2)); err != nil {
		t.Fatalf("after a failed reload: %v", err)
	}
	if _, err := id.lookup("not-a-token"); errs.Reason(err) != ReasonTokenUnknown {
		t.Fatalf("an unknown token: %v", err)
	}
}

// TestFailedAuthenticationIsRateLimited: bad tokens from one address are
// refused RATE_LIMITED once the address's bucket is empty, so tokens
// cannot be guessed at speed; a good token still works.
func TestFailedAuthenticationIsRateLimited(t *testing.T) {
	e := startEnvWith(t, LimitConfig{Rate: 1, Burst: 5})
	gc := gatewayv1.NewGatewayServiceClient(e.conn)
	var last error
	for i := 0; i < 10; i++ {
		_, last = gc.GetCaller(e.as("guess-"+strconv.Itoa(i)), &gatewayv1.GetCallerRequest{})
	}
	if errs.Reason(last) != ReasonRateLimited {
		t.Fatalf("the tenth bad token: %v, want RATE_LIMITED", last)
	}
	if _, err := gc.GetCaller(e.as("tok-alice"), &gatewayv1.GetCallerRequest{}); err != nil {
		t.Fatalf("a good token after the guesses: %v", err)
	}
}

// signJWT signs claims with k, naming kid.
func signJWT(t *testing.T, kid string, k *ecdsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, (&jose.SignerOptions{}).WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestJWTNotYetValid: an operator JWT whose nbf is ahead of the clock
// (beyond the 30 s of skew tolerated) is refused UNAUTHENTICATED
// TOKEN_INVALID saying so; within the skew it is accepted, and once its
// nbf has come it works.
func TestJWTNotYetValid(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	set, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	id, err := newIdentities(Config{JWKS: writeFile(t, string(set)), JWTIssuer: "iss", JWTAudience: "aud"}, slog.New(slog.DiscardHandler), clock)
	if err != nil {
		t.Fatal(err)
	}
	token := func(nbf time.Time) string {
		return signJWT(t, "k1", k, map[string]any{"iss": "iss", "aud": "aud", "sub": "erin", "chemmy_role": "player",
			"nbf": nbf.Unix(), "exp": nbf.Add(time.Hour).Unix()})
	}
	later := token(now.Add(10 * time.Minute))
	_, err = id.lookup(later)
	if status.Code(err) != codes.Unauthenticated || errs.Reason(err) != ReasonTokenInvalid || !strings.Contains(status.Convert(err).Message(), "nbf") {
		t.Fatalf("nbf in 10 minutes: %v, want UNAUTHENTICATED %s about nbf", err, ReasonTokenInvalid)
	}
	if c, err := id.lookup(token(now.Add(20 * time.Second))); err != nil || c.Subject != "erin" {
		t.Errorf("nbf within the skew: %v, %v", c, err)
	}
	now = now.Add(10 * time.Minute)
	if _, err := id.lookup(later); err != nil {
		t.Errorf("the same token once its nbf has come: %v", err)
	}
}

// TestJWTOperator: the JWT issuer belongs to the gateway's default
// operator: a JWT without a chemmy_operator claim is that operator's, one
// naming it is accepted, and one naming another operator (or "*") is
// refused UNAUTHENTICATED TOKEN_INVALID.
func TestJWTOperator(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	set, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	id, err := newIdentities(Config{JWKS: writeFile(t, string(set)), JWTIssuer: "iss", JWTAudience: "aud", DefaultOperator: "casino-a"},
		slog.New(slog.DiscardHandler), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	token := func(operator string) string {
		cl := map[string]any{"iss": "iss", "aud": "aud", "sub": "olga", "chemmy_role": "operator", "exp": now.Add(time.Hour).Unix()}
		if operator != "" {
			cl[ClaimOperator] = operator
		}
		return signJWT(t, "k1", k, cl)
	}
	want := auth.Caller{Subject: "olga", Role: auth.RoleOperator, Operator: "casino-a"}
	for _, op := range []string{"", "casino-a"} {
		if c, err := id.lookup(token(op)); err != nil || c != want {
			t.Errorf("claim %q: %v, %v, want %v", op, c, err, want)
		}
	}
	for _, op := range []string{"casino-b", auth.AllOperators} {
		_, err := id.lookup(token(op))
		if status.Code(err) != codes.Unauthenticated || errs.Reason(err) != ReasonTokenInvalid || !strings.Contains(status.Convert(err).Message(), ClaimOperator) {
			t.Errorf("claim %q: %v, want UNAUTHENTICATED %s about %s", op, err, ReasonTokenInvalid, ClaimOperator)
		}
	}
}

// TestJWTLifetime: an operator JWT that lives longer than the gateway
// allows (exp - iat, or exp - now without iat; 24 h by default) is
// refused UNAUTHENTICATED TOKEN_LIFETIME_TOO_LONG, however valid
// otherwise; one within it is accepted; -jwt-max-lifetime sets the bound
// (negative: none).
func TestJWTLifetime(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	set, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	jwks := writeFile(t, string(set))
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	identities := func(maxLife time.Duration) *identities {
		id, err := newIdentities(Config{JWKS: jwks, JWTIssuer: "iss", JWTAudience: "aud", JWTMaxLifetime: maxLife}, slog.New(slog.DiscardHandler), clock)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	// token is a JWT issued at iat (none when zero) expiring at exp.
	token := func(iat, exp time.Time) string {
		claims := map[string]any{"iss": "iss", "aud": "aud", "sub": "erin", "chemmy_role": "player", "exp": exp.Unix()}
		if !iat.IsZero() {
			claims["iat"] = iat.Unix()
		}
		return signJWT(t, "k1", k, claims)
	}
	var none time.Time
	def := identities(0)
	for _, c := range []struct {
		name     string
		iat, exp time.Time
		ok       bool
	}{
		{"iat now, exp in 24 h", now, now.Add(24 * time.Hour), true},
		{"iat now, exp in 24 h 1 s", now, now.Add(24*time.Hour + time.Second), false},
		{"iat now, exp in a year", now, now.Add(365 * 24 * time.Hour), false},
		{"iat 47 h ago, exp in 1 h", now.Add(-47 * time.Hour), now.Add(time.Hour), false},
		{"no iat, exp in 23 h", none, now.Add(23 * time.Hour), true},
		{"no iat, exp in 25 h", none, now.Add(25 * time.Hour), false},
	} {
		c2, err := def.lookup(token(c.iat, c.exp))
		switch {
		case c.ok && (err != nil || c2.Subject != "erin"):
			t.Errorf("%s: %v %v, want accepted", c.name, c2, err)
		case !c.ok && (status.Code(err) != codes.Unauthenticated || errs.Reason(err) != ReasonTokenLifetimeTooLong):
			t.Errorf("%s: %v, want UNAUTHENTICATED %s", c.name, err, ReasonTokenLifetimeTooLong)
		}
	}
	short := identities(time.Hour)
	if _, err := short.lookup(token(now, now.Add(2*time.Hour))); errs.Reason(err) != ReasonTokenLifetimeTooLong {
		t.Errorf("a 2 h token with a bound of 1 h: %v, want %s", err, ReasonTokenLifetimeTooLong)
	}
	if _, err := short.lookup(token(now, now.Add(time.Hour))); err != nil {
		t.Errorf("a 1 h token with a bound of 1 h: %v", err)
	}
	if _, err := identities(-1).lookup(token(now, now.Add(365*24*time.Hour))); err != nil {
		t.Errorf("a year-long token with no bound: %v", err)
	}
}

// TestJWKSPlainHTTPRefused: a JWKS URL over plain http to another host
// stops the gateway at start with an error saying why; loopback hosts,
// https, files and -insecure are accepted; a redirect from https to http
// is not followed.
func TestJWKSPlainHTTPRefused(t *testing.T) {
	_, err := newIdentities(Config{JWKS: "http://192.0.2.10/jwks.json", JWTIssuer: "iss", JWTAudience: "aud"}, slog.New(slog.DiscardHandler), time.Now)
	if err == nil || !strings.Contains(err.Error(), "plain http") || !strings.Contains(err.Error(), "https://") {
		t.Fatalf("http JWKS to another host: %v", err)
	}
	for _, c := range []struct {
		location string
		insecure bool
		ok       bool
	}{
		{"http://192.0.2.10/jwks.json", false, false},
		{"HTTP://idp.casino.example/jwks.json", false, false},
		{"http://localhost.evil.example/jwks.json", false, false},
		{"http://10.0.0.1:8080/jwks.json", false, false},
		{"http://192.0.2.10/jwks.json", true, true},
		{"http://127.0.0.1:8080/jwks.json", false, true},
		{"http://127.3.2.1/jwks.json", false, true},
		{"http://localhost:8080/jwks.json", false, true},
		{"http://[::1]:8080/jwks.json", false, true},
		{"https://idp.casino.example/jwks.json", false, true},
		{"/etc/chemmy/jwks.json", false, true},
	} {
		if err := checkJWKSLocation(c.location, c.insecure); (err == nil) != c.ok {
			t.Errorf("%s (insecure %v): %v, want accepted %v", c.location, c.insecure, err, c.ok)
		}
	}
	req := func(u string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if err := jwksClient.CheckRedirect(req("http://idp.casino.example/jwks.json"), []*http.Request{req("https://idp.casino.example/keys")}); err == nil {
		t.Error("a redirect from https to http is followed")
	}
	if err := jwksClient.CheckRedirect(req("https://keys.casino.example/jwks.json"), []*http.Request{req("https://idp.casino.example/keys")}); err != nil {
		t.Errorf("a redirect from https to https: %v", err)
	}
}
