package gateway

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/test/bufconn"
)

// The client's network address, the key of the failed-authentication
// rate limit (authz.authenticate).
//
// A call on the gRPC port comes from its TCP peer. A call of the HTTP side
// comes through the in-process connection (http.go), whose peer is the
// gateway itself; the HTTP bridge names the HTTP client in metadata that
// only calls on that connection can carry: the keys are read only when
// the peer is the in-process listener, which no outside caller can reach,
// and x-chemmy-* keys are never forwarded to a backend.
//
// Behind a load balancer or an ingress every client would have its
// address; with TrustedProxies (default none) a peer inside those ranges
// is believed about the client it forwards for: X-Forwarded-For on HTTP,
// x-forwarded-for metadata on gRPC.
const (
	// mdHTTPPeer is the HTTP request's remote address (host:port).
	mdHTTPPeer = "x-chemmy-http-peer"
	// mdHTTPForwardedFor holds the HTTP request's X-Forwarded-For values.
	mdHTTPForwardedFor = "x-chemmy-http-forwarded-for"
	// mdForwardedFor is what a gRPC proxy in front of the gateway sets.
	mdForwardedFor = "x-forwarded-for"
)

// inProcessAddr is the peer address of every call on the in-process
// connection: the HTTP side's calls.
type inProcessAddr struct{}

func (inProcessAddr) Network() string { return "chemmy-in-process" }
func (inProcessAddr) String() string  { return "in-process" }

// inProcessListener is an in-memory listener whose connections all have
// the peer address inProcessAddr.
type inProcessListener struct{ *bufconn.Listener }

func (l inProcessListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return inProcessConn{c}, nil
}

type inProcessConn struct{ net.Conn }

func (inProcessConn) RemoteAddr() net.Addr { return inProcessAddr{} }

// ParseTrustedProxies parses a list of CIDRs or IP addresses (one address
// is its own /32 or /128) separated by commas or spaces, as given to
// -trusted-proxies. An empty s is no proxy.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("gateway: trusted proxies: %q is not a CIDR: %w", f, err)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("gateway: trusted proxies: %q is not a CIDR or an IP address", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// proxies are the trusted proxies' address ranges.
type proxies []netip.Prefix

func (ps proxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientHost is the address of the client of the call in ctx, without
// port: the network peer, or the HTTP client for a call of the HTTP side;
// when that peer is a trusted proxy, the client it forwards for.
func (ps proxies) clientHost(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown"
	}
	hop, forwarded := p.Addr.String(), md.Get(mdForwardedFor)
	if _, in := p.Addr.(inProcessAddr); in {
		hop, forwarded = "in-process", md.Get(mdHTTPForwardedFor)
		if v := md.Get(mdHTTPPeer); len(v) == 1 {
			hop = v[0]
		}
	}
	return ps.client(hostOf(hop), forwarded)
}

// client is the client of a call from peer host with the X-Forwarded-For
// values forwarded. An untrusted peer is the client, whatever it says.
// From a trusted one the list is read from its end (the entry the nearest
// proxy added) towards its start, past every trusted proxy: the first
// address not trusted is the client. Entries further left were written by
// that client and are not believed; an entry that is not an address stops
// the walk at the last proxy believed.
func (ps proxies) client(host string, forwarded []string) string {
	a, err := netip.ParseAddr(host)
	if err != nil || !ps.trusts(a) {
		return host
	}
	var hops []string
	for _, v := range forwarded {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := a.Unmap()
	for i := len(hops) - 1; i >= 0 && ps.trusts(client); i-- {
		next, ok := parseHop(strings.TrimSpace(hops[i]))
		if !ok {
			break
		}
		client = next
	}
	return client.String()
}

// parseHop parses one X-Forwarded-For entry: an IP address, possibly with
// a port ("192.0.2.7:5100", "[2001:db8::1]:5100").
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// hostOf is addr without its port.
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
