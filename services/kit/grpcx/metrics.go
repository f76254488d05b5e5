package grpcx

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
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
// probe) and /readyz (200 "ready" while ready() returns nil, else 503
// "not ready: " and the reason it returned: a readiness probe; nil ready
// is always ready), and passes every other request to next (nil: 404).
func Probes(next http.Handler, ready func() error) http.Handler {
	if next == nil {
		next = http.NotFoundHandler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			_, _ = io.WriteString(w, "ok\n")
		case "/readyz":
			if ready != nil {
				if err := ready(); err != nil {
					w.Header().Set("Content-Type", "text/plain; charset=utf-8")
					w.WriteHeader(http.StatusServiceUnavailable)
					_, _ = io.WriteString(w, "not ready: "+strings.ReplaceAll(err.Error(), "\n", "; ")+"\n")
					return
				}
			}
			_, _ = io.WriteString(w, "ready\n")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// UnknownMethod is the full method name under which UnaryServerMetrics
// and StreamServerMetrics count a call of a method the server does not
// know: grpc_service="unknown", grpc_method="unknown".
const UnknownMethod = "/unknown/unknown"

// UnaryServerMetrics is m's unary interceptor, counting a call of a
// method known says no to as UnknownMethod: a caller who makes up method
// names (unauthenticated, refused) adds no series, where each name would
// otherwise add some twenty (started, handled by code, the histogram's
// buckets). The interceptors after it see the call's own method.
func UnaryServerMetrics(m *grpcprom.ServerMetrics, known func(fullMethod string) bool) grpc.UnaryServerInterceptor {
	next := m.UnaryServerInterceptor()
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if !known(info.FullMethod) {
			info = &grpc.UnaryServerInfo{Server: info.Server, FullMethod: UnknownMethod}
		}
		return next(ctx, req, info, h)
	}
}

// StreamServerMetrics is UnaryServerMetrics for streams.
func StreamServerMetrics(m *grpcprom.ServerMetrics, known func(fullMethod string) bool) grpc.StreamServerInterceptor {
	next := m.StreamServerInterceptor()
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if !known(info.FullMethod) {
			info = &grpc.StreamServerInfo{FullMethod: UnknownMethod, IsClientStream: info.IsClientStream, IsServerStream: info.IsServerStream}
		}
		return next(srv, ss, info, h)
	}
}

// RegisteredMethods reports whether a full method ("/pkg.Service/Method")
// is one of the methods registered on srv (read once, at the first call:
// after every service was registered, since calls come only once srv
// serves).
func RegisteredMethods(srv func() *grpc.Server) func(fullMethod string) bool {
	methods := sync.OnceValue(func() map[string]bool {
		out := map[string]bool{}
		for name, info := range srv().GetServiceInfo() {
			for _, m := range info.Methods {
				out["/"+name+"/"+m.Name] = true
			}
		}
		return out
	})
	return func(fullMethod string) bool { return methods()[fullMethod] }
}
