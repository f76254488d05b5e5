package grpcx

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/services/kit/auth"
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

// The access log: one line per call when it ends, "finished call" with
// grpc.service and grpc.method, grpc.code, grpc.time_ms (how long it
// took), caller and role (who the server authenticated, once it has),
// peer.address, and the trace_id and span_id of a traced call
// (TraceLogger). At info, but INTERNAL, UNKNOWN and DATA_LOSS at error
// and the health and reflection services' calls at debug (probes would
// drown the rest).

// UnaryAccessLog is the access log's unary interceptor, writing to log
// (a TraceLogger for the trace ids). Chain it before the interceptors
// that authenticate the caller (auth.WithCaller tells it who it was).
// A call whose line the logger would drop (its level not enabled) costs
// only the caller's tracking: the line's fields are made only when it is
// written.
func UnaryAccessLog(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		ctx = auth.TrackCaller(ctx)
		start := time.Now()
		resp, err := h(ctx, req)
		logCall(ctx, log, info.FullMethod, "unary", start, err)
		return resp, err
	}
}

// StreamAccessLog is UnaryAccessLog for streams (one line when the
// stream ends).
func StreamAccessLog(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		ctx := auth.TrackCaller(ss.Context())
		start := time.Now()
		err := h(srv, &contextStream{ServerStream: ss, ctx: ctx})
		kind := "bidi_stream"
		switch {
		case info.IsClientStream && !info.IsServerStream:
			kind = "client_stream"
		case !info.IsClientStream && info.IsServerStream:
			kind = "server_stream"
		}
		logCall(ctx, log, info.FullMethod, kind, start, err)
		return err
	}
}

// contextStream is a server stream with another context.
type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *contextStream) Context() context.Context { return s.ctx }

// quietServices are logged at debug: probes and tools.
var quietServices = map[string]bool{
	"grpc.health.v1.Health":                    true,
	"grpc.reflection.v1.ServerReflection":      true,
	"grpc.reflection.v1alpha.ServerReflection": true,
}

// logCall writes the access line of the call of fullMethod
// ("/service/method") of kind (grpc.method_type) that started at start
// and ended with err, if log writes its level. The fields are those the
// go-grpc-middleware logging interceptor wrote (the line is the same):
// caller and role, protocol, grpc.component, grpc.service, grpc.method,
// grpc.method_type, peer.address, grpc.start_time,
// grpc.request.deadline (when the call has one), grpc.code, grpc.error
// (when it failed) and grpc.time_ms (milliseconds, as a string).
func logCall(ctx context.Context, log *slog.Logger, fullMethod, kind string, start time.Time, err error) {
	took := time.Since(start)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	code := status.Code(err)
	service, method := splitMethod(fullMethod)
	lvl := slog.LevelInfo
	switch {
	case code == codes.Internal || code == codes.Unknown || code == codes.DataLoss:
		lvl = slog.LevelError
	case quietServices[service]:
		lvl = slog.LevelDebug
	}
	if !log.Enabled(ctx, lvl) {
		return
	}
	var buf [16]slog.Attr
	attrs := buf[:0]
	if c, ok := auth.TrackedCaller(ctx); ok {
		attrs = append(attrs, slog.String("caller", c.Subject), slog.String("role", string(c.Role)))
	}
	attrs = append(attrs,
		slog.String("protocol", "grpc"),
		slog.String("grpc.component", "server"),
		slog.String("grpc.service", service),
		slog.String("grpc.method", method),
		slog.String("grpc.method_type", kind))
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		attrs = append(attrs, slog.String("peer.address", p.Addr.String()))
	}
	attrs = append(attrs, slog.String("grpc.start_time", start.Format(time.RFC3339)))
	if d, ok := ctx.Deadline(); ok {
		attrs = append(attrs, slog.String("grpc.request.deadline", d.Format(time.RFC3339)))
	}
	attrs = append(attrs, slog.String("grpc.code", code.String()))
	if err != nil {
		attrs = append(attrs, slog.String("grpc.error", err.Error()))
	}
	ms := float32(took.Nanoseconds()/1000) / 1000
	attrs = append(attrs, slog.String("grpc.time_ms", strconv.FormatFloat(float64(ms), 'f', -1, 32)))
	log.LogAttrs(ctx, lvl, "finished call", attrs...)
}

// splitMethod splits "/service/method".
func splitMethod(full string) (service, method string) {
	full = strings.TrimPrefix(full, "/")
	if i := strings.IndexByte(full, '/'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "unknown", "unknown"
}
