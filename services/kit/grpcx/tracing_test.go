package grpcx

import (
	"os"
	"testing"
)

// TestTracingOffByDefault: without OTEL_EXPORTER_OTLP_ENDPOINT no span is
// recorded and no option is added.
func TestTracingOffByDefault(t *testing.T) {
	if TracingEnabled() {
		t.Skip("the environment configures tracing")
	}
	if os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		t.Skip("the environment configures tracing")
	}
	if len(ServerTracing()) != 0 || len(ClientTracing()) != 0 {
		t.Error("tracing options without configuration")
	}
}
