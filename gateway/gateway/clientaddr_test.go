package gateway

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

func TestParseTrustedProxies(t *testing.T) {
	got, err := ParseTrustedProxies(" 10.0.0.0/8, 192.168.1.7 ,2001:db8::/32\t::ffff:172.16.0.1,10.1.2.3/16")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("172.16.0.1/32"),
		netip.MustParsePrefix("10.1.0.0/16"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, err := ParseTrustedProxies(""); err != nil || len(got) != 0 {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.local", "10.0.0.1/8/2"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestClientBehindProxies(t *testing.T) {
	ps := proxies{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}
	for _, c := range []struct {
		name      string
		host      string
		forwarded []string
		want      string
	}{
		{"no proxies trusted", "198.51.100.7", nil, "198.51.100.7"},
		{"an untrusted peer's header is ignored", "198.51.100.7", []string{"203.0.113.1"}, "198.51.100.7"},
		{"a trusted proxy without header", "10.0.0.5", nil, "10.0.0.5"},
		{"one proxy", "10.0.0.5", []string{"203.0.113.1"}, "203.0.113.1"},
		{"the client's own entries are not believed", "10.0.0.5", []string{"192.0.2.66, 203.0.113.1"}, "203.0.113.1"},
		{"two proxies, one header each", "10.0.0.5", []string{"203.0.113.1", "10.9.9.9"}, "203.0.113.1"},
		{"two proxies, one list", "10.0.0.5", []string{"192.0.2.66,203.0.113.1, 10.9.9.9"}, "203.0.113.1"},
		{"with a port", "10.0.0.5", []string{"203.0.113.1:5100"}, "203.0.113.1"},
		{"IPv6", "2001:db8::1", []string{"[2001:db9::7]:443"}, "2001:db9::7"},
		{"IPv4 in IPv6", "::ffff:10.0.0.5", []string{"::ffff:203.0.113.1"}, "203.0.113.1"},
		{"garbage stops at the last proxy believed", "10.0.0.5", []string{"203.0.113.1, unknown"}, "10.0.0.5"},
		{"all trusted: the farthest", "10.0.0.5", []string{"10.1.1.1, 10.2.2.2"}, "10.1.1.1"},
		{"not an address", "in-process", []string{"203.0.113.1"}, "in-process"},
	} {
		if got := ps.client(c.host, c.forwarded); got != c.want {
			t.Errorf("%s: %s with %q is %s, want %s", c.name, c.host, c.forwarded, got, c.want)
		}
	}
	if got := (proxies)(nil).client("10.0.0.5", []string{"203.0.113.1"}); got != "10.0.0.5" {
		t.Errorf("no proxies: %s", got)
	}
}

// httpFrom is an HTTP client whose connections come from the address ip
// (127.0.0.0/8 is this machine's: any address of it reaches the gateway).
func httpFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

const getCaller = "/chemmy.gateway.v1.GatewayService/GetCaller"

// badToken calls GetCaller over HTTP from hc with an unknown token and
// returns the error's reason.
func (e *env) badToken(t *testing.T, hc *http.Client, hdr http.Header) string {
	t.Helper()
	code, m := e.postWith(t, hc, hdr, getCaller, "guess", `{}`)
	r := reason(m)
	if (r == ReasonTokenUnknown) != (code == http.StatusUnauthorized) || (r == ReasonRateLimited) != (code == http.StatusTooManyRequests) {
		t.Fatalf("a bad token: %d %v", code, m)
	}
	return r
}

// exhaust makes bad-token calls until one is RATE_LIMITED (at most 10).
func (e *env) exhaust(t *testing.T, hc *http.Client, hdr http.Header) {
	t.Helper()
	for range 10 {
		if e.badToken(t, hc, hdr) == ReasonRateLimited {
			return
		}
	}
	t.Fatal("10 bad tokens and no RATE_LIMITED")
}

// failLimits: a bucket of 3 failures that in practice does not refill
// during a test.
var failLimits = LimitConfig{Rate: 0.001, Burst: 3}

// TestHTTPFailedAuthenticationPerClient: HTTP callers come through the
// in-process connection, yet each has his own failed-authentication
// bucket, by his address: one client guessing tokens does not make
// another's failures RATE_LIMITED. A forged X-Forwarded-For from a peer
// that is no trusted proxy is ignored, and so is the HTTP bridge's own
// metadata sent to the gRPC port.
func TestHTTPFailedAuthenticationPerClient(t *testing.T) {
	e := startEnvWith(t, failLimits)
	a, b := httpFrom(t, "127.0.0.1"), httpFrom(t, "127.0.0.2")
	e.exhaust(t, a, nil)
	if r := e.badToken(t, b, nil); r != ReasonTokenUnknown {
		t.Fatalf("another HTTP client's first bad token: %s, want %s", r, ReasonTokenUnknown)
	}
	// A new X-Forwarded-For each time does not give a new bucket.
	for _, xff := range []string{"203.0.113.1", "203.0.113.2, 203.0.113.3"} {
		if r := e.badToken(t, a, http.Header{"X-Forwarded-For": {xff}}); r != ReasonRateLimited {
			t.Errorf("X-Forwarded-For %q from an untrusted peer: %s, want %s", xff, r, ReasonRateLimited)
		}
	}
	// The good token of a limited address still works.
	if code, m := e.postWith(t, a, nil, getCaller, "tok-alice", `{}`); code != http.StatusOK || m["subject"] != "alice" {
		t.Errorf("a good token from the limited address: %d %v", code, m)
	}
	// The gRPC port, from the same address, with the HTTP bridge's
	// metadata naming someone else: still that address's bucket.
	gc := gatewayv1.NewGatewayServiceClient(e.conn)
	_, err := gc.GetCaller(e.as("guess", mdHTTPPeer, "198.51.100.1:1000", mdHTTPForwardedFor, "198.51.100.2",
		mdForwardedFor, "198.51.100.3"), &gatewayv1.GetCallerRequest{})
	if errs.Reason(err) != ReasonRateLimited {
		t.Errorf("a gRPC call forging the HTTP bridge's metadata: %v, want %s", err, ReasonRateLimited)
	}
}

// TestTrustedProxies: behind a trusted proxy each client named in
// X-Forwarded-For (HTTP) or x-forwarded-for (gRPC) has his own bucket;
// what a client writes in the header himself is not believed; a peer
// outside the trusted ranges is his own address whatever he says.
func TestTrustedProxies(t *testing.T) {
	e := startEnvConfig(t, func(c *Config) {
		c.Limits = failLimits
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	proxy, other := httpFrom(t, "127.0.0.1"), httpFrom(t, "127.0.0.2")
	xff := func(v string) http.Header { return http.Header{"X-Forwarded-For": {v}} }
	e.exhaust(t, proxy, xff("198.51.100.1"))
	if r := e.badToken(t, proxy, xff("198.51.100.2")); r != ReasonTokenUnknown {
		t.Errorf("another client behind the proxy: %s", r)
	}
	// 198.51.100.1 writes another address himself; the proxy appends his.
	if r := e.badToken(t, proxy, xff("198.51.100.9, 198.51.100.1")); r != ReasonRateLimited {
		t.Errorf("a limited client naming another address: %s", r)
	}
	// 127.0.0.2 is no proxy: counted as himself, not as 198.51.100.1.
	if r := e.badToken(t, other, xff("198.51.100.1")); r != ReasonTokenUnknown {
		t.Errorf("an untrusted peer naming the limited client: %s", r)
	}
	// gRPC from the trusted proxy: x-forwarded-for names the client.
	gc := gatewayv1.NewGatewayServiceClient(e.conn)
	_, err := gc.GetCaller(e.as("guess", mdForwardedFor, "198.51.100.1"), &gatewayv1.GetCallerRequest{})
	if errs.Reason(err) != ReasonRateLimited {
		t.Errorf("gRPC for the limited client: %v", err)
	}
	_, err = gc.GetCaller(e.as("guess", mdForwardedFor, "198.51.100.3"), &gatewayv1.GetCallerRequest{})
	if errs.Reason(err) != ReasonTokenUnknown {
		t.Errorf("gRPC for another client: %v", err)
	}
	// gRPC from an untrusted peer: x-forwarded-for is ignored.
	cc, err := grpc.NewClient(e.gw.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
			return d.DialContext(ctx, "tcp", addr)
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx := metadata.AppendToOutgoingContext(e.ctx, "authorization", "Bearer guess", mdForwardedFor, "198.51.100.1")
	_, err = gatewayv1.NewGatewayServiceClient(cc).GetCaller(ctx, &gatewayv1.GetCallerRequest{})
	if errs.Reason(err) != ReasonTokenUnknown {
		t.Errorf("gRPC from an untrusted peer naming the limited client: %v", err)
	}
}
