package stack

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/buildinfo"
	"github.com/chemmy/chemmy/services/kit/grpcx"
)

// scrapeStack reads the families of the stack's /metrics.
func scrapeStack(t *testing.T, s *Stack) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + s.MetricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// value is the value of the one series of family name with exactly
// labels; it fails the test when there is not exactly one.
func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	var found []float64
	for _, m := range mfs[name].GetMetric() {
		has := map[string]string{}
		for _, l := range m.GetLabel() {
			has[l.GetName()] = l.GetValue()
		}
		if len(has) != len(labels) {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && has[k] == v
		}
		if match {
			found = append(found, m.GetGauge().GetValue()+m.GetCounter().GetValue())
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: %d series, want 1 (family: %v)", name, labels, len(found), mfs[name])
	}
	return found[0]
}

// TestOperationalMetrics: the stack's /metrics has the build's
// chemmy_build_info once; the embedded NATS server's own metrics
// (service="nats"); every service's certificate expiry and the CA's; and
// table-svc's gauges of open tables, seated players and watchers, which
// a restart finds again from the stored tables.
func TestOperationalMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	dir := t.TempDir()
	start := func() *Stack {
		s, err := Start(context.Background(), Config{DataDir: dir, TokensFile: "../../deploy/local/tokens.yaml", MetricsAddr: "127.0.0.1:0",
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := start()
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
			_ = s.Wait()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cc, err := grpc.NewClient(s.GatewayAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	tc := tablev1.NewTableServiceClient(cc)
	as := func(who string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+who+"-token")
	}
	var ids []string
	for i, game := range []tablev1.Variant{tablev1.Variant_VARIANT_CHEMIN_DE_FER, tablev1.Variant_VARIANT_CHEMIN_DE_FER, tablev1.Variant_VARIANT_PUNTO_BANCO} {
		r, err := tc.CreateTable(as("croupier"), &tablev1.CreateTableRequest{RequestId: "ops-t" + string(rune('a'+i)), Variant: game})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetTable().GetTableId())
	}
	for _, p := range []string{"alice", "bob"} {
		if _, err := tc.JoinTable(as(p), &tablev1.JoinTableRequest{RequestId: "ops-j-" + p, TableId: ids[0], PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tc.JoinTable(as("carol"), &tablev1.JoinTableRequest{RequestId: "ops-j-carol", TableId: ids[2], PlayerId: "carol"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.CloseTable(as("croupier"), &tablev1.CloseTableRequest{RequestId: "ops-close", TableId: ids[1], Reason: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	// Two watchers of the first table.
	for range 2 {
		w, err := tc.WatchTable(as("dave"), &tablev1.WatchTableRequest{TableId: ids[0]})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Recv(); err != nil {
			t.Fatal(err)
		}
	}

	mfs := scrapeStack(t, s)
	i := buildinfo.Get()
	rev := i.Revision
	if i.Modified {
		rev += "+modified"
	}
	if v := value(t, mfs, "chemmy_build_info", map[string]string{"version": i.Version, "revision": rev, "go": i.Go}); v != 1 {
		t.Errorf("chemmy_build_info = %v", v)
	}
	if n := len(mfs["chemmy_build_info"].GetMetric()); n != 1 {
		t.Errorf("chemmy_build_info: %d series, want the process's one", n)
	}
	table := func(name, variant string) float64 {
		return value(t, mfs, name, map[string]string{"service": "table-svc", "operator": "operator", "variant": variant})
	}
	if open, seated := table("chemmy_tables_open", "chemin_de_fer"), table("chemmy_players_seated", "chemin_de_fer"); open != 1 || seated != 2 {
		t.Errorf("chemin de fer: %v tables open, %v players seated; want 1 and 2 (one table closed)", open, seated)
	}
	if open, seated := table("chemmy_tables_open", "punto_banco"), table("chemmy_players_seated", "punto_banco"); open != 1 || seated != 1 {
		t.Errorf("punto banco: %v tables open, %v players seated; want 1 and 1", open, seated)
	}
	if open := table("chemmy_tables_open", "old_baccarat"); open != 0 {
		t.Errorf("old baccarat: %v tables open", open)
	}
	if w := value(t, mfs, "chemmy_table_watchers", map[string]string{"service": "table-svc"}); w != 2 {
		t.Errorf("%v watchers, want 2", w)
	}
	if c := value(t, mfs, "nats_connections", map[string]string{"service": "nats"}); c < 3 {
		t.Errorf("nats_connections %v, want the services' at least", c)
	}
	if n := value(t, mfs, "nats_jetstream_streams", map[string]string{"service": "nats"}); n != 1 {
		t.Errorf("nats_jetstream_streams %v, want CHEMMY", n)
	}
	if n := value(t, mfs, "nats_jetstream_messages", map[string]string{"service": "nats"}); n < 1 {
		t.Errorf("nats_jetstream_messages %v: no event stored", n)
	}
	if n := value(t, mfs, "nats_in_msgs_total", map[string]string{"service": "nats"}); n < 1 {
		t.Errorf("nats_in_msgs_total %v", n)
	}
	in30 := float64(time.Now().Add(30 * 24 * time.Hour).Unix())
	for _, svc := range []string{"gateway", "table-svc", "wallet-svc", "shoe-svc"} {
		for _, cert := range []string{"service", "ca"} {
			if at := value(t, mfs, "chemmy_certificate_expiry_timestamp_seconds", map[string]string{"service": svc, "cert": cert}); math.Abs(at-in30) > 300 {
				t.Errorf("%s's %s certificate expires at %v, want about %v (30 days)", svc, cert, at, in30)
			}
		}
	}

	// Started again: the tables are counted from the store.
	cc.Close()
	s.Stop()
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	s = start()
	mfs = scrapeStack(t, s)
	if open, seated := table("chemmy_tables_open", "chemin_de_fer"), table("chemmy_players_seated", "chemin_de_fer"); open != 1 || seated != 2 {
		t.Errorf("after a restart, chemin de fer: %v tables open, %v players seated; want 1 and 2", open, seated)
	}
	if w := value(t, mfs, "chemmy_table_watchers", map[string]string{"service": "table-svc"}); w != 0 {
		t.Errorf("after a restart: %v watchers", w)
	}
	var text bytes.Buffer
	for _, name := range []string{"chemmy_tables_open", "chemmy_players_seated"} {
		for _, m := range mfs[name].GetMetric() {
			text.WriteString(m.String())
		}
	}
	if !strings.Contains(text.String(), "baccarat_banque") {
		t.Errorf("no series for banque before its first table: %s", text.String())
	}
}

// TestTracingNamesEachService: with the standard environment pointing
// at an OTLP/HTTP collector, a call through the stack's gateway is
// exported with each service's spans under its own service.name (the
// gateway's server and client spans, table-svc's server span and its
// call to shoe-svc, shoe-svc's server span), whatever OTEL_SERVICE_NAME
// says: one process runs them all.
func TestTracingNamesEachService(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	var mu sync.Mutex
	spans := map[string][]string{} // service.name -> "kind name"
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		req := new(coltracepb.ExportTraceServiceRequest)
		if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(b, req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			name := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					name = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					spans[name] = append(spans[name], sp.GetKind().String()+" "+sp.GetName())
				}
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	defer collector.Close()
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "chemmy")

	s, err := Start(context.Background(), Config{DataDir: t.TempDir(), TokensFile: "../../deploy/local/tokens.yaml", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(s.GatewayAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer croupier-token")
	_, err = tablev1.NewTableServiceClient(cc).CreateTable(ctx, &tablev1.CreateTableRequest{RequestId: "traced"})
	cc.Close()
	s.Stop()
	if werr := s.Wait(); werr != nil {
		t.Error(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := grpcx.ShutdownTracing(sctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for svc, want := range map[string][]string{
		"gateway":   {"SPAN_KIND_SERVER chemmy.table.v1.TableService/CreateTable", "SPAN_KIND_CLIENT chemmy.table.v1.TableService/CreateTable"},
		"table-svc": {"SPAN_KIND_SERVER chemmy.table.v1.TableService/CreateTable", "SPAN_KIND_CLIENT chemmy.shoe.v1.ShoeService/CreateShoe"},
		"shoe-svc":  {"SPAN_KIND_SERVER chemmy.shoe.v1.ShoeService/CreateShoe"},
	} {
		for _, w := range want {
			if !slices.Contains(spans[svc], w) {
				t.Errorf("no %s span under service.name %q; spans by service: %v", w, svc, spans)
			}
		}
	}
	if len(spans["chemmy"]) != 0 {
		t.Errorf("spans under OTEL_SERVICE_NAME: %v", spans["chemmy"])
	}
}
