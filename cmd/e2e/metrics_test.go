package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape reads the metric families of a /metrics URL.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, url)
	if code != http.StatusOK {
		t.Fatalf("%s: %d", url, code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return mfs
}

// series is the sum of the series of family name whose labels include
// labels (a counter's or gauge's value, a histogram's count), and how
// many there are.
func series(mfs map[string]*dto.MetricFamily, name string, labels map[string]string) (sum float64, n int) {
	for _, m := range mfs[name].GetMetric() {
		has := map[string]string{}
		for _, l := range m.GetLabel() {
			has[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			if has[k] != v {
				match = false
			}
		}
		if match {
			n++
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, n
}

// l builds a label set from name, value pairs.
func l(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestMetricsOfTheStack plays a coup (examples/coup-http.sh) on a stack
// that serves metrics as `make run` does (one address, every series
// labelled service) and reads them: the probes of the metrics address and
// of the gateway's HTTP side; the gRPC server and client metrics of the
// gateway and of table-svc, with HandlingTimeBuckets; table-svc's timers
// and retry queue; each service's outbox relay and store counters (its
// own file only); the business metrics of table-svc (coups by game and
// outcome, bets, wagered, settlement latency) and of wallet-svc
// (settlements, commission equal to house:commission's balance, open
// holds and escrow equal to the ledger audit's); one process's runtime
// metrics; and every metric the Grafana dashboard queries.
func TestMetricsOfTheStack(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl on PATH")
	}
	st := startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1}, GatewayHTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0"})
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "examples", "coup-http.sh"))
	cmd.Env = append(os.Environ(), "CHEMMY_HTTP="+st.GatewayHTTPAddr, "CURL="+curl, "RUN_ID=e2e-metrics")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("coup-http.sh: %v\n%s", err, out.String())
	}
	for _, a := range []string{st.MetricsAddr, st.GatewayHTTPAddr} {
		for _, p := range []string{"/healthz", "/readyz"} {
			if code, body := get(t, "http://"+a+p); code != 200 {
				t.Errorf("%s%s: %d %s", a, p, code, body)
			}
		}
	}
	url := "http://" + st.MetricsAddr + "/metrics"
	// The relays publish after the commits: wait for the outboxes to
	// drain (everything else is counted as it is stored).
	var mfs map[string]*dto.MetricFamily
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		mfs = scrape(t, url)
		backlog, n := series(mfs, "chemmy_outbox_backlog", nil)
		target, nt := series(mfs, "chemmy_event_stream_retention_target_seconds", nil)
		if backlog == 0 && n == 3 && nt == 3 && target == 3*7*86400 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outbox backlog %v in %d series; retention target %v in %d series", backlog, n, target, nt)
		}
	}
	// The stack's stream keeps its 7 days: a coup is far from 1 GiB.
	if short, n := series(mfs, "chemmy_event_stream_retention_short", nil); short != 0 || n != 3 {
		t.Errorf("chemmy_event_stream_retention_short: %v in %d series, want 0 in 3", short, n)
	}

	c := dial(t, st.GatewayAddr)
	house := c.balance(t, "house:commission")
	audit, err := c.wallet.AuditLedger(as(t, "auditor"), &walletv1.AuditLedgerRequest{})
	if err != nil || len(audit.GetCurrencies()) != 1 {
		t.Fatalf("audit %v: %v", audit, err)
	}
	var outcome string
	for _, o := range []string{"bank_wins", "bank_loses", "stand_off"} {
		if n, _ := series(mfs, "chemmy_coups_total", l("service", "table-svc", "variant", "chemin_de_fer", "outcome", o)); n == 1 {
			outcome = o
		}
	}
	commission := 0.0
	if outcome == "bank_wins" {
		commission = float64(house)
	}
	cf, eur := "chemin_de_fer", "EUR"
	exactly := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		// Forwarded calls are streams of frames at the gateway, both ways.
		{"grpc_server_handled_total", l("service", "gateway", "grpc_method", "PlaceBet", "grpc_type", "bidi_stream", "grpc_code", "OK"), 2},
		{"grpc_client_handled_total", l("service", "gateway", "grpc_method", "PlaceBet", "grpc_type", "bidi_stream", "grpc_code", "OK"), 2},
		{"grpc_server_handled_total", l("service", "table-svc", "grpc_method", "PlaceBet", "grpc_type", "unary", "grpc_code", "OK"), 2},
		{"grpc_client_handled_total", l("service", "table-svc", "grpc_method", "SettleCoup", "grpc_code", "OK"), 1},
		{"chemmy_table_stuck", l("service", "table-svc"), 0},
		// One coup, by game; its two bets of 600 and 400.
		{"chemmy_coups_total", l("service", "table-svc", "variant", cf), 1},
		{"chemmy_coups_total", l("service", "table-svc", "variant", cf, "outcome", outcome), 1},
		{"chemmy_bets_total", l("service", "table-svc", "variant", cf, "kind", "bet"), 2},
		{"chemmy_wagered_minor_units_total", l("service", "table-svc", "variant", cf, "kind", "bet"), 1000},
		{"chemmy_settlement_seconds", l("service", "table-svc", "variant", cf), 1},
		// The wallet's business series name the operator (the demo
		// tokens': the default one).
		{"chemmy_settlements_total", l("service", "wallet-svc", "operator", "operator", "variant", cf), 1},
		// The house's commission account holds exactly what was counted.
		{"chemmy_commission_minor_units_total", l("service", "wallet-svc", "variant", cf, "currency", eur), commission},
		{"chemmy_wallet_transfers_total", l("service", "wallet-svc", "reason", "deposit"), 3},
		// The holds left open (the banker's, when she keeps the bank):
		// what the ledger's audit finds.
		{"chemmy_holds_open", l("service", "wallet-svc", "currency", eur), float64(audit.GetOpenHolds())},
		{"chemmy_escrow_minor_units", l("service", "wallet-svc", "currency", eur), float64(audit.GetCurrencies()[0].GetHeld())},
	}
	for _, w := range exactly {
		if got, n := series(mfs, w.name, w.labels); n == 0 || got != w.want {
			t.Errorf("%s%v: %v in %d series, want %v", w.name, w.labels, got, n, w.want)
		}
	}
	if outcome == "" {
		t.Error("no coup counted with a result")
	}
	type metric struct {
		name   string
		labels map[string]string
	}
	positive := []metric{
		// A coup opens with one DealCards call (its four cards and the
		// third cards the tableau forces); DealCard deals a third card
		// only after a decision.
		{"grpc_client_handled_total", l("service", "table-svc", "grpc_method", "DealCards", "grpc_code", "OK")},
	}
	for _, db := range []string{"table", "wallet", "shoe"} {
		svc := db + "-svc"
		positive = append(positive, metric{"chemmy_outbox_published_total", l("service", svc, "db", db)},
			metric{"chemmy_store_commits_total", l("service", svc, "db", db)}, metric{"chemmy_store_fsyncs_total", l("service", svc, "db", db)})
		if _, n := series(mfs, "chemmy_outbox_publish_errors_total", l("service", svc, "db", db)); n != 1 {
			t.Errorf("chemmy_outbox_publish_errors_total of %s: %d series", svc, n)
		}
		// Each store's counters under its own service only.
		if _, n := series(mfs, "chemmy_store_commits_total", l("db", db)); n != 1 {
			t.Errorf("chemmy_store_commits_total{db=%q}: %d series, want 1 (its service's)", db, n)
		}
	}
	for _, w := range positive {
		if got, n := series(mfs, w.name, w.labels); n == 0 || got <= 0 {
			t.Errorf("%s%v: %v in %d series, want > 0", w.name, w.labels, got, n)
		}
	}
	if _, n := series(mfs, "chemmy_table_timers_pending", l("service", "table-svc")); n != 1 {
		t.Errorf("chemmy_table_timers_pending: %d series", n)
	}
	// One process: its runtime metrics once, without a service.
	if _, n := series(mfs, "process_cpu_seconds_total", nil); n != 1 {
		t.Errorf("process_cpu_seconds_total: %d series, want 1", n)
	}
	// The handling time histograms' buckets: 0.5 ms to 10 s.
	for _, name := range []string{"grpc_server_handling_seconds", "grpc_client_handling_seconds"} {
		var les []float64
		for _, b := range mfs[name].GetMetric()[0].GetHistogram().GetBucket() {
			les = append(les, b.GetUpperBound())
		}
		if len(les) < 2 || les[0] != 0.0005 || les[len(les)-2] != 10 || !math.IsInf(les[len(les)-1], 1) {
			t.Errorf("%s buckets %v, want 0.0005 .. 10", name, les)
		}
	}
	checkDashboard(t, mfs)
}

