package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// idp is a stand-in for an operator's identity provider: signing keys and
// the JWKS file the gateway reads.
type idp struct {
	t    *testing.T
	path string
	keys map[string]*ecdsa.PrivateKey
}

func newIDP(t *testing.T, kids ...string) *idp {
	p := &idp{t: t, path: filepath.Join(t.TempDir(), "jwks.json"), keys: map[string]*ecdsa.PrivateKey{}}
	p.publish(kids...)
	return p
}

// publish writes a JWKS with the public keys of kids (making keys as
// needed).
func (p *idp) publish(kids ...string) {
	var set jose.JSONWebKeySet
	for _, kid := range kids {
		k := p.key(kid)
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"})
	}
	data, err := json.Marshal(set)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(p.path+".tmp", data, 0o600); err != nil {
		p.t.Fatal(err)
	}
	if err := os.Rename(p.path+".tmp", p.path); err != nil {
		p.t.Fatal(err)
	}
}

// key is kid's signing key, made on first use.
func (p *idp) key(kid string) *ecdsa.PrivateKey {
	k, ok := p.keys[kid]
	if !ok {
		var err error
		if k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			p.t.Fatal(err)
		}
		p.keys[kid] = k
	}
	return k
}

// token signs claims with kid's key (kid need not be published).
func (p *idp) token(kid string, claims map[string]any) string {
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: p.key(kid)}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		p.t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

func claims(sub, role string, exp time.Time, extra ...any) map[string]any {
	c := map[string]any{"iss": "https://idp.casino.test", "aud": "chemmy", "sub": sub,
		"chemmy_role": role, "exp": exp.Unix(), "nbf": time.Now().Add(-time.Minute).Unix()}
	for i := 0; i+1 < len(extra); i += 2 {
		c[extra[i].(string)] = extra[i+1]
	}
	return c
}

var bearerCtx = context.Background()

// bearer is a call context with tok as bearer token, bounded by the
// context of the test (see TestMain-free use: each test sets none, so
// calls are bounded by the client's own deadline below).
func bearer(tok string) context.Context {
	return metadata.AppendToOutgoingContext(bearerCtx, "authorization", "Bearer "+tok)
}

// startIdentityStack runs the suite with the token file copied to a
// temporary file (so the test may rewrite it) and the IdP's JWKS, both
// read again every 100 ms, and the given limits.
func startIdentityStack(t *testing.T, p *idp, lim gateway.LimitConfig) (*stack.Stack, string) {
	t.Helper()
	data, err := os.ReadFile(tokensFile(t))
	if err != nil {
		t.Fatal(err)
	}
	toks := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(toks, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return startStackWith(t, stack.Config{
		TokensFile: toks, JWKS: p.path, JWTIssuer: "https://idp.casino.test", JWTAudience: "chemmy",
		ReloadInterval: 100 * time.Millisecond, Limits: lim,
	}), toks
}

// eventually retries f until it returns nil or 10 s have passed: for a
// reload that happens on the gateway's next tick.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestOperatorJWTs(t *testing.T) {
	p := newIDP(t, "k1")
	st, _ := startIdentityStack(t, p, gateway.LimitConfig{Rate: -1})
	gw := gatewayv1.NewGatewayServiceClient(dial(t, st.GatewayAddr).conn)
	hour := time.Now().Add(time.Hour)

	resp, err := gw.GetCaller(bearer(p.token("k1", claims("u-17", "player", hour, "chemmy_player_id", "erin"))), &gatewayv1.GetCallerRequest{})
	if err != nil || resp.GetSubject() != "erin" || resp.GetRole() != gatewayv1.Role_ROLE_PLAYER {
		t.Fatalf("valid player JWT: %v, %v", resp, err)
	}
	resp, err = gw.GetCaller(bearer(p.token("k1", claims("olga", "operator", hour))), &gatewayv1.GetCallerRequest{})
	if err != nil || resp.GetSubject() != "olga" || resp.GetRole() != gatewayv1.Role_ROLE_OPERATOR {
		t.Fatalf("valid operator JWT: %v, %v", resp, err)
	}

	// A player's token whose role claim was edited to operator.
	forged := p.token("k1", claims("erin", "player", hour))
	payload := jwtPart(t, forged, 1)
	payload["chemmy_role"] = "operator"
	forged = withJWTPart(t, forged, 1, payload)

	for name, tc := range map[string]struct {
		token, reason string
	}{
		"expired":           {p.token("k1", claims("erin", "player", time.Now().Add(-time.Hour))), gateway.ReasonTokenExpired},
		"unknown key":       {p.token("k-rogue", claims("erin", "operator", hour)), gateway.ReasonTokenInvalid},
		"role claim forged": {forged, gateway.ReasonTokenInvalid},
		"wrong audience":    {p.token("k1", claims("erin", "player", hour, "aud", "someone-else")), gateway.ReasonTokenInvalid},
		"wrong issuer":      {p.token("k1", claims("erin", "player", hour, "iss", "https://evil.test")), gateway.ReasonTokenInvalid},
		"role not chemmy's": {p.token("k1", claims("erin", "service", hour)), gateway.ReasonTokenInvalid},
		"no exp":            {p.token("k1", claims("erin", "player", hour, "exp", nil)), gateway.ReasonTokenInvalid},
		"not a token":       {"a.b.c", gateway.ReasonTokenInvalid},
	} {
		_, err := gw.GetCaller(bearer(tc.token), &gatewayv1.GetCallerRequest{})
		if status.Code(err) != codes.Unauthenticated || errs.Reason(err) != tc.reason {
			t.Errorf("%s: %v (reason %q), want UNAUTHENTICATED %s", name, err, errs.Reason(err), tc.reason)
		}
	}
}

