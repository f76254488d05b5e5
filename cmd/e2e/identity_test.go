package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/outbox"
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
	replaceFile(p.t, p.path, data)
}

// replaceFile replaces the file at path with data at once (a new file
// renamed over it), as a rotation should: a reload between a rewrite's
// truncation and its write would read an empty file, which is a valid
// token file with no tokens.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
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
		// Signed for later: nbf an hour ahead, far past the 30 s of skew.
		"not valid yet": {p.token("k1", claims("erin", "player", hour.Add(time.Hour), "nbf", hour.Unix())), gateway.ReasonTokenInvalid},
		"not a token":   {"a.b.c", gateway.ReasonTokenInvalid},
	} {
		_, err := gw.GetCaller(bearer(tc.token), &gatewayv1.GetCallerRequest{})
		if status.Code(err) != codes.Unauthenticated || errs.Reason(err) != tc.reason || status.Convert(err).Message() == "" {
			t.Errorf("%s: %v (reason %q), want UNAUTHENTICATED %s with a message", name, err, errs.Reason(err), tc.reason)
		}
		if name == "not valid yet" && !strings.Contains(status.Convert(err).Message(), "nbf") {
			t.Errorf("%s: the message %q does not say nbf", name, status.Convert(err).Message())
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
	replaceFile(t, toks, []byte("tokens:\n  - {token: frank-token, subject: frank, role: player}\n"))
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
	replaceFile(t, toks, []byte("tokens: [this is not"))
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
	id := newTable(t, c)
	for i := 0; i < 3; i++ {
		cancel, err := openWatch(c, "carol", id)
		if err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
		t.Cleanup(cancel)
	}
	if _, err := openWatch(c, "carol", id); status.Code(err) != codes.ResourceExhausted || errs.Reason(err) != gateway.ReasonTooManyStreams {
		t.Fatalf("a fourth stream: %v", err)
	}
	cancel, err := openWatch(c, "dave", id)
	if err != nil {
		t.Fatalf("dave's stream while carol is at her cap: %v", err)
	}
	cancel()
}

// newTable is a table the croupier creates.
func newTable(t *testing.T, c *client) string {
	t.Helper()
	resp, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/table"})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetTable().GetTableId()
}

// openWatch opens a WatchTable stream on table id through the gateway, as
// who ("alice", ...), and reads its first message (the snapshot): the
// gateway then holds a stream slot for it and table-svc a JetStream
// consumer. cancel drops the stream.
func openWatch(c *client, who, id string) (cancel context.CancelFunc, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+who+"-token")
	s, err := c.table.WatchTable(ctx, &tablev1.WatchTableRequest{TableId: id})
	if err == nil {
		_, err = s.Recv()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}

// openNDJSONWatch is openWatch on the gateway's HTTP side (a stream of
// JSON lines): the request is sent and the first line read.
func openNDJSONWatch(t *testing.T, httpAddr, who, id string) (drop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+httpAddr+"/chemmy.table.v1.TableService/WatchTable",
		strings.NewReader(`{"tableId":"`+id+`"}`))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+who+"-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
	if resp.StatusCode != http.StatusOK || err != nil {
		cancel()
		resp.Body.Close()
		t.Fatalf("HTTP WatchTable as %s: %d %q %v", who, resp.StatusCode, line, err)
	}
	return func() { cancel(); resp.Body.Close() }
}

// TestStreamCapInTotal: the gateway serves at most -max-streams streams
// in all, whoever holds them. Once they are open every caller's next
// stream is refused (RESOURCE_EXHAUSTED TOO_MANY_STREAMS, saying it is the
// gateway's total), also one below his own cap and one who holds none;
// calls that are not streams go on; when a stream ends, its slot serves a
// new one.
func TestStreamCapInTotal(t *testing.T) {
	st := startStackWith(t, stack.Config{TokensFile: tokensFile(t),
		Limits: gateway.LimitConfig{Rate: -1, MaxStreamsPerCaller: 2, MaxStreams: 3}})
	c := dial(t, st.GatewayAddr)
	id := newTable(t, c)
	var open []context.CancelFunc
	for _, who := range []string{"alice", "alice", "bob"} {
		cancel, err := openWatch(c, who, id)
		if err != nil {
			t.Fatalf("%s's stream: %v", who, err)
		}
		t.Cleanup(cancel)
		open = append(open, cancel)
	}
	full := func(who string) {
		t.Helper()
		_, err := openWatch(c, who, id)
		if status.Code(err) != codes.ResourceExhausted || errs.Reason(err) != gateway.ReasonTooManyStreams ||
			!strings.Contains(status.Convert(err).Message(), "in total") {
			t.Errorf("%s's stream with 3 of 3 open: %v, want RESOURCE_EXHAUSTED %s (the total)", who, err, gateway.ReasonTooManyStreams)
		}
	}
	full("bob")   // 1 of his 2
	full("carol") // none yet
	if _, err := c.table.GetTable(as(t, "carol"), &tablev1.GetTableRequest{TableId: id}); err != nil {
		t.Errorf("a unary call while the streams are full: %v", err)
	}

	open[0]() // alice drops one: the gateway frees its slot when the call has ended
	eventually(t, "carol's stream once alice dropped one", func() error {
		cancel, err := openWatch(c, "carol", id)
		if err == nil {
			t.Cleanup(cancel)
		}
		return err
	})
	full("dave")
}

// TestDroppedStreamsLeaveNoConsumers: each WatchTable stream, over gRPC or
// HTTP, holds one consumer on the CHEMMY JetStream stream; when the
// clients drop them at the gateway, the consumer count (read with the
// JetStream API as the NATS reader) comes back to what it was. table-svc
// keeps pulling from a consumer as long as its watch runs, so the count
// comes back only if the gateway ends the backend calls.
func TestDroppedStreamsLeaveNoConsumers(t *testing.T) {
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	id := newTable(t, c)
	nc, err := outbox.Connect(st.NATSURL, "e2e-consumers", st.NATSKeys.SeedFile(natsauth.Reader),
		nats.CustomInboxPrefix(natsauth.InboxPrefix(natsauth.Reader)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	consumers := func() int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, outbox.StreamName)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Consumers
	}
	before := consumers()
	var drops []context.CancelFunc
	for _, who := range []string{"alice", "bob", "carol"} {
		cancel, err := openWatch(c, who, id)
		if err != nil {
			t.Fatalf("%s's stream: %v", who, err)
		}
		drops = append(drops, cancel)
	}
	for _, who := range []string{"dave", "auditor"} {
		drops = append(drops, openNDJSONWatch(t, st.GatewayHTTPAddr, who, id))
	}
	if n := consumers(); n != before+len(drops) {
		t.Fatalf("%d consumers with %d streams open, %d before", n, len(drops), before)
	}
	for _, drop := range drops {
		drop()
	}
	eventually(t, "the dropped streams' consumers to go", func() error {
		if n := consumers(); n != before {
			return fmt.Errorf("%d consumers, %d before the streams", n, before)
		}
		return nil
	})
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
