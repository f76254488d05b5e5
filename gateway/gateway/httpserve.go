package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/chemmy/chemmy/services/kit/grpcx"
)

// startHTTP starts the HTTP side (http.go) when c.HTTPAddr is set: an
// in-process connection to the gateway's own gRPC server, and the HTTP
// server on c.HTTPAddr, with the probes /healthz (the process runs) and
// /readyz (the gateway serves, and c.Ready says ready; 503 with the reason
// otherwise, as before and while it stops). Both stop
// when ctx ends; wg counts them.
func (g *Gateway) startHTTP(ctx context.Context, c Config, cc ConnConfig, conns *connLimiter, wg *sync.WaitGroup) error {
	if c.HTTPAddr == "" {
		return nil
	}
	conn, blis, err := inProcess(g.srv, 64<<20)
	if err != nil {
		return fmt.Errorf("gateway: http: %w", err)
	}
	api, err := newHTTPAPI(ctx, conn, protoregistry.GlobalFiles, c.MaxMessageBytes, g.log, registerConsole, registerOpenAPI)
	if err != nil {
		_ = conn.Close()
		return err
	}
	lis, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("gateway: http listen: %w", err)
	}
	// Its connections count with the gRPC port's (connlimit.go); one
	// over the cap is answered 503 and closed.
	g.httpLis = conns.listen(lis, "http", refuseHTTP)
	wg.Add(2)
	go func() {
		defer wg.Done()
		// Stopped with the public listener by GracefulStop (gateway.serve).
		if err := g.srv.Serve(blis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			g.report(err)
		}
	}()
	go func() {
		defer wg.Done()
		g.report(serveHTTP(ctx, g.httpLis, grpcx.Probes(api, g.probeReady(c.Ready)), cc, g.log))
		_ = conn.Close()
	}()
	return nil
}

// HTTPAddr is the address of the HTTP side; empty when none is served.
func (g *Gateway) HTTPAddr() string {
	if g.httpLis == nil {
		return ""
	}
	return g.httpLis.Addr().String()
}
