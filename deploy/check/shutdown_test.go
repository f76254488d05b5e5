package check

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gatewayDrain is how long the gateway may take to stop after SIGTERM,
// read from its source: its gRPC and HTTP servers drain at once, each for
// up to stopTimeout (gateway/gateway/gateway.go), then main flushes its
// traces for up to the timeout of ShutdownTracing (gateway/main.go).
func gatewayDrain(t *testing.T) time.Duration {
	t.Helper()
	seconds := func(file string, re *regexp.Regexp) time.Duration {
		b, err := os.ReadFile(filepath.Join(repo, file))
		if err != nil {
			t.Fatal(err)
		}
		m := re.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: %s not found (the test reads the gateway's stop timeouts from the source)", file, re)
		}
		n, _ := strconv.Atoi(string(m[1]))
		return time.Duration(n) * time.Second
	}
	stop := seconds("gateway/gateway/gateway.go", regexp.MustCompile(`const stopTimeout = (\d+) \* time\.Second`))
	tracing := seconds("gateway/main.go", regexp.MustCompile(`context\.WithTimeout\(context\.Background\(\), (\d+)\*time\.Second\)\s+defer cancel\(\)\s+_ = grpcx\.ShutdownTracing`))
	return stop + tracing
}

// TestGatewayShutdown: in every render with the gateway, its pod sleeps
// in preStop (endpoints drop it while it still serves) and its grace
// period covers that sleep plus the gateway's drain after SIGTERM.
func TestGatewayShutdown(t *testing.T) {
	drain := gatewayDrain(t)
	for _, dir := range dirs(t) {
		r := render(t, dir)
		if _, ok := r.Find("Deployment", "gateway"); !ok {
			continue
		}
		for _, v := range CheckGatewayShutdown(r, drain) {
			t.Errorf("%s: %s", dir, v)
		}
	}
}

func TestGatewayShutdownCatches(t *testing.T) {
	drain := gatewayDrain(t)
	for _, tc := range []struct {
		name  string
		spoil func(Render)
		want  string
	}{
		{"no preStop", func(r Render) { deployment(t, r, "gateway").Spec.Template.Spec.Containers[0].Lifecycle = nil },
			"container gateway: no preStop sleep"},
		{"grace too short", func(r Render) {
			deployment(t, r, "gateway").Spec.Template.Spec.TerminationGracePeriodSeconds = ptr(int64(20))
		},
			"terminationGracePeriodSeconds 20 does not exceed the preStop sleep (10s) plus the drain (15s)"},
		{"sleep raised alone", func(r Render) {
			deployment(t, r, "gateway").Spec.Template.Spec.Containers[0].Lifecycle.PreStop.Sleep.Seconds = 25
		}, "terminationGracePeriodSeconds 35 does not exceed the preStop sleep (25s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, "overlays/production")
			tc.spoil(r)
			got := CheckGatewayShutdown(r, drain)
			if len(got) == 0 || !containsSub(got, tc.want) {
				t.Errorf("not caught: want %q, got %q", tc.want, got)
			}
		})
	}
}

func containsSub(vs []string, sub string) bool {
	for _, v := range vs {
		if strings.Contains(v, sub) {
			return true
		}
	}
	return false
}
