package grpcx

import (
	"context"
	"log/slog"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

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
func UnaryAccessLog(log *slog.Logger) grpc.UnaryServerInterceptor {
	inner := logging.UnaryServerInterceptor(accessLogger(log), accessLogOptions()...)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return inner(auth.TrackCaller(ctx), req, info, h)
	}
}

// StreamAccessLog is UnaryAccessLog for streams (one line when the
// stream ends).
func StreamAccessLog(log *slog.Logger) grpc.StreamServerInterceptor {
	inner := logging.StreamServerInterceptor(accessLogger(log), accessLogOptions()...)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		return inner(srv, &contextStream{ServerStream: ss, ctx: auth.TrackCaller(ss.Context())}, info, h)
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

func accessLogger(log *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		l := slog.Level(lvl)
		if l == slog.LevelInfo {
			for i := 0; i+1 < len(fields); i += 2 {
				if k, _ := fields[i].(string); k == logging.ServiceFieldKey {
					if s, _ := fields[i+1].(string); quietServices[s] {
						l = slog.LevelDebug
					}
					break
				}
			}
		}
		log.Log(ctx, l, msg, fields...)
	})
}

func accessLogOptions() []logging.Option {
	return []logging.Option{
		logging.WithLogOnEvents(logging.FinishCall),
		logging.WithLevels(func(c codes.Code) logging.Level {
			switch c {
			case codes.Internal, codes.Unknown, codes.DataLoss:
				return logging.LevelError
			}
			return logging.LevelInfo
		}),
		logging.WithFieldsFromContext(func(ctx context.Context) logging.Fields {
			c, ok := auth.TrackedCaller(ctx)
			if !ok {
				return nil
			}
			return logging.Fields{"caller", c.Subject, "role", string(c.Role)}
		}),
	}
}
