package grpcx

import (
	"io"
	"net/http"
	"slices"
	"strings"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// HandlingTimeBuckets are the buckets, in seconds, of the gRPC handling
// time histograms (grpc_server_handling_seconds,
// grpc_client_handling_seconds): 0.5 ms to 10 s, about ×2–2.5 apart, for
// calls that take from a cached read (sub-millisecond) to a group
// commit with fsyncs (milliseconds) to a call waiting on a slow backend
// (seconds). Slower calls count in +Inf.
var HandlingTimeBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// NewServerMetrics is the gRPC server metrics of chemmy's servers:
// grpc_server_* counters and the handling time histogram in
// HandlingTimeBuckets.
func NewServerMetrics() *grpcprom.ServerMetrics {
	return grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(HandlingTimeBuckets)))
}

// NewClientMetrics is the gRPC client metrics of chemmy's calls to
// another service: grpc_client_* counters and the handling time
// histogram in HandlingTimeBuckets.
func NewClientMetrics() *grpcprom.ClientMetrics {
	return grpcprom.NewClientMetrics(grpcprom.WithClientHandlingTimeHistogram(grpcprom.WithHistogramBuckets(HandlingTimeBuckets)))
}

// LabelGatherer gathers Gatherer's metrics with one more label, Name =
// Value, on every series (e.g. service="table", when several services'
// registries are served on one address: prometheus.Gatherers of
// LabelGatherers). The series must not have that label already.
type LabelGatherer struct {
	Gatherer    prometheus.Gatherer
	Name, Value string
}

// Gather implements prometheus.Gatherer.
func (l LabelGatherer) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := l.Gatherer.Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name, value := l.Name, l.Value
			m.Label = append(m.Label, &dto.LabelPair{Name: &name, Value: &value})
			slices.SortFunc(m.Label, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
		}
	}
	return mfs, err
}

// Probes serves /healthz (200 "ok" while the process runs: a liveness
// probe) and /readyz (200 "ready" while ready() says so, else 503 "not
// ready": a readiness probe; nil ready is always ready), and passes every
// other request to next (nil: 404).
func Probes(next http.Handler, ready func() bool) http.Handler {
	if next == nil {
		next = http.NotFoundHandler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			_, _ = io.WriteString(w, "ok\n")
		case "/readyz":
			if ready != nil && !ready() {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, "not ready\n")
				return
			}
			_, _ = io.WriteString(w, "ready\n")
		default:
			next.ServeHTTP(w, r)
		}
	})
}
