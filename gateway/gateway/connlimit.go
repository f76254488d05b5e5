package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The public listeners' connections (gRPC and HTTP): how many may be open
// at once, in all and per client address, and how long one may stay slow
// or idle. Every connection holds a file descriptor of the process; once
// they are all taken nothing of the process can open a file or a socket
// (the embedded NATS, a store, the token file's reload, the metrics), so
// the gateway keeps its own well below the process's limit, and refuses
// what is over at once (closed as accepted, HTTP answered 503 first)
// rather than letting it queue.

// Defaults of ConnConfig.
const (
	// DefaultMaxConnsCeiling is the default MaxConns when the process may
	// open enough files (DefaultMaxConns).
	DefaultMaxConnsCeiling = 10000
	DefaultMaxConnsPerAddr = 256
	DefaultHandshake       = 10 * time.Second
	DefaultHeaderTimeout   = 10 * time.Second
	DefaultBodyTimeout     = 30 * time.Second
	DefaultIdleTimeout     = 2 * time.Minute
)

// ConnConfig bounds the connections of the public listeners. Zero values
// take the defaults.
type ConnConfig struct {
	// MaxConns is how many connections the public listeners, gRPC and
	// HTTP together, keep open at once; one more is closed as soon as it
	// is accepted (HTTP: answered 503 first). 0: DefaultMaxConns of the
	// process's file limit; negative: no cap.
	MaxConns int
	// MaxConnsPerAddr is how many of them one client address (the TCP
	// peer's IP) may hold; a trusted proxy's (Config.TrustedProxies) count
	// in MaxConns only. 0: DefaultMaxConnsPerAddr (256); negative: no cap.
	MaxConnsPerAddr int
	// Handshake is how long a new gRPC connection has to send its HTTP/2
	// preface and settings (grpc.ConnectionTimeout): one that connects and
	// stays silent is closed then. 0: DefaultHandshake (10 s).
	Handshake time.Duration
	// HeaderTimeout is how long an HTTP request's headers may take to
	// arrive (http.Server.ReadHeaderTimeout). 0: DefaultHeaderTimeout (10 s).
	HeaderTimeout time.Duration
	// BodyTimeout is how long an HTTP request's body may take to arrive,
	// from its headers on: one trickled slower is answered 408 and its
	// connection closed. A stream of lines, once its request is read,
	// runs as long as it runs. 0: DefaultBodyTimeout (30 s).
	BodyTimeout time.Duration
	// IdleTimeout closes an HTTP connection idle between requests, and a
	// gRPC connection with no call open (keepalive MaxConnectionIdle;
	// clients reconnect on their next call). 0: DefaultIdleTimeout (2 min).
	IdleTimeout time.Duration
}

// connReserveMin and connReserveShare: the file descriptors DefaultMaxConns
// leaves for everything but the public connections: a quarter of the
// limit, at least 1,024.
const (
	connReserveMin   = 1024
	connReserveShare = 4
)

// DefaultMaxConns is MaxConns's default for a process that may open
// nofile files (its RLIMIT_NOFILE; 0: unknown): DefaultMaxConnsCeiling
// (10,000), or fewer when the limit leaves fewer after a reserve of a
// quarter of it (at least 1,024) for the rest of the process (the
// embedded NATS and its JetStream files, the stores, the backend and
// NATS connections, token and JWKS reloads, the metrics); below that,
// half of the limit. At 20,000 it is 10,000; at 4,096, 3,072; at 1,024,
// 512.
func DefaultMaxConns(nofile uint64) int {
	if nofile == 0 {
		return DefaultMaxConnsCeiling
	}
	reserve := max(nofile/connReserveShare, connReserveMin)
	avail := nofile / 2
	if nofile > reserve && nofile-reserve > avail {
		avail = nofile - reserve
	}
	return int(min(avail, DefaultMaxConnsCeiling))
}

