package grpcx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// logLines decodes JSON log lines.
func logLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestTraceLoggerAddsIDs: a line logged with a span's context carries its
// trace_id and span_id; one without carries neither; wrapping twice adds
// them once; attributes and groups of With still apply.
func TestTraceLoggerAddsIDs(t *testing.T) {
	var buf bytes.Buffer
	log := TraceLogger(slog.New(slog.NewJSONHandler(&buf, nil))).With("service", "x")
	if TraceLogger(log) != log {
		t.Error("a trace logger wrapped again")
	}
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "op")
	defer span.End()
	log.InfoContext(ctx, "traced")
	log.Info("untraced")
	lines := logLines(t, &buf)
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	sc := span.SpanContext()
	if lines[0]["trace_id"] != sc.TraceID().String() || lines[0]["span_id"] != sc.SpanID().String() || lines[0]["service"] != "x" {
		t.Errorf("traced line %v, want trace_id %s span_id %s", lines[0], sc.TraceID(), sc.SpanID())
	}
	if _, ok := lines[1]["trace_id"]; ok {
		t.Errorf("untraced line has a trace id: %v", lines[1])
	}
}

// TestServerTracesAndLogsTheCall: with a tracer provider (here in memory),
// a call from a traced client to a server of New is one trace (the
// server's span a child of the client's), and the server's log line of
// the call carries that trace id.
func TestServerTracesAndLogsTheCall(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	defer UseTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))()
	var buf bytes.Buffer
	s := New(Options{Name: "probe", Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, lis) }()
	cc, err := grpc.NewClient(lis.Addr().String(), append(ClientTracing(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	// Stopped: every span has ended.
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var client, server sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		switch sp.SpanKind() {
		case trace.SpanKindClient:
			client = sp
		case trace.SpanKindServer:
			server = sp
		}
	}
	if client == nil || server == nil {
		t.Fatalf("spans %v", rec.Ended())
	}
	if server.SpanContext().TraceID() != client.SpanContext().TraceID() || server.Parent().SpanID() != client.SpanContext().SpanID() {
		t.Errorf("server span %v not the client span's child %v", server.Parent(), client.SpanContext())
	}
	found := false
	for _, l := range logLines(t, &buf) {
		if l["grpc.method"] == "Check" {
			found = true
			if l["trace_id"] != server.SpanContext().TraceID().String() || l["span_id"] != server.SpanContext().SpanID().String() {
				t.Errorf("the call's log line %v, want trace %s span %s", l, server.SpanContext().TraceID(), server.SpanContext().SpanID())
			}
		}
	}
	if !found {
		t.Errorf("no log line of the call:\n%s", buf.String())
	}
}

// TestLabelGatherer: several registries served as one, each series
// labelled with its registry's name; the same metric from two registries
// is one family.
func TestLabelGatherer(t *testing.T) {
	a, b := prometheus.NewRegistry(), prometheus.NewRegistry()
	for i, r := range []*prometheus.Registry{a, b} {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "things_total", Help: "Things."}, []string{"kind"})
		c.WithLabelValues("x").Add(float64(i + 1))
		r.MustRegister(c)
	}
	g := prometheus.Gatherers{LabelGatherer{a, "service", "a"}, LabelGatherer{b, "service", "b"}}
	want := `# HELP things_total Things.
# TYPE things_total counter
things_total{kind="x",service="a"} 1
things_total{kind="x",service="b"} 2
`
	if err := testutil.GatherAndCompare(g, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// TestProbes: /healthz always, /readyz as ready says, with its reason
// when not ready, the rest to next.
func TestProbes(t *testing.T) {
	ready := false
	h := Probes(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }), func() error {
		if !ready {
			return errors.New("events are not published")
		}
		return nil
	})
	for _, c := range []struct {
		path  string
		ready bool
		code  int
		body  string
	}{{"/healthz", false, 200, "ok\n"}, {"/readyz", false, 503, "not ready: events are not published\n"}, {"/readyz", true, 200, "ready\n"}, {"/other", true, http.StatusTeapot, ""}} {
		ready = c.ready
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", c.path, nil))
		if w.Code != c.code || w.Body.String() != c.body {
			t.Errorf("%s (ready %v): %d %q, want %d %q", c.path, c.ready, w.Code, w.Body.String(), c.code, c.body)
		}
	}
}
