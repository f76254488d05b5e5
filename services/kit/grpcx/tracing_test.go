package grpcx

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"
)

// TestTracingOffByDefault: without an exporter or an OTLP endpoint in
// the environment no span is recorded and no option is added; "none" and
// OTEL_SDK_DISABLED turn it off.
func TestTracingOffByDefault(t *testing.T) {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED"} {
		t.Setenv(k, "")
	}
	if TracingEnabled() || len(ServerTracing("probe")) != 0 || len(ClientTracing()) != 0 {
		t.Error("tracing without configuration")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	if !TracingEnabled() {
		t.Error("an endpoint: tracing off")
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	if TracingEnabled() {
		t.Error("OTEL_TRACES_EXPORTER=none: tracing on")
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if TracingEnabled() {
		t.Error("OTEL_SDK_DISABLED=true: tracing on")
	}
}

// collector receives OTLP trace exports and keeps the service.name of
// each resource that sent spans.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names map[string]int
	vers  []string
}

func (c *collector) take(req *coltracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		var name string
		for _, a := range rs.GetResource().GetAttributes() {
			switch a.GetKey() {
			case "service.name":
				name = a.GetValue().GetStringValue()
			case "service.version":
				c.vers = append(c.vers, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			c.names[name] += len(ss.GetSpans())
		}
	}
}

func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.take(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (c *collector) seen() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.names)
}

// startCollector serves an OTLP collector over protocol ("grpc" or
// "http/protobuf") on 127.0.0.1 and returns it and its endpoint URL.
func startCollector(t *testing.T, protocol string) (*collector, string) {
	t.Helper()
	c := &collector{names: map[string]int{}}
	if protocol == "grpc" {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		coltracepb.RegisterTraceServiceServer(srv, c)
		go func() { _ = srv.Serve(lis) }()
		t.Cleanup(srv.Stop)
		return c, "http://" + lis.Addr().String()
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		req := new(coltracepb.ExportTraceServiceRequest)
		if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(b, req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		c.take(req)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(hs.Close)
	return c, hs.URL
}

// healthCall serves s until the end of one health check from a client
// traced with dial.
func healthCall(t *testing.T, s *Server, dial []grpc.DialOption) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Serve(serveCtx, lis) }()
	cc, err := grpc.NewClient(lis.Addr().String(), append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	_ = cc.Close()
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestTracingOverOTLP: with the standard environment pointing at a
// collector, over OTLP/HTTP and OTLP/gRPC (autoexport), each service's
// spans come under its own service.name, with the build's
// service.version. In a process of several services (SeveralServices,
// chemmy run) OTEL_SERVICE_NAME renames none of them; in a process of
// one, it renames it.
func TestTracingOverOTLP(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			c, endpoint := startCollector(t, protocol)
			t.Setenv("OTEL_TRACES_EXPORTER", "")
			t.Setenv("OTEL_SDK_DISABLED", "")
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_SERVICE_NAME", "one-name-for-all")
			if on, err := SetupTracing(context.Background(), ""); !on || err != nil {
				t.Fatalf("SetupTracing: %v, %v", on, err)
			}
			flush := func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := ShutdownTracing(ctx); err != nil {
					t.Fatal(err)
				}
			}
			quiet := slog.New(slog.DiscardHandler)

			SeveralServices()
			t.Cleanup(func() { several.Store(false) })
			if len(ClientTracing()) != 0 {
				t.Error("ClientTracing in a process of several services")
			}
			healthCall(t, New(Options{Name: "alpha", Logger: quiet}), ServiceClientTracing("beta"))
			healthCall(t, New(Options{Name: "gamma", Logger: quiet}), nil)
			flush()
			got := c.seen()
			if got["alpha"] == 0 || got["beta"] == 0 || got["gamma"] == 0 || got["one-name-for-all"] != 0 {
				t.Errorf("several services: spans by service.name %v, want alpha (server), beta (client), gamma (server)", got)
			}

			several.Store(false)
			healthCall(t, New(Options{Name: "alpha", Logger: quiet}), ClientTracing())
			flush()
			after := c.seen()
			if after["one-name-for-all"] < 2 || after["alpha"] != got["alpha"] {
				t.Errorf("one service: spans by service.name %v (before %v), want the server's and the client's under OTEL_SERVICE_NAME", after, got)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if len(c.vers) == 0 || slices.Contains(c.vers, "") {
				t.Errorf("service.version %q", c.vers)
			}
		})
	}
}