func (c ConnConfig) withDefaults(nofile uint64) ConnConfig {
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns(nofile)
	}
	if c.MaxConnsPerAddr == 0 {
		c.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	if c.Handshake <= 0 {
		c.Handshake = DefaultHandshake
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = DefaultHeaderTimeout
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	return c
}

// Reasons a connection is refused (label reason of
// chemmy_gateway_connections_refused_total).
const (
	refusedTotal   = "total"
	refusedPerAddr = "per_address"
)

// connLimiter counts the public listeners' open connections, in all and
// by client address, and refuses those over the caps.
type connLimiter struct {
	max, perAddr int
	proxies      proxies

	mu     sync.Mutex
	open   int
	byAddr map[netip.Addr]int

	openG    *prometheus.GaugeVec
	accepted *prometheus.CounterVec
	refused  *prometheus.CounterVec
}

func newConnLimiter(c ConnConfig, ps proxies) *connLimiter {
	return &connLimiter{
		max: c.MaxConns, perAddr: c.MaxConnsPerAddr, proxies: ps, byAddr: map[netip.Addr]int{},
		openG: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chemmy_gateway_connections_open",
			Help: "Connections open on the gateway's public listeners (listener grpc or http)."}, []string{"listener"}),
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_gateway_connections_accepted_total",
			Help: "Connections the gateway's public listeners accepted and kept (listener grpc or http)."}, []string{"listener"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_gateway_connections_refused_total",
			Help: "Connections closed as soon as accepted: over the cap in all (reason total) or of their client address (per_address)."}, []string{"listener", "reason"}),
	}
}

// register registers the limiter's metrics on reg.
func (l *connLimiter) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{l.openG, l.accepted, l.refused} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("gateway: connection metrics: %w", err)
		}
	}
	return nil
}

// acquire takes a slot for a connection from addr; it returns the
// release of the slot, or the reason it is refused.
func (l *connLimiter) acquire(addr netip.Addr) (release func(), refused string) {
	perAddr := l.perAddr >= 0 && addr.IsValid() && !l.proxies.trusts(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max >= 0 && l.open >= l.max {
		return nil, refusedTotal
	}
	if perAddr && l.byAddr[addr] >= l.perAddr {
		return nil, refusedPerAddr
	}
	l.open++
	if perAddr {
		l.byAddr[addr]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.open--
			if perAddr {
				if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
					delete(l.byAddr, addr)
				}
			}
		})
	}, ""
}

// listen wraps lis, named name ("grpc", "http") in the metrics: each
// connection accepted takes a slot until it is closed; one refused is
// closed at once, after refuse (nil: nothing) had its say.
func (l *connLimiter) listen(lis net.Listener, name string, refuse func(net.Conn, string)) net.Listener {
	return &limitListener{Listener: lis, l: l, name: name, refuse: refuse}
}

type limitListener struct {
	net.Listener
	l      *connLimiter
	name   string
	refuse func(net.Conn, string)
}

func (ll *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		release, refused := ll.l.acquire(peerIP(c))
		if refused != "" {
			ll.l.refused.WithLabelValues(ll.name, refused).Inc()
			if ll.refuse != nil {
				ll.refuse(c, refused)
			}
			_ = c.Close()
			continue
		}
		ll.l.accepted.WithLabelValues(ll.name).Inc()
		g := ll.l.openG.WithLabelValues(ll.name)
		g.Inc()
		return &limitedConn{Conn: c, release: func() { release(); g.Dec() }}, nil
	}
}

// peerIP is c's remote IP address; invalid when it has none.
func peerIP(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

// limitedConn gives its slot back when closed, once.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// refuseHTTP answers a connection refused on the HTTP listener 503, as
// far as its socket takes it at once (it is closed right after, whatever
// the client has sent: best effort).
func refuseHTTP(c net.Conn, reason string) {
	msg := "the gateway has as many connections as it serves; try again shortly\n"
	if reason == refusedPerAddr {
		msg = "your address has as many connections open to the gateway as it may; close some first\n"
	}
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\n\r\n%s", len(msg), msg)
}

// errBodyTimeout: an HTTP request body did not arrive within the body
// timeout.
var errBodyTimeout = errors.New("the request body did not arrive in time")
