package grpcx

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
)

// Tracing is OpenTelemetry tracing of gRPC calls, off unless configured
// by the standard environment: OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) names an OTLP/gRPC collector, e.g.
// http://localhost:4317; OTEL_SERVICE_NAME names the process (default:
// the program's name); OTEL_TRACES_SAMPLER etc. as the OpenTelemetry SDK
// reads them. When on, every server of New and every client given
// ClientTracing records spans (otelgrpc) and propagates the W3C trace
// context, so a call through the gateway is one trace across services;
// the loggers of TraceLogger add the trace and span ids to the lines
// logged while handling it.

var (
	tracingOnce    sync.Once
	tracingOn      bool
	tracingErr     error
	tracerProvider *sdktrace.TracerProvider

	// override is the provider of UseTracerProvider, when set.
	overrideMu sync.Mutex
	override   trace.TracerProvider
)

// propagator is the W3C trace context (and baggage) on gRPC metadata.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// TracingEnabled says whether the environment configures tracing.
func TracingEnabled() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// SetupTracing starts the OTLP exporter and the global tracer provider
// once per process when TracingEnabled; later calls return the first
// result. It reports whether tracing is on.
func SetupTracing(ctx context.Context) (bool, error) {
	tracingOnce.Do(func() {
		if !TracingEnabled() {
			return
		}
		exp, err := otlptracegrpc.New(ctx)
		if err != nil {
			tracingErr = err
			return
		}
		name := os.Getenv("OTEL_SERVICE_NAME")
		if name == "" {
			name = filepath.Base(os.Args[0])
		}
		res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(name)))
		if err != nil {
			res = resource.Default()
		}
		tracerProvider = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		otel.SetTracerProvider(tracerProvider)
		otel.SetTextMapPropagator(propagator)
		tracingOn = true
	})
	return tracingOn, tracingErr
}

// ShutdownTracing flushes and stops the tracer provider, if any.
func ShutdownTracing(ctx context.Context) error {
	if tracerProvider == nil {
		return nil
	}
	return tracerProvider.Shutdown(ctx)
}

// UseTracerProvider makes the servers of New and the clients of
// ClientTracing built from now on trace with tp (and the W3C
// propagator), whatever the environment says: for tests (an in-memory
// exporter, go.opentelemetry.io/otel/sdk/trace/tracetest) and programs
// that set up OpenTelemetry themselves. The returned function restores
// the previous choice (servers and clients already built keep theirs).
func UseTracerProvider(tp trace.TracerProvider) (restore func()) {
	overrideMu.Lock()
	defer overrideMu.Unlock()
	prev := override
	override = tp
	return func() {
		overrideMu.Lock()
		override = prev
		overrideMu.Unlock()
	}
}

// provider is the tracer provider to use, nil when tracing is off.
func provider() trace.TracerProvider {
	overrideMu.Lock()
	tp := override
	overrideMu.Unlock()
	if tp != nil {
		return tp
	}
	if on, _ := SetupTracing(context.Background()); on {
		return tracerProvider
	}
	return nil
}

// ServerTracing is the server option that traces calls; none when
// tracing is off (set up from the environment on first use).
func ServerTracing() []grpc.ServerOption {
	tp := provider()
	if tp == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagator)))}
}

// ClientTracing is the dial option that traces outgoing calls and
// propagates the trace context; none when tracing is off.
func ClientTracing() []grpc.DialOption {
	tp := provider()
	if tp == nil {
		return nil
	}
	return []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler(
		otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagator)))}
}