// checkDashboard: every metric the Grafana dashboard's queries name is
// exported (a histogram by its _bucket series), with every label its
// selectors and groupings name (but le, Prometheus's own, and instance).
func checkDashboard(t *testing.T, mfs map[string]*dto.MetricFamily) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "grafana", "chemmy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	labels := map[string]map[string]bool{}
	for name, mf := range mfs {
		labels[name] = map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				labels[name][lp.GetName()] = true
			}
		}
	}
	by := regexp.MustCompile(`by \(([^)]*)\)`)
	// A metric's name, then its selector if any; label names only
	// appear in a selector or a grouping (by), both skipped.
	metric := regexp.MustCompile(`\{[^}]*\}|\b((?:chemmy|grpc|process)_[a-z0-9_]+)(\{[^}]*\})?`)
	matcher := regexp.MustCompile(`([a-z_]+)\s*(?:=~|!=|!~|=)`)
	queries := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			queries++
			var names []string
			for _, m := range metric.FindAllStringSubmatch(by.ReplaceAllString(tg.Expr, ""), -1) {
				name := m[1]
				if name == "" {
					continue // a selector without a name
				}
				if base, ok := strings.CutSuffix(name, "_bucket"); ok && mfs[base].GetType() == dto.MetricType_HISTOGRAM {
					name = base
				}
				if mfs[name] == nil {
					t.Errorf("panel %q: %s is not exported", p.Title, m[1])
					continue
				}
				names = append(names, name)
				for _, lm := range matcher.FindAllStringSubmatch(m[2], -1) {
					if !labels[name][lm[1]] {
						t.Errorf("panel %q: %s has no label %s", p.Title, name, lm[1])
					}
				}
			}
			for _, g := range by.FindAllStringSubmatch(tg.Expr, -1) {
				for _, lbl := range strings.Split(g[1], ",") {
					lbl = strings.TrimSpace(lbl)
					if lbl == "le" || lbl == "instance" {
						continue
					}
					if !slices.ContainsFunc(names, func(n string) bool { return labels[n][lbl] }) {
						t.Errorf("panel %q: no metric of %q has the label %s", p.Title, tg.Expr, lbl)
					}
				}
			}
		}
	}
	if queries < 20 {
		t.Errorf("the dashboard has %d queries", queries)
	}
}
