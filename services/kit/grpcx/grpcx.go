// Package grpcx builds chemmy's gRPC servers the same way everywhere:
// panic recovery, Prometheus metrics, structured logging (with the trace
// id of traced calls), OpenTelemetry tracing when configured, role checks,
// standard gRPC health and server reflection, and graceful shutdown.
package grpcx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/buildinfo"
)

// Options configure a server. Zero values are sane: no role checks, a new
// metrics registry, the default logger.
type Options struct {
	// Name of the service, for logs.
	Name string
	// Logger; nil means slog.Default(). Lines logged with a traced call's
	// context carry its trace_id and span_id (TraceLogger).
	Logger *slog.Logger
	// Policy, when non-nil, is enforced on every call with errors in
	// Domain; Auth finds the caller (nil: auth.Metadata, development only).
	Policy auth.Policy
	Auth   auth.Authenticator
	Domain string
	// Registry receives the gRPC metrics; nil means a new registry with the
	// Go and process collectors.
	Registry *prometheus.Registry
	// ServerOptions are appended to the server's options.
	ServerOptions []grpc.ServerOption
}

// Server is a gRPC server with its health service and metrics registry.
type Server struct {
	GRPC     *grpc.Server
	Health   *health.Server
	Registry *prometheus.Registry
	metrics  *grpcprom.ServerMetrics
	log      *slog.Logger
	streams  openStreams
}

// New builds a server. Register services on s.GRPC before Serve.
func New(o Options) *Server {
	// The trace and span ids on every line logged with a traced call's
	// context (the interceptors' lines among them).
	log := TraceLogger(o.Logger).With("service", o.Name)
	reg := o.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildinfo.Collector())
	}
	metrics := NewServerMetrics()
	reg.MustRegister(metrics)

	recover := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in handler", "panic", p, "stack", string(debug.Stack()))
		return status.Errorf(codes.Internal, "internal error")
	})
	// Calls of a method not registered are counted as grpcx.UnknownMethod
	// (gRPC answers them UNIMPLEMENTED before any interceptor today; this
	// keeps it so should an unknown-service handler be added).
	var s *Server
	known := RegisteredMethods(func() *grpc.Server { return s.GRPC })
	unary := []grpc.UnaryServerInterceptor{
		recovery.UnaryServerInterceptor(recover),
		UnaryServerMetrics(metrics, known),
		UnaryAccessLog(log),
	}
	stream := []grpc.StreamServerInterceptor{
		recovery.StreamServerInterceptor(recover),
		StreamServerMetrics(metrics, known),
		func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return s.streams.count(info.FullMethod, func() error { return h(srv, ss) })
		},
		StreamAccessLog(log),
	}
	if o.Policy != nil {
		k := auth.Checker{Policy: o.Policy, Auth: o.Auth, Domain: o.Domain}
		if k.Auth == nil {
			k.Auth = auth.Metadata{}
		}
		unary = append(unary, k.UnaryServerInterceptor())
		stream = append(stream, k.StreamServerInterceptor())
	}
	opts := append([]grpc.ServerOption{
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
	}, o.ServerOptions...)
	opts = append(opts, ServerTracing(o.Name)...) // OpenTelemetry, when configured (tracing.go)
	s = &Server{GRPC: grpc.NewServer(opts...), Health: health.NewServer(), Registry: reg, metrics: metrics, log: log}
	healthpb.RegisterHealthServer(s.GRPC, s.Health)
	reflection.Register(s.GRPC)
	return s
}

// StreamsOpen is the number of streams of fullMethod
// ("/pkg.Service/Method") open on the server now (a WatchTable's
// watchers).
func (s *Server) StreamsOpen(fullMethod string) int { return s.streams.open(fullMethod) }

// openStreams counts the streams open, by method.
type openStreams struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *openStreams) count(method string, f func() error) error {
	o.add(method, 1)
	defer o.add(method, -1)
	return f()
}

func (o *openStreams) add(method string, d int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[method] += d
	if o.n[method] == 0 {
		delete(o.n, method)
	}
}

func (o *openStreams) open(method string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[method]
}

// Serve serves on lis until ctx is done, then reports NOT_SERVING, drains
// calls in flight for up to 10 s and stops. Every registered service is
// reported SERVING while it runs. It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	// Per-method series start at zero so dashboards show every method.
	s.metrics.InitializeMetrics(s.GRPC)
	for name := range s.GRPC.GetServiceInfo() {
		s.Health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	s.Health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	errc := make(chan error, 1)
	go func() { errc <- s.GRPC.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.Health.Shutdown()
	done := make(chan struct{})
	go func() { s.GRPC.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.log.Warn("graceful stop timed out; stopping")
		s.GRPC.Stop()
	}
	if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// Ready is nil while the server reports SERVING (between Serve's start
// and shutdown), else an error saying it does not serve.
func (s *Server) Ready() error {
	r, err := s.Health.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return errors.New("the gRPC server is not serving (starting or stopping)")
	}
	return nil
}

// ServeMetrics serves, until ctx is done, at http://addr: /metrics (reg,
// Prometheus text format), /healthz (200 "ok" while the process runs: a
// liveness probe) and /readyz (200 "ready" while ready() returns nil, else
// 503 "not ready: <why>": a readiness probe; nil ready is always ready). Kubernetes
// probes use these, since a gRPC probe cannot present a client
// certificate. An empty addr serves nothing.
func ServeMetrics(ctx context.Context, addr string, reg *prometheus.Registry, ready func() error) error {
	return ServeGatherer(ctx, addr, reg, ready)
}

// ServeGatherer is ServeMetrics for any gatherer (several registries
// gathered as one, prometheus.Gatherers).
func ServeGatherer(ctx context.Context, addr string, reg prometheus.Gatherer, ready func() error) error {
	if addr == "" {
		return nil
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics listen: %w", err)
	}
	return ServeGathererOn(ctx, lis, reg, ready)
}

// ServeGathererOn is ServeGatherer on a listener the caller opened (to
// fail early when the address is taken, or to learn the port of
// "127.0.0.1:0"); it closes lis.
func ServeGathererOn(ctx context.Context, lis net.Listener, reg prometheus.Gatherer, ready func() error) error {
	mux := http.NewServeMux()
	var opts promhttp.HandlerOpts
	if r, ok := reg.(*prometheus.Registry); ok {
		opts.Registry = r
	}
	mux.Handle("/metrics", promhttp.HandlerFor(reg, opts))
	// Timeouts: a client that trickles its request, or idles, does not
	// keep a connection (and a file descriptor) for ever.
	srv := &http.Server{Handler: Probes(mux, ready), ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
