package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/grpcx"
)

// lockedBuffer is a bytes.Buffer for several writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hop finds, among spans, the span of kind named name whose parent is
// parent's (any parent when parent is nil: a trace's root has none), and
// fails the test if there is none.
func hop(t *testing.T, spans []sdktrace.ReadOnlySpan, parent sdktrace.ReadOnlySpan, kind trace.SpanKind, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range spans {
		if s.SpanKind() != kind || s.Name() != name {
			continue
		}
		if parent == nil && !s.Parent().IsValid() {
			return s
		}
		if parent != nil && s.Parent().TraceID() == parent.SpanContext().TraceID() && s.Parent().SpanID() == parent.SpanContext().SpanID() {
			return s
		}
	}
	var have []string
	for _, s := range spans {
		have = append(have, s.SpanKind().String()+" "+s.Name())
	}
	t.Fatalf("no %s span %s under %v; spans:\n%s", kind, name, parent, strings.Join(have, "\n"))
	return nil
}

// TestOneTraceAcrossServices: with tracing on (here an in-memory exporter
// in place of OTLP), a call through the gateway is one trace across the
// services, each hop a child of the one before: the gateway's server
// span, its call to table-svc, table-svc's server span, its call to
// wallet-svc (PlaceBet: the bet's hold) or shoe-svc (CreateTable: the
// table's shoe) and that service's server span. The log lines written
// while handling the call, in every service, carry its trace id.
func TestOneTraceAcrossServices(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(grpcx.UseTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	var logs lockedBuffer
	st, err := stack.Start(context.Background(), stack.Config{DataDir: t.TempDir(), TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1},
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob")
	created, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: "trace-table"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "trace-join-" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "trace-bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "trace-bet", TableId: id, PlayerId: "bob", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	// Stopped: every span has ended, every line is written.
	st.Stop()
	if err := st.Wait(); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	traces := map[string]trace.TraceID{}
	for _, call := range []struct{ method, backend string }{
		{"chemmy.table.v1.TableService/PlaceBet", "chemmy.wallet.v1.WalletService/PlaceHold"},
		{"chemmy.table.v1.TableService/CreateTable", "chemmy.shoe.v1.ShoeService/CreateShoe"},
	} {
		gw := hop(t, spans, nil, trace.SpanKindServer, call.method)
		toTable := hop(t, spans, gw, trace.SpanKindClient, call.method)
		table := hop(t, spans, toTable, trace.SpanKindServer, call.method)
		toBackend := hop(t, spans, table, trace.SpanKindClient, call.backend)
		backend := hop(t, spans, toBackend, trace.SpanKindServer, call.backend)
		if backend.SpanContext().TraceID() != gw.SpanContext().TraceID() {
			t.Errorf("%s: the backend's span is in trace %s, the gateway's in %s", call.method, backend.SpanContext().TraceID(), gw.SpanContext().TraceID())
		}
		traces[call.method] = gw.SpanContext().TraceID()
	}
	// The lines of the bet's trace: the gateway's, table-svc's and
	// wallet-svc's logs of the calls it made.
	bet := traces["chemmy.table.v1.TableService/PlaceBet"].String()
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["trace_id"] == bet {
			if s, _ := m["span_id"].(string); len(s) != 16 {
				t.Errorf("line of the trace without its span id: %s", line)
			}
			seen[m["service"].(string)] = true
		}
	}
	for _, svc := range []string{"gateway", "table-svc", "wallet-svc"} {
		if !seen[svc] {
			t.Errorf("no %s log line with the bet's trace id %s (lines from %v)", svc, bet, seen)
		}
	}
}
