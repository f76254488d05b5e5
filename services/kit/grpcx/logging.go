package grpcx

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// TraceLogger returns a logger like log (nil: slog.Default()) whose
// records, when logged with a context that carries an OpenTelemetry span
// (a call traced by otelgrpc: see Tracing), also carry
// the span's trace_id and span_id (lowercase hex, as W3C traceparent
// writes them), so that a log line can be found from its trace and the
// trace from the line. Records logged without such a context are
// unchanged. A logger that already does this is returned as it is.
//
// The interceptors of New log every call with its context; handlers
// should log with the *Context methods (InfoContext...) for their lines
// to carry the ids too.
func TraceLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		log = slog.Default()
	}
	if _, ok := log.Handler().(traceHandler); ok {
		return log
	}
	return slog.New(traceHandler{log.Handler()})
}

// traceHandler adds the trace and span ids of the record's context.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		// A copy: the record's attributes may be shared with its caller.
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(as)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
