package gateway

import (
	"io"
	"net/http"
	"testing"
)

// TestHTTPProbes: the HTTP side answers /healthz and /readyz (503 once
// the gateway stops serving), next to the API.
func TestHTTPProbes(t *testing.T) {
	e := startEnv(t)
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + e.gw.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := get(p); code != http.StatusOK {
			t.Errorf("%s: %d %q", p, code, body)
		}
	}
	e.gw.health.Shutdown() // as at the start of a graceful stop
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz of a gateway that stops serving: %d %q", code, body)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz of a running process: %d", code)
	}
}