// TestRotationWithoutRestart rewrites the token file and the JWKS while
// the stack runs: new tokens and keys work, revoked ones fail.
func TestRotationWithoutRestart(t *testing.T) {
	p := newIDP(t, "k1")
	st, toks := startIdentityStack(t, p, gateway.LimitConfig{Rate: -1})
	gw := gatewayv1.NewGatewayServiceClient(dial(t, st.GatewayAddr).conn)
	hour := time.Now().Add(time.Hour)
	call := func(tok string) error {
		_, err := gw.GetCaller(bearer(tok), &gatewayv1.GetCallerRequest{})
		return err
	}
	oldJWT := p.token("k1", claims("erin", "player", hour))
	if err := call("alice-token"); err != nil {
		t.Fatal(err)
	}
	if err := call(oldJWT); err != nil {
		t.Fatal(err)
	}

	// Rotate: alice's token revoked, frank's added; key k1 replaced by k2.
	if err := os.WriteFile(toks+".tmp", []byte("tokens:\n  - {token: frank-token, subject: frank, role: player}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(toks+".tmp", toks); err != nil {
		t.Fatal(err)
	}
	p.publish("k2")
	newJWT := p.token("k2", claims("erin", "player", hour))

	eventually(t, "the new token", func() error { return call("frank-token") })
	eventually(t, "the new key", func() error { return call(newJWT) })
	if err := call("alice-token"); errs.Reason(err) != gateway.ReasonTokenUnknown {
		t.Errorf("revoked token: %v", err)
	}
	if err := call(oldJWT); errs.Reason(err) != gateway.ReasonTokenInvalid {
		t.Errorf("JWT of a withdrawn key: %v", err)
	}

	// A broken file keeps the last good one.
	if err := os.WriteFile(toks, []byte("tokens: [this is not"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a few reload ticks
	if err := call("frank-token"); err != nil {
		t.Errorf("after a broken token file: %v", err)
	}
}

// TestAbuseLimits: one caller past his rate is refused with RetryInfo;
// one player cannot hold more WatchTable streams than his cap, and
// meanwhile another player's calls and streams are unaffected.
func TestAbuseLimits(t *testing.T) {
	p := newIDP(t, "k1")
	st, _ := startIdentityStack(t, p, gateway.LimitConfig{Rate: 1, Burst: 5, MaxStreamsPerCaller: 3, MaxStreams: 100})
	c := dial(t, st.GatewayAddr)
	gw := gatewayv1.NewGatewayServiceClient(c.conn)

	var refused error
	for i := 0; i < 20 && refused == nil; i++ {
		_, refused = gw.GetCaller(as(t, "alice"), &gatewayv1.GetCallerRequest{})
	}
	if status.Code(refused) != codes.ResourceExhausted || errs.Reason(refused) != gateway.ReasonRateLimited {
		t.Fatalf("20 calls at once: %v", refused)
	}
	var retry *errdetails.RetryInfo
	for _, d := range status.Convert(refused).Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	if retry == nil || retry.GetRetryDelay().AsDuration() <= 0 {
		t.Errorf("no RetryInfo in %v", status.Convert(refused).Details())
	}
	if _, err := gw.GetCaller(as(t, "bob"), &gatewayv1.GetCallerRequest{}); err != nil {
		t.Errorf("bob, while alice is limited: %v", err)
	}
	// A request over the 1 MiB default is refused before anything reads it.
	huge := strings.Repeat("x", 2<<20)
	if _, err := c.table.GetTable(as(t, "bob"), &tablev1.GetTableRequest{TableId: huge}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a 2 MiB request: %v", err)
	}

	// Streams: the table is created by the croupier (his own bucket).
	resp, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: "limits"})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	carol := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer carol-token")
	for i := 0; i < 3; i++ {
		s, err := c.table.WatchTable(carol, &tablev1.WatchTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
	}
	s, err := c.table.WatchTable(carol, &tablev1.WatchTableRequest{TableId: id})
	if err == nil {
		_, err = s.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted || errs.Reason(err) != gateway.ReasonTooManyStreams {
		t.Fatalf("a fourth stream: %v", err)
	}
	dctx, dcancel := context.WithCancel(as(t, "dave"))
	defer dcancel()
	ds, err := c.table.WatchTable(dctx, &tablev1.WatchTableRequest{TableId: id})
	if err == nil {
		_, err = ds.Recv()
	}
	if err != nil {
		t.Errorf("dave's stream while carol is at her cap: %v", err)
	}
}

func jwtPart(t *testing.T, tok string, i int) map[string]any {
	t.Helper()
	parts := splitJWT(t, tok)
	data, err := base64URL.DecodeString(parts[i])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func withJWTPart(t *testing.T, tok string, i int, m map[string]any) string {
	t.Helper()
	parts := splitJWT(t, tok)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	parts[i] = base64URL.EncodeToString(data)
	return parts[0] + "." + parts[1] + "." + parts[2]
}

var base64URL = base64.RawURLEncoding

func splitJWT(t *testing.T, tok string) []string {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", tok)
	}
	return parts
}
