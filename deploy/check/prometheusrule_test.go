package check

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// registeredMetrics: the metric names chemmy's Go code exports: every
// "chemmy_..." string literal of its non-test sources, and the gRPC
// server metrics of go-grpc-middleware's prometheus provider when a
// server's metrics are made with it (grpcprom.NewServerMetrics).
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	lit := regexp.MustCompile(`"(chemmy_[a-z0-9_]+)"`)
	out := map[string]bool{}
	grpcServer := false
	for _, mod := range workModules(t) {
		err := filepath.WalkDir(filepath.Join(repo, mod), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range lit.FindAllSubmatch(b, -1) {
				out[string(m[1])] = true
			}
			grpcServer = grpcServer || strings.Contains(string(b), "grpcprom.NewServerMetrics(")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if grpcServer {
		for _, n := range []string{"grpc_server_started_total", "grpc_server_handled_total", "grpc_server_msg_received_total",
			"grpc_server_msg_sent_total", "grpc_server_handling_seconds"} {
			out[n] = true
		}
	}
	return out
}

// exported: name is a registered metric, or a histogram's series of one.
func exported(reg map[string]bool, name string) bool {
	for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && reg[base] {
			return true
		}
	}
	return false
}

// TestPrometheusRule: every render with the prometheus component has the
// PrometheusRule chemmy with the eight alerts (stuck tables, outbox
// backlog, escrow intents, error rate, certificate expiry, event
// retention, an operator's wallet down, an operator's open wallet
// exceptions), each with a
// for duration, a severity and a summary, reading only metrics the code
// exports.
func TestPrometheusRule(t *testing.T) {
	reg := registeredMetrics(t)
	for _, want := range []string{"chemmy_table_stuck", "chemmy_outbox_backlog", "chemmy_certificate_expiry_timestamp_seconds", "grpc_server_handled_total"} {
		if !reg[want] {
			t.Fatalf("%s not found in the Go sources: the scan is wrong", want)
		}
	}
	found := 0
	for _, dir := range dirs(t) {
		r := render(t, dir)
		if len(r.Kind("ServiceMonitor")) == 0 {
			continue
		}
		found++
		o, ok := r.Find("PrometheusRule", "chemmy")
		if !ok {
			t.Errorf("%s: no PrometheusRule chemmy beside the ServiceMonitor", dir)
			continue
		}
		var alerts []string
		for _, g := range o.Value.(*PrometheusRule).Spec.Groups {
			for _, rule := range g.Rules {
				at := dir + ": alert " + rule.Alert
				alerts = append(alerts, rule.Alert)
				if d, err := time.ParseDuration(rule.For); err != nil || d <= 0 {
					t.Errorf("%s: for %q is not a duration", at, rule.For)
				}
				if rule.Labels["severity"] == "" || rule.Annotations["summary"] == "" {
					t.Errorf("%s: no severity label or summary annotation", at)
				}
				if strings.Count(rule.Expr, "(") != strings.Count(rule.Expr, ")") {
					t.Errorf("%s: unbalanced parentheses in %q", at, rule.Expr)
				}
				metrics := PromQLMetrics(rule.Expr)
				if len(metrics) == 0 {
					t.Errorf("%s: reads no metric", at)
				}
				for _, m := range metrics {
					if !exported(reg, m) {
						t.Errorf("%s: %s is no metric the Go code registers", at, m)
					}
				}
			}
		}
		slices.Sort(alerts)
		if want := []string{"ChemmyCertificateExpiry", "ChemmyErrorRate", "ChemmyEscrowIntents", "ChemmyEventRetentionShort",
			"ChemmyOperatorExceptions", "ChemmyOperatorWalletDown", "ChemmyOutboxBacklog", "ChemmyTablesStuck"}; !slices.Equal(alerts, want) {
			t.Errorf("%s: alerts %v, want %v", dir, alerts, want)
		}
	}
	if found == 0 {
		t.Fatal("no render with the prometheus component")
	}
}

func TestPromQLMetrics(t *testing.T) {
	for expr, want := range map[string][]string{
		`max by (namespace, pod) (chemmy_table_stuck) > 0`: {"chemmy_table_stuck"},
		`sum by (service) (rate(grpc_server_handled_total{grpc_code=~"Unknown|Internal"}[5m])) / sum by (service) (rate(grpc_server_handled_total[5m])) > 0.05`: {"grpc_server_handled_total", "grpc_server_handled_total"},
		`(chemmy_certificate_expiry_timestamp_seconds - time()) < 7 * 86400`:                                                                                    {"chemmy_certificate_expiry_timestamp_seconds"},
		`histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m]))) > 1e3 and on(pod) y`:                                                                        {"x_bucket", "y"},
	} {
		if got := PromQLMetrics(expr); !slices.Equal(got, want) {
			t.Errorf("PromQLMetrics(%s) = %v, want %v", expr, got, want)
		}
	}
	if reg := map[string]bool{"chemmy_table_stuck": true}; exported(reg, "chemmy_tables_stuck") {
		t.Error("a misspelt metric passed")
	}
}
