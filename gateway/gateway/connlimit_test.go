package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
)

// TestDefaultMaxConns: the default cap leaves a quarter of the process's
// file limit (at least 1,024) to the rest of the process, and is at most
// 10,000.
func TestDefaultMaxConns(t *testing.T) {
	for _, c := range []struct {
		nofile uint64
		want   int
	}{{0, 10000}, {1024, 512}, {2048, 1024}, {4096, 3072}, {20000, 10000}, {1 << 20, 10000}} {
		if got := DefaultMaxConns(c.nofile); got != c.want {
			t.Errorf("DefaultMaxConns(%d) = %d, want %d", c.nofile, got, c.want)
		}
	}
}

// connMetric sums the gateway's metric name over the series whose labels
// include want.
func connMetric(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for k, v := range want {
				found := false
				for _, l := range m.GetLabel() {
					found = found || (l.GetName() == k && l.GetValue() == v)
				}
				if !found {
					continue series
				}
			}
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// eventually polls f every 10 ms until it is true, for at most 20 s.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !f(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within 20 s", what)
		}
	}
}

// slowConn is a connection of a slow client, from one loopback address,
// with what it has read until the server closed it.
type slowConn struct {
	net.Conn
	kind string // "grpc" or "http"

	mu     sync.Mutex
	got    bytes.Buffer
	closed bool
}

// slowClients dials n connections of kind to addr from the loopback
// address from: "grpc" sends the HTTP/2 client preface and nothing more
// (no settings); "http" a POST's headers and the first byte of its
// 100-byte body; "headers" half of a request's headers. Each reads what
// comes until the server closes it; closed counts those. They are all
// closed when the test ends.
func slowClients(t *testing.T, closed chan<- *slowConn, kind, from, addr string, n int) []*slowConn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	var out []*slowConn
	for i := 0; i < n; i++ {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("%s client %d from %s: %v", kind, i, from, err)
		}
		sc := &slowConn{Conn: c, kind: kind}
		t.Cleanup(func() { _ = c.Close() })
		var hello string
		switch kind {
		case "grpc":
			hello = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
		case "http":
			hello = "POST /chemmy.gateway.v1.GatewayService/GetCaller HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n" +
				"Authorization: Bearer tok-alice\r\nContent-Length: 100\r\n\r\n{"
		case "headers":
			hello = "POST /chemmy.gateway.v1.GatewayService/GetCaller HTTP/1.1\r\nHost: gateway\r\n"
		}
		// A refused connection may be closed before this is written.
		_, _ = io.WriteString(c, hello)
		go func() {
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				sc.mu.Lock()
				sc.got.Write(buf[:n])
				sc.closed = err != nil
				sc.mu.Unlock()
				if err != nil {
					closed <- sc
					return
				}
			}
		}()
		out = append(out, sc)
	}
	return out
}

func (sc *slowConn) read() string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.got.String()
}

// legitClient is a well-behaved client from 127.0.0.1 with a gRPC
// connection and an HTTP keep-alive connection of its own.
type legitClient struct {
	gc    gatewayv1.GatewayServiceClient
	hc    *http.Client
	http  string
	close func()
}

