package grpcx

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/services/kit/auth"
)

// middlewareAccessLog is the access log as it was written before
// UnaryAccessLog wrote its own line: go-grpc-middleware's logging
// interceptor with the options it had. The test compares the two lines.
func middlewareAccessLog(log *slog.Logger) grpc.UnaryServerInterceptor {
	inner := logging.UnaryServerInterceptor(logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		log.Log(ctx, slog.Level(lvl), msg, fields...)
	}),
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
		}))
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return inner(auth.TrackCaller(ctx), req, info, h)
	}
}

// TestAccessLineAsMiddleware: for calls that succeed, fail with a status
// (at info and at error), carry a deadline, a peer and an authenticated
// caller or none, UnaryAccessLog writes the line go-grpc-middleware's
// interceptor wrote (same message, level, fields and values; the times
// aside, which differ between two calls).
func TestAccessLineAsMiddleware(t *testing.T) {
	base, cancel := context.WithDeadline(context.Background(), time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	defer cancel()
	base = peer.NewContext(base, &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4242}})
	alice := auth.Caller{Subject: "alice", Role: auth.RolePlayer}
	cases := []struct {
		name   string
		caller *auth.Caller
		err    error
	}{
		{"ok with a caller", &alice, nil},
		{"refused without one", nil, status.Error(codes.Unauthenticated, "who are you")},
		{"internal error", &alice, status.Error(codes.Internal, "boom")},
		{"plain error", &alice, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := map[string]map[string]any{}
			for name, mk := range map[string]func(*slog.Logger) grpc.UnaryServerInterceptor{"ours": UnaryAccessLog, "middleware": middlewareAccessLog} {
				var buf bytes.Buffer
				log := slog.New(slog.NewJSONHandler(&buf, nil)).With("service", "probe")
				h := func(ctx context.Context, _ any) (any, error) {
					if c.caller != nil {
						auth.WithCaller(ctx, *c.caller)
					}
					return nil, c.err
				}
				_, _ = mk(log)(base, nil, &grpc.UnaryServerInfo{FullMethod: "/test.Probe/Ping"}, h)
				got := logLines(t, &buf)
				if len(got) != 1 {
					t.Fatalf("%s: %d lines, want 1", name, len(got))
				}
				for _, k := range []string{"time", "grpc.start_time", "grpc.time_ms"} {
					if _, ok := got[0][k]; !ok {
						t.Errorf("%s: no %s in %v", name, k, got[0])
					}
					delete(got[0], k)
				}
				lines[name] = got[0]
			}
			if !reflect.DeepEqual(lines["ours"], lines["middleware"]) {
				t.Errorf("access line\n got %v\nwant %v (the middleware's)", lines["ours"], lines["middleware"])
			}
		})
	}
}

// TestAccessLogDroppedLineAllocates: when the logger does not write the
// call's level (make load logs at error), a call costs the access log
// only the caller's tracking: at most 2 allocations, where the
// middleware's interceptor made its fields anyway.
func TestAccessLogDroppedLineAllocates(t *testing.T) {
	log := slog.New(slog.NewJSONHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelError}))
	in := UnaryAccessLog(log)
	info := &grpc.UnaryServerInfo{FullMethod: "/test.Probe/Ping"}
	h := func(context.Context, any) (any, error) { return nil, nil }
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _, _ = in(ctx, nil, info, h) }); n > 2 {
		t.Errorf("%v allocations per call whose line is dropped, want at most 2 (auth.TrackCaller's)", n)
	}
	mw := middlewareAccessLog(log)
	if n := testing.AllocsPerRun(100, func() { _, _ = mw(ctx, nil, info, h) }); n <= 2 {
		t.Errorf("the middleware made %v allocations: the comparison shows nothing", n)
	}
}
