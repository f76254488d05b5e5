package walletsvc

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

// logBuffer is a log sink safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitUntil polls cond until it holds, failing after 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// probeEnv starts a seamless wallet on op probing every 2 ms, logging
// into logs.
func probeEnv(t *testing.T, op opwallet.Operator, logs *logBuffer) *env {
	e := &env{t: t, path: filepath.Join(t.TempDir(), "wallet.db")}
	e.config = func(c *Config) {
		c.Operator, c.operatorBackoff, c.OperatorProbeInterval = op, time.Millisecond, 2*time.Millisecond
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}
	e.start()
	t.Cleanup(e.stop)
	return e
}

func (e *env) probeFailures(kind string) float64 {
	return testutil.ToFloat64(e.svc.opMetrics.probeFailures.WithLabelValues(e.svc.opID, kind))
}

func (e *env) operatorUp() float64 { return e.operatorUpOf(e.svc.opID) }

// operatorUpOf is chemmy_operator_up{operator=op}; -1 when the series
// does not exist.
func (e *env) operatorUpOf(op string) float64 {
	return e.gauge(e.svc.opMetrics.up, "chemmy_operator_up", map[string]string{"operator": op})
}

// gauge is the value of c's series name with exactly labels; -1 when c
// has no such series.
func (e *env) gauge(c prometheus.Collector, name string, labels map[string]string) float64 {
	e.t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		e.t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if maps.Equal(got, labels) {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// wantHealth checks the health status of service name.
func (e *env) wantHealth(name string, want healthpb.HealthCheckResponse_ServingStatus) {
	e.t.Helper()
	r, err := healthpb.NewHealthClient(e.conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: name})
	if err != nil || r.GetStatus() != want {
		e.t.Fatalf("health of %q: %v %v, want %v", name, r.GetStatus(), err, want)
	}
}

// TestOperatorProbe: while the operator's balance answers are not signed
// with our secret, chemmy_operator_up is 0, the operator health service
// is NOT_SERVING (the server itself stays SERVING) and one ERROR names
// the secret; once a signed refusal (UNKNOWN_PLAYER) comes back, up is 1.
func TestOperatorProbe(t *testing.T) {
	op := newFakeOp()
	op.setBalanceErr(fmt.Errorf("%w: balance: status 401 answer not trusted: opwallet: signature does not match", opwallet.ErrUnknownOutcome))
	logs := &logBuffer{}
	e := probeEnv(t, op, logs)
	waitUntil(t, "three failed probes", func() bool { return e.probeFailures(probeBadSignature) >= 3 })
	if e.operatorUp() != 0 {
		t.Fatal("chemmy_operator_up is 1 with a bad signature")
	}
	e.wantHealth(OperatorHealthService, healthpb.HealthCheckResponse_NOT_SERVING)
	e.wantHealth("", healthpb.HealthCheckResponse_SERVING)
	if n := strings.Count(logs.String(), "check -operator-secret-file"); n != 1 {
		t.Fatalf("%d ERRORs naming the secret, want 1: %s", n, logs)
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Fatalf("no ERROR logged: %s", logs)
	}

	op.setBalanceErr(&opwallet.Refusal{Status: http.StatusNotFound, Code: opwallet.CodeUnknownPlayer})
	waitUntil(t, "chemmy_operator_up 1", func() bool { return e.operatorUp() == 1 })
	e.wantHealth(OperatorHealthService, healthpb.HealthCheckResponse_SERVING)

	op.setBalanceErr(&opwallet.Refusal{Status: http.StatusUnauthorized, Code: opwallet.CodeInvalidSignature})
	waitUntil(t, "a refused signature", func() bool { return e.operatorUp() == 0 })
	if e.probeFailures(probeRefusedSig) == 0 {
		t.Fatal("a signed INVALID_SIGNATURE refusal was not counted")
	}
}

// TestOperatorProbeOverHTTP probes through the HTTP adapter: the
// reference wallet with the right secret (the probe player is unknown to
// it: a signed refusal) is up; with a wrong secret, a server answering
// unsigned 404s (a wrong URL) and a closed port each fail with their kind;
// a wallet started with the wrong secret reports 0 and logs the secret as
// the cause, restarted with the right one reports 1.
func TestOperatorProbeOverHTTP(t *testing.T) {
	secret := []byte("right-secret")
	ref, err := refwallet.Start(context.Background(), refwallet.Config{DataFile: filepath.Join(t.TempDir(), "ref.db"), Secret: secret,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ref.Stop() })
	web := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(web.Close)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + lis.Addr().String()
	lis.Close()
	client := func(url string, key []byte) opwallet.Operator {
		c, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: url, Secret: key, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for name, c := range map[string]struct {
		url  string
		key  []byte
		want string
	}{
		"right secret": {ref.BaseURL(), secret, ""},
		"wrong secret": {ref.BaseURL(), []byte("wrong"), probeBadSignature},
		"wrong url":    {web.URL + "/chemmy", secret, probeUnsigned},
		"closed port":  {closed, secret, probeUnreachable},
	} {
		_, err := client(c.url, c.key).Balance(context.Background(), opwallet.BalanceRequest{PlayerID: DefaultOperatorProbePlayer, Currency: "EUR"})
		if got := probeKind(err); got != c.want {
			t.Errorf("%s: kind %q (%v), want %q", name, got, err, c.want)
		}
	}

	logs := &logBuffer{}
	e := probeEnv(t, client(ref.BaseURL(), []byte("wrong")), logs)
	waitUntil(t, "a failed probe", func() bool { return e.probeFailures(probeBadSignature) > 0 })
	if e.operatorUp() != 0 {
		t.Fatal("chemmy_operator_up is 1 with a wrong secret")
	}
	e.wantHealth(OperatorHealthService, healthpb.HealthCheckResponse_NOT_SERVING)
	if !strings.Contains(logs.String(), "not signed with our secret: check -operator-secret-file") {
		t.Fatalf("the log does not name the secret: %s", logs)
	}
	e.config = func(c *Config) {
		c.Operator, c.OperatorProbeInterval = client(ref.BaseURL(), secret), 2*time.Millisecond
		c.Logger = slog.New(slog.DiscardHandler)
	}
	e.restart()
	waitUntil(t, "chemmy_operator_up 1", func() bool { return e.operatorUp() == 1 })
	e.wantHealth(OperatorHealthService, healthpb.HealthCheckResponse_SERVING)
}
