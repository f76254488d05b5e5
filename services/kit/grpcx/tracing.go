package grpcx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/chemmy/chemmy/services/kit/buildinfo"
)

// Tracing is OpenTelemetry tracing of gRPC calls, off unless the
// standard environment asks for it (TracingEnabled): an exporter named by
// OTEL_TRACES_EXPORTER ("otlp", "console"; "none" is off) or an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
// OTEL_SDK_DISABLED=true turns it off. The exporter is OpenTelemetry's
// autoexport: OTLP over HTTP (OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf,
// the default, port 4318) or gRPC (grpc, port 4317), with the standard
// OTEL_EXPORTER_OTLP_* variables (headers, timeout, certificates...);
// OTEL_TRACES_SAMPLER, OTEL_BSP_* and OTEL_RESOURCE_ATTRIBUTES as the SDK
// reads them.
//
// Each service traces with a tracer provider of its own, whose resource
// names it (service.name "gateway", "table-svc", "wallet-svc",
// "shoe-svc"; service.version the build's): in a process of one service
// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES)
// renames it; in a process of several (chemmy run: SeveralServices) each
// keeps its own name. When on, every server of New and every client given
// ClientTracing or ServiceClientTracing records spans (otelgrpc) and
// propagates the W3C trace context, so a call through the gateway is one
// trace across services; the loggers of TraceLogger add the trace and
// span ids to the lines logged while handling it.

var (
	tracingMu sync.Mutex
	// providers are the services' tracer providers, by service.name.
	providers map[string]*sdktrace.TracerProvider
	// override is the provider of UseTracerProvider, when set.
	override trace.TracerProvider
	// several: SeveralServices was called.
	several atomic.Bool
	// processService is the name SetupTracing gave the process's service.
	processService string
)

// propagator is the W3C trace context (and baggage) on gRPC metadata.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// TracingEnabled says whether the environment asks for tracing.
func TracingEnabled() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "":
		return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	return true
}

// SeveralServices says this process runs several services (chemmy run,
// the end-to-end tests): each service's spans keep its own service.name
// whatever OTEL_SERVICE_NAME says, and ClientTracing (a client of no
// service in particular) adds nothing: each service's clients take
// ServiceClientTracing. Call it before the services start.
func SeveralServices() { several.Store(true) }

// SetupTracing names the process's own service (for ClientTracing; ""
// leaves the program's name) and checks the environment's tracing
// configuration: it reports whether tracing is on and, when on, whether
// autoexport can make the exporter it asks for (an unknown exporter or
// protocol is an error). Call ShutdownTracing before the process ends to
// send the spans still batched.
func SetupTracing(ctx context.Context, service string) (bool, error) {
	if service != "" {
		tracingMu.Lock()
		processService = service
		tracingMu.Unlock()
	}
	if !TracingEnabled() {
		return false, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return false, err
	}
	_ = exp.Shutdown(ctx)
	return true, nil
}

// ShutdownTracing sends the spans still batched and stops every tracer
// provider of the process; services built afterwards start new ones.
func ShutdownTracing(ctx context.Context) error {
	tracingMu.Lock()
	ps := providers
	providers = nil
	tracingMu.Unlock()
	var errs []error
	for _, tp := range ps {
		errs = append(errs, tp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// UseTracerProvider makes the servers of New and the clients of
// ClientTracing and ServiceClientTracing built from now on trace with tp
// (and the W3C propagator), whatever the environment says: for tests (an
// in-memory exporter, go.opentelemetry.io/otel/sdk/trace/tracetest) and
// programs that set up OpenTelemetry themselves. The returned function
// restores the previous choice (servers and clients already built keep
// theirs).
func UseTracerProvider(tp trace.TracerProvider) (restore func()) {
	tracingMu.Lock()
	defer tracingMu.Unlock()
	prev := override
	override = tp
	return func() {
		tracingMu.Lock()
		override = prev
		tracingMu.Unlock()
	}
}

// serviceResource is the resource of service's spans: the SDK's
// defaults, the environment's (OTEL_RESOURCE_ATTRIBUTES,
// OTEL_SERVICE_NAME) and service.name = service, service.version = the
// build's; the environment's service.name wins unless the process runs
// several services.
func serviceResource(ctx context.Context, service string) (*resource.Resource, error) {
	ours := resource.WithAttributes(semconv.ServiceName(service), semconv.ServiceVersion(buildinfo.Get().Version))
	opts := []resource.Option{resource.WithTelemetrySDK(), ours, resource.WithFromEnv()}
	if several.Load() {
		opts = []resource.Option{resource.WithTelemetrySDK(), resource.WithFromEnv(), ours}
	}
	return resource.New(ctx, opts...)
}

// provider is service's tracer provider, nil when tracing is off or
// cannot start (SetupTracing says why). An empty service is the
// process's own: named by SetupTracing, else after the program (and
// renamed by OTEL_SERVICE_NAME).
func provider(service string) trace.TracerProvider {
	tracingMu.Lock()
	defer tracingMu.Unlock()
	if override != nil {
		return override
	}
	if !TracingEnabled() {
		return nil
	}
	if service == "" {
		service = processService
	}
	if service == "" {
		service = filepath.Base(os.Args[0])
	}
	ctx := context.Background()
	res, err := serviceResource(ctx, service)
	if err != nil && res == nil {
		return nil
	}
	name := service
	if v, ok := res.Set().Value(semconv.ServiceNameKey); ok {
		name = v.AsString()
	}
	if tp := providers[name]; tp != nil {
		return tp
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil || autoexport.IsNoneSpanExporter(exp) {
		return nil
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	if providers == nil {
		providers = map[string]*sdktrace.TracerProvider{}
		otel.SetTextMapPropagator(propagator)
	}
	providers[name] = tp
	return tp
}

// ServerTracing is the server option that traces the calls of service's
// server; none when tracing is off.
func ServerTracing(service string) []grpc.ServerOption {
	tp := provider(service)
	if tp == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagator)))}
}

// ServiceClientTracing is the dial option that traces service's outgoing
// calls and propagates the trace context; none when tracing is off.
func ServiceClientTracing(service string) []grpc.DialOption {
	tp := provider(service)
	if tp == nil {
		return nil
	}
	return []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler(
		otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagator)))}
}

// ClientTracing is ServiceClientTracing for the process's own service
// (named by SetupTracing, else after the program); none in a process of
// several services (SeveralServices), whose clients say whose they are
// with ServiceClientTracing.
func ClientTracing() []grpc.DialOption {
	if several.Load() {
		return nil
	}
	return ServiceClientTracing("")
}