func newLegitClient(t *testing.T, e *env) *legitClient {
	t.Helper()
	cc, err := grpc.NewClient(e.gw.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	l := &legitClient{gc: gatewayv1.NewGatewayServiceClient(cc), hc: &http.Client{Transport: tr}, http: e.gw.HTTPAddr(),
		close: func() { _ = cc.Close(); tr.CloseIdleConnections() }}
	t.Cleanup(l.close)
	return l
}

// call makes a gRPC and an HTTP call; both must be answered.
func (l *legitClient) call(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := l.gc.GetCaller(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer tok-alice"), &gatewayv1.GetCallerRequest{})
	if err != nil || c.GetSubject() != "alice" {
		return fmt.Errorf("gRPC GetCaller: %v %v", c, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+l.http+"/chemmy.gateway.v1.GatewayService/GetCaller", strings.NewReader(`{}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer tok-alice")
	resp, err := l.hc.Do(req)
	if err != nil {
		return fmt.Errorf("HTTP GetCaller: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "alice") {
		return fmt.Errorf("HTTP GetCaller: %d %s", resp.StatusCode, body)
	}
	return nil
}

// TestSlowClientFloodIsCapped: a flood of slow connections (HTTP/2
// prefaces that stay silent, HTTP bodies trickled) from one address
// gets at most -max-conns-per-addr of them, the rest closed at once as
// accepted (HTTP answered 503, gRPC sent nothing); another client's calls
// are answered throughout. Floods from more addresses fill the cap in
// all: connections beyond it are closed at once, even a well-behaved
// client's new one, while the connections open go on being served; once
// the flood goes, new connections are served again. The timeouts are
// out of the way here (an hour): every slot freed is freed by a client.
func TestSlowClientFloodIsCapped(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := startEnvConfig(t, func(c *Config) {
		c.Registry = reg
		c.Conn = ConnConfig{MaxConns: 40, MaxConnsPerAddr: 10, Handshake: time.Hour, HeaderTimeout: time.Hour, BodyTimeout: time.Hour, IdleTimeout: time.Hour}
	})
	metric := func(name string, labels map[string]string) int {
		return int(connMetric(t, reg, name, labels))
	}
	seen := func() int {
		return metric("chemmy_gateway_connections_accepted_total", nil) + metric("chemmy_gateway_connections_refused_total", nil)
	}
	legit := newLegitClient(t, e)
	if err := legit.call(e.ctx); err != nil {
		t.Fatal(err)
	}
	if open := metric("chemmy_gateway_connections_open", nil); open != 2 {
		t.Fatalf("%d connections open with the well-behaved client's two", open)
	}

	// One address: 100 silent prefaces and 100 trickled bodies.
	closed := make(chan *slowConn, 1000)
	flood := append(slowClients(t, closed, "grpc", "127.0.0.2", e.gw.Addr(), 100),
		slowClients(t, closed, "http", "127.0.0.2", e.gw.HTTPAddr(), 100)...)
	eventually(t, "every connection of the flood accepted or refused", func() bool { return seen() == 202 })
	if open, refused := metric("chemmy_gateway_connections_open", nil), metric("chemmy_gateway_connections_refused_total", map[string]string{"reason": "per_address"}); open != 12 || refused != 190 {
		t.Fatalf("%d connections open, %d refused for their address; want 12 (2 + the address's 10) and 190", open, refused)
	}
	// The 190 refused are closed at once on the client's side: a gRPC one
	// having received nothing, an HTTP one nothing or a 503.
	for i := 0; i < 190; i++ {
		var sc *slowConn
		select {
		case sc = <-closed:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of the 190 refused connections closed within 20 s", i)
		}
		switch got := sc.read(); {
		case sc.kind == "grpc" && got != "":
			t.Errorf("a refused gRPC connection received %q", got)
		case sc.kind == "http" && got != "" && !strings.HasPrefix(got, "HTTP/1.1 503 "):
			t.Errorf("a refused HTTP connection received %q, want nothing or a 503", got)
		}
	}
	if open := metric("chemmy_gateway_connections_open", nil); open != 12 {
		t.Errorf("%d connections open after the refusals, want 12", open)
	}
	if err := legit.call(e.ctx); err != nil {
		t.Errorf("the well-behaved client during the flood: %v", err)
	}
	fresh := newLegitClient(t, e)
	if err := fresh.call(e.ctx); err != nil {
		t.Errorf("a new well-behaved client during the flood: %v", err)
	}
	fresh.close()
	eventually(t, "the new client's connections closed", func() bool { return metric("chemmy_gateway_connections_open", nil) == 12 })

	// Three more addresses, 10 silent prefaces each: 28 fit in the 40.
	before := seen()
	var more []*slowConn
	for _, from := range []string{"127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		more = append(more, slowClients(t, closed, "grpc", from, e.gw.Addr(), 10)...)
	}
	eventually(t, "the second flood accepted or refused", func() bool { return seen() == before+30 })
	if open, refused := metric("chemmy_gateway_connections_open", nil), metric("chemmy_gateway_connections_refused_total", map[string]string{"reason": "total"}); open != 40 || refused != 2 {
		t.Fatalf("%d connections open, %d refused as over the cap in all; want 40 and 2", open, refused)
	}
	for i := 0; i < 2; i++ {
		select {
		case <-closed:
		case <-time.After(20 * time.Second):
			t.Fatal("the connections over the cap in all are not closed")
		}
	}
	// Full: a new connection, even a well-behaved one, is closed at once;
	// the open ones are served.
	extra := slowClients(t, closed, "http", "127.0.0.1", e.gw.HTTPAddr(), 1)[0]
	select {
	case sc := <-closed:
		if sc != extra {
			t.Fatal("another connection closed than the one over the cap")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a connection over the cap in all is not closed")
	}
	if err := legit.call(e.ctx); err != nil {
		t.Errorf("the well-behaved client's open connections when full: %v", err)
	}
	// The flood goes: room again.
	for _, sc := range append(flood, more...) {
		_ = sc.Close()
	}
	eventually(t, "the flood's slots freed", func() bool { return metric("chemmy_gateway_connections_open", nil) == 2 })
	again := newLegitClient(t, e)
	if err := again.call(e.ctx); err != nil {
		t.Errorf("a new client once the flood is gone: %v", err)
	}
}

// TestSlowClientsTimeOut: a gRPC connection that sends its preface and
// stays silent is closed after the handshake timeout (grpc.ConnectionTimeout),
// an HTTP body trickled too slowly is answered 408 and its connection
// closed after the body timeout, headers that never end are cut after
// the header timeout; every slot comes back, and other clients are served
// meanwhile.
func TestSlowClientsTimeOut(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := startEnvConfig(t, func(c *Config) {
		c.Registry = reg
		c.Conn = ConnConfig{MaxConns: 200, MaxConnsPerAddr: 100, Handshake: 300 * time.Millisecond, HeaderTimeout: 300 * time.Millisecond,
			BodyTimeout: 300 * time.Millisecond}
	})
	legit := newLegitClient(t, e)
	if err := legit.call(e.ctx); err != nil {
		t.Fatal(err)
	}
	closed := make(chan *slowConn, 100)
	var slow []*slowConn
	slow = append(slow, slowClients(t, closed, "grpc", "127.0.0.2", e.gw.Addr(), 20)...)
	slow = append(slow, slowClients(t, closed, "http", "127.0.0.2", e.gw.HTTPAddr(), 20)...)
	slow = append(slow, slowClients(t, closed, "headers", "127.0.0.2", e.gw.HTTPAddr(), 20)...)
	if err := legit.call(e.ctx); err != nil {
		t.Errorf("another client while they trickle: %v", err)
	}
	for i := range slow {
		var sc *slowConn
		select {
		case sc = <-closed:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of the %d slow connections closed by the gateway within 20 s", i, len(slow))
		}
		if got := sc.read(); sc.kind == "http" && !strings.HasPrefix(got, "HTTP/1.1 408 ") {
			t.Errorf("a trickled body: %q, want 408", got)
		}
	}
	eventually(t, "the slow connections' slots freed", func() bool {
		return connMetric(t, reg, "chemmy_gateway_connections_open", nil) == 2
	})
	if n := connMetric(t, reg, "chemmy_gateway_connections_refused_total", nil); n != 0 {
		t.Errorf("%v connections refused, want none (under the caps)", n)
	}
	if err := legit.call(e.ctx); err != nil {
		t.Errorf("another client after: %v", err)
	}
}
