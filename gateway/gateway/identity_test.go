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
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

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
		sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, (&jose.SignerOptions{}).WithHeader("kid", kid))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jwt.Signed(sig).Claims(map[string]any{"iss": "iss", "aud": "aud", "sub": "u1", "chemmy_role": "auditor",
			"exp": now.Add(time.Hour).Unix()}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	c, err := id.lookup(sign("k1", k1))
	if err != nil || c != (auth.Caller{Subject: "u1", Role: auth.RoleAuditor}) {
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
