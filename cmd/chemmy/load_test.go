package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
)

// TestLoad runs `chemmy load` briefly against a real stack: tables play
// coups and the report counts them.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	// The players play with their own tokens.
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if code := loadMain([]string{"-write-tokens", tokens, "-write-tokens-from", "../../deploy/local/tokens.yaml",
		"-player-token", "%s-token", "-prefix", "lt", "-tables", "2"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("-write-tokens: exit %d", code)
	}
	// And those of the idle tables (-idle).
	if code := loadMain([]string{"-write-tokens", tokens, "-write-tokens-from", tokens,
		"-player-token", "%s-token", "-prefix", "li", "-tables", "2"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("-write-tokens (idle): exit %d", code)
	}
	st, err := stack.Start(context.Background(), stack.Config{DataDir: t.TempDir(), TokensFile: tokens, Limits: gateway.LimitConfig{Rate: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { st.Stop(); _ = st.Wait() }()
	var out, errOut bytes.Buffer
	code := loadMain([]string{"-gateway", st.GatewayAddr, "-tables", "2", "-duration", "2s", "-noop", "300ms",
		"-prefix", "lt", "-player-token", "%s-token", "-watchers", "3"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "coups settled") || strings.Contains(out.String(), " 0 coups settled") ||
		!strings.Contains(out.String(), "tables given up: 0") || !strings.Contains(out.String(), "client RPCs per coup: ") ||
		!strings.Contains(out.String(), "no-op (gateway GetCaller, 2 in flight") ||
		!strings.Contains(out.String(), "watch streams: 3 watchers, 3 opened (0 again), ") ||
		!strings.Contains(out.String(), "ended by a stopping gateway (GATEWAY_DRAINING): 0, shard unavailable: 0, connection to the gateway broken: 0, otherwise: 0") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	// The last line is the ratio to the transport bound.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "ratio to the bound: ") || !strings.HasSuffix(last, "%") {
		t.Errorf("last line %q", last)
	}
	t.Log(out.String())
	out.Reset()
	code = loadMain([]string{"-gateway", st.GatewayAddr, "-tables", "2", "-idle", "-idle-offer", "1s", "-duration", "1s",
		"-prefix", "li", "-player-token", "%s-token"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "2 idle tables seated") || !strings.Contains(out.String(), "idle for ") {
		t.Fatalf("-idle: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	t.Log(out.String())
	if code := loadMain([]string{"-idle", "-idle-offer", "10ms"}, &out, &errOut); code != 2 {
		t.Errorf("-idle-offer 10ms: exit %d, want 2", code)
	}
	if code := loadMain([]string{"-tables", "0"}, &out, &errOut); code != 2 {
		t.Errorf("-tables 0: exit %d, want 2", code)
	}
	if code := loadMain([]string{"-noop", "2m"}, &out, &errOut); code != 2 {
		t.Errorf("-noop 2m: exit %d, want 2", code)
	}
	if code := loadMain([]string{"-max-attempts", "0"}, &out, &errOut); code != 2 {
		t.Errorf("-max-attempts 0: exit %d, want 2", code)
	}
}

// parseMetrics reads the process CPU and the store counters by file from
// a Prometheus text exposition.
func TestParseMetrics(t *testing.T) {
	text := `# HELP chemmy_store_fsyncs_total fdatasync calls
# TYPE chemmy_store_fsyncs_total counter
chemmy_store_fsyncs_total{db="table"} 120
chemmy_store_fsyncs_total{db="shoe"} 8e+01
chemmy_store_commits_total{db="table"} 60
chemmy_store_commits_total{db="shoe"} 40
chemmy_store_group_calls_total{db="table"} 300
process_cpu_seconds_total 12.5
go_goroutines 42
`
	s, err := parseMetrics(strings.NewReader(text), sample{commits: map[string]float64{}, fsyncs: map[string]float64{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.cpu != 12.5 || s.fsyncs["table"] != 120 || s.fsyncs["shoe"] != 80 || s.commits["table"] != 60 || s.commits["shoe"] != 40 || len(s.fsyncs) != 2 {
		t.Fatalf("%+v", s)
	}
	if _, err := parseMetrics(strings.NewReader("go_goroutines 1\n"), sample{commits: map[string]float64{}, fsyncs: map[string]float64{}}); err == nil {
		t.Error("no process or store metrics: accepted")
	}
	var out bytes.Buffer
	before := []sample{{cpu: 1, fsyncs: map[string]float64{"table": 10, "shoe": 0}, commits: map[string]float64{"table": 5}}}
	after := []sample{{cpu: 3, fsyncs: map[string]float64{"table": 30, "shoe": 20}, commits: map[string]float64{"table": 15, "shoe": 10}}}
	reportMetrics(&out, []string{"stack"}, before, after, func(v float64) float64 { return v / 10 })
	want := "fsyncs per coup: 4.00 in all; shoe 2.00 (1.00 commits), table 2.00 (1.00 commits)\n" +
		"CPU per coup (process of each metrics URL): stack 200.00 ms\n"
	if out.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestLoadDelta: the counters of the coup's figures (RPCs answered per
// service, allocation, stored event bytes, events published), read from
// two expositions; the internal RPCs are those of the services behind
// the gateway.
func TestLoadDelta(t *testing.T) {
	expo := func(gw, table, wallet, alloc, js, pub float64) sample {
		t.Helper()
		text := fmt.Sprintf(`grpc_server_handled_total{grpc_code="OK",grpc_method="PlaceBet",grpc_service="chemmy.table.v1.TableService",grpc_type="unary",service="gateway"} %g
grpc_server_handled_total{grpc_code="OK",grpc_method="PlaceBet",grpc_service="chemmy.table.v1.TableService",grpc_type="unary",service="table-svc"} %g
grpc_server_handled_total{grpc_code="Aborted",grpc_method="PlaceHold",grpc_service="chemmy.wallet.v1.WalletService",grpc_type="unary",service="wallet-svc"} 1
grpc_server_handled_total{grpc_code="OK",grpc_method="PlaceHold",grpc_service="chemmy.wallet.v1.WalletService",grpc_type="unary",service="wallet-svc"} %g
go_memstats_alloc_bytes_total %g
nats_jetstream_bytes %g
chemmy_outbox_published_total{db="table"} %g
chemmy_store_fsyncs_total{db="wallet"} %g
chemmy_store_group_calls_total{db="wallet"} %g
chemmy_store_group_calls_total{db="shoe"} %g
process_cpu_seconds_total 1
`, gw, table, wallet, alloc, js, pub, 4*wallet, wallet, table/20)
		s, err := parseMetrics(strings.NewReader(text), sample{commits: map[string]float64{}, fsyncs: map[string]float64{}, writes: map[string]float64{},
			published: map[string]float64{}, handled: map[string]float64{}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	d := deltaOf([]sample{expo(10, 20, 5, 1000, 500, 7)}, []sample{expo(40, 80, 35, 9000, 2500, 47)})
	if d.handled["gateway"] != 30 || d.handled["table-svc"] != 60 || d.handled["wallet-svc"] != 30 || d.internal() != 90 {
		t.Errorf("RPCs answered %v, internal %v; want gateway 30, table-svc 60, wallet-svc 30, internal 90", d.handled, d.internal())
	}
	if d.alloc != 8000 || d.streamBytes != 2000 || d.sum(d.published) != 40 {
		t.Errorf("alloc %v, stream bytes %v, events %v; want 8000, 2000, 40", d.alloc, d.streamBytes, d.sum(d.published))
	}
	// Durable writes are the store's writer calls, not its fsyncs (120).
	if d.writes["wallet"] != 30 || d.writes["shoe"] != 3 || d.sum(d.writes) != 33 {
		t.Errorf("durable writes %v; want wallet 30, shoe 3 (writer calls, not fsyncs)", d.writes)
	}
	per := func(v float64) float64 { return v / 10 }
	if got := d.internalParts(per); got != "table-svc 6.00, wallet-svc 3.00" {
		t.Errorf("internal parts %q", got)
	}
}

// TestReportPace: a human-pace run's report gives each action's p50 and
// p99 over every table, and says whether every p99 is under 100 ms.
func TestReportPace(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	results := []tableResult{
		{actions: map[string][]time.Duration{"PlaceBet": ms(10, 20, 30), "AcceptBank": ms(5)}},
		{actions: map[string][]time.Duration{"PlaceBet": ms(40, 50)}},
	}
	var out bytes.Buffer
	reportPace(&out, time.Minute, 2, time.Minute, results)
	for _, want := range []string{"pace 1m0s (±10%, open loop): 2 tables, 0.03 coups/s expected\n",
		"  AcceptBank: 1 calls, p50 5ms, p99 5ms\n", "  PlaceBet: 5 calls, p50 30ms, p99 50ms\n",
		"every action's p99 under 100ms: yes (worst PlaceBet p99 50ms)\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	results[1].actions["DecideDraw"] = ms(150)
	reportPace(&out, time.Minute, 2, time.Minute, results)
	if !strings.Contains(out.String(), "every action's p99 under 100ms: no (worst DecideDraw p99 150ms)") {
		t.Errorf("a slow action passed:\n%s", out.String())
	}
}
