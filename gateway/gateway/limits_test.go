package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	_ "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1" // registers TableService's descriptors
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// limitClock is the injected clock of the limit tests: time moves only
// when a test says so.
type limitClock struct {
	mu  sync.Mutex
	now time.Time
}

func newLimitClock() *limitClock {
	return &limitClock{now: time.Date(2026, 1, 1, 20, 0, 0, 0, time.UTC)}
}

func (c *limitClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *limitClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// limitServer serves gRPC health and, for any other method, a generic
// handler (as the gateway's proxy) that echoes the first message and
// holds the stream open until the client goes away. A first interceptor
// makes the caller named in the "test-caller" metadata ("role/subject")
// the authenticated caller, as authentication does in the gateway.
type limitServer struct {
	l  *limits
	cc *grpc.ClientConn
}

func startLimitServer(t *testing.T, cfg LimitConfig, clock *limitClock) *limitServer {
	t.Helper()
	l := newLimits(cfg, clock.Now)
	callerOf := func(ctx context.Context) context.Context {
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get("test-caller"); len(v) == 1 {
			role, subject, _ := strings.Cut(v[0], "/")
			return auth.WithCaller(ctx, auth.Caller{Subject: subject, Role: auth.Role(role)})
		}
		return ctx
	}
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(
			func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				return h(callerOf(ctx), req)
			},
			l.unary,
		),
		grpc.ChainStreamInterceptor(
			func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				return h(srv, &ctxStream{ServerStream: ss, ctx: callerOf(ss.Context())})
			},
			l.stream,
		),
		grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
			m := new(emptypb.Empty)
			if err := ss.RecvMsg(m); err != nil {
				return err
			}
			if err := ss.SendMsg(m); err != nil {
				return err
			}
			<-ss.Context().Done()
			return nil
		}),
	)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cc.Close()
		srv.Stop()
	})
	return &limitServer{l: l, cc: cc}
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// as is a context calling as role/subject, cancelled at the end of the test.
func as(t *testing.T, role auth.Role, subject string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, "test-caller", string(role)+"/"+subject)
}

func (s *limitServer) check(ctx context.Context) error {
	_, err := healthpb.NewHealthClient(s.cc).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

// watch opens a health Watch (server streaming) and waits for its first
// message, so that the server holds the stream's slot; cancel ends it.
func (s *limitServer) watch(ctx context.Context) (cancel context.CancelFunc, err error) {
	ctx, cancel = context.WithCancel(ctx)
	w, err := healthpb.NewHealthClient(s.cc).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}

// generic opens a stream on method as the gateway's proxy sees every
// forwarded call (a bidirectional stream) and waits for the echo.
func (s *limitServer) generic(ctx context.Context, method string) (cancel context.CancelFunc, err error) {
	ctx, cancel = context.WithCancel(ctx)
	cs, err := s.cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err == nil {
		// A stream the server has already ended (refused by an
		// interceptor) fails SendMsg with io.EOF: its status comes from
		// RecvMsg.
		if err = cs.SendMsg(&emptypb.Empty{}); errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err == nil {
		err = cs.RecvMsg(new(emptypb.Empty))
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}

// streamsOf is the number of server streams c has open.
func (l *limits) streamsOf(c auth.Caller) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.callers[limitKey{c.Role, c.Subject}]; e != nil {
		return e.streams
	}
	return 0
}

// waitUntil polls cond until it holds, failing after a few seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func wantLimitReason(t *testing.T, err error, reason, inMessage string) {
	t.Helper()
	info := errs.Info(err)
	if status.Code(err) != codes.ResourceExhausted || info.GetReason() != reason || info.GetDomain() != Domain {
		t.Fatalf("got %v (ErrorInfo %v), want RESOURCE_EXHAUSTED %s in %s", err, info, reason, Domain)
	}
	if !strings.Contains(status.Convert(err).Message(), inMessage) {
		t.Fatalf("message %q does not say %q", status.Convert(err).Message(), inMessage)
	}
}

func retryDelay(err error) (time.Duration, bool) {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}

// TestLimitsRateLimited: a caller makes its burst of calls, the next is
// refused RATE_LIMITED with a RetryInfo saying when to come back; stream
// starts take tokens too; other callers (another subject, or the same
// subject in another role) are unaffected; time refills the bucket.
func TestLimitsRateLimited(t *testing.T) {
	clock := newLimitClock()
	s := startLimitServer(t, LimitConfig{Rate: 2, Burst: 3}, clock)
	alice := as(t, auth.RolePlayer, "alice")
	for i := range 3 {
		if err := s.check(alice); err != nil {
			t.Fatalf("call %d of the burst: %v", i+1, err)
		}
	}
	err := s.check(alice)
	wantLimitReason(t, err, ReasonRateLimited, "calls per second")
	if d, ok := retryDelay(err); !ok || d != 500*time.Millisecond {
		t.Fatalf("RetryInfo delay %v (present %v), want 500ms at 2 calls/s", d, ok)
	}
	if _, err := s.watch(alice); status.Code(err) != codes.ResourceExhausted || errs.Reason(err) != ReasonRateLimited {
		t.Fatalf("stream start over the rate: %v, want RATE_LIMITED", err)
	}

	if err := s.check(as(t, auth.RolePlayer, "bob")); err != nil {
		t.Fatalf("bob is limited by alice's calls: %v", err)
	}
	if err := s.check(as(t, auth.RoleCroupier, "alice")); err != nil {
		t.Fatalf("croupier alice is limited by player alice's calls: %v", err)
	}
	if err := s.check(context.Background()); err != nil {
		t.Fatalf("a call without caller (health, reflection) is limited: %v", err)
	}

	clock.Advance(499 * time.Millisecond)
	err = s.check(alice)
	wantLimitReason(t, err, ReasonRateLimited, "calls per second")
	if d, _ := retryDelay(err); d <= 0 || d > time.Millisecond+time.Microsecond {
		t.Fatalf("RetryInfo delay %v 1ms before the next token, want 1ms (refused calls take no token)", d)
	}
	clock.Advance(time.Millisecond)
	if err := s.check(alice); err != nil {
		t.Fatalf("after the retry delay: %v", err)
	}
}

// TestLimitsStreamsPerCaller: a caller may hold MaxStreamsPerCaller
// server streams; the next is refused TOO_MANY_STREAMS while unary calls
// and other callers go on; a stream's slot is free again once it ends.
func TestLimitsStreamsPerCaller(t *testing.T) {
	s := startLimitServer(t, LimitConfig{Rate: -1, MaxStreamsPerCaller: 2, MaxStreams: 10}, newLimitClock())
	alice := as(t, auth.RolePlayer, "alice")
	var cancels []context.CancelFunc
	for i := range 2 {
		cancel, err := s.watch(alice)
		if err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
		cancels = append(cancels, cancel)
	}
	_, err := s.watch(alice)
	wantLimitReason(t, err, ReasonTooManyStreams, "one caller")
	if err := s.check(alice); err != nil {
		t.Fatalf("unary call while at the stream cap: %v", err)
	}
	cancelBob, err := s.watch(as(t, auth.RolePlayer, "bob"))
	if err != nil {
		t.Fatalf("bob is capped by alice's streams: %v", err)
	}
	defer cancelBob()

	cancels[0]()
	waitUntil(t, "alice's first stream to end", func() bool {
		return s.l.streamsOf(auth.Caller{Subject: "alice", Role: auth.RolePlayer}) == 1
	})
	cancel, err := s.watch(alice)
	if err != nil {
		t.Fatalf("stream after one ended: %v", err)
	}
	cancel()
	cancels[1]()
}

// TestLimitsStreamsTotal: all callers together may hold MaxStreams server
// streams; a slot is free again once a stream ends.
func TestLimitsStreamsTotal(t *testing.T) {
	s := startLimitServer(t, LimitConfig{Rate: -1, MaxStreamsPerCaller: 5, MaxStreams: 3}, newLimitClock())
	var cancels []context.CancelFunc
	for _, who := range []string{"alice", "alice", "bob"} {
		cancel, err := s.watch(as(t, auth.RolePlayer, who))
		if err != nil {
			t.Fatalf("%s's stream: %v", who, err)
		}
		cancels = append(cancels, cancel)
	}
	carol := as(t, auth.RolePlayer, "carol")
	_, err := s.watch(carol)
	wantLimitReason(t, err, ReasonTooManyStreams, "in total")

	cancels[2]() // bob's
	waitUntil(t, "bob's stream to end", func() bool {
		return s.l.streamsOf(auth.Caller{Subject: "bob", Role: auth.RolePlayer}) == 0
	})
	cancel, err := s.watch(carol)
	if err != nil {
		t.Fatalf("carol's stream after bob's ended: %v", err)
	}
	cancel()
	cancels[0]()
	cancels[1]()
}

// TestLimitsCountOnlyServerStreamingMethods: forwarded calls all arrive as
// streams; only methods that stream from the server in the contracts
// (TableService.WatchTable) take a stream slot.
func TestLimitsCountOnlyServerStreamingMethods(t *testing.T) {
	s := startLimitServer(t, LimitConfig{Rate: -1, MaxStreamsPerCaller: 1}, newLimitClock())
	alice := as(t, auth.RolePlayer, "alice")
	for _, m := range []string{
		"/chemmy.table.v1.TableService/GetTable", "/chemmy.table.v1.TableService/JoinTable",
		"/chemmy.nowhere.v1.Nothing/Nothing", "/chemmy.table.v1.TableService/GetTable",
	} {
		cancel, err := s.generic(alice, m)
		if err != nil {
			t.Fatalf("%s (unary in the contract, or unknown) was capped: %v", m, err)
		}
		defer cancel()
	}
	const watch = "/chemmy.table.v1.TableService/WatchTable"
	cancel, err := s.generic(alice, watch)
	if err != nil {
		t.Fatalf("first WatchTable: %v", err)
	}
	defer cancel()
	_, err = s.generic(alice, watch)
	wantLimitReason(t, err, ReasonTooManyStreams, "one caller")
}

// TestLimitsSweepIdleCallers: entries of callers idle for longer than
// limitIdle go at the next sweep; a caller with a stream open, or whose
// bucket has not refilled, keeps its entry.
func TestLimitsSweepIdleCallers(t *testing.T) {
	clock := newLimitClock()
	l := newLimits(LimitConfig{Rate: 10, Burst: 5}, clock.Now)
	for i := range 1000 {
		if err := l.take(auth.Caller{Subject: fmt.Sprintf("p%d", i), Role: auth.RolePlayer}); err != nil {
			t.Fatal(err)
		}
	}
	streamer := auth.Caller{Subject: "streamer", Role: auth.RolePlayer}
	release, err := l.open(streamer)
	if err != nil {
		t.Fatal(err)
	}
	if n := l.size(); n != 1001 {
		t.Fatalf("%d entries, want 1001", n)
	}

	clock.Advance(limitIdle - time.Second)
	recent := auth.Caller{Subject: "recent", Role: auth.RolePlayer}
	if err := l.take(recent); err != nil {
		t.Fatal(err)
	}
	if n := l.size(); n != 1002 {
		t.Fatalf("%d entries before anyone was idle for %v, want 1002", n, limitIdle)
	}

	clock.Advance(limitSweepEvery)
	if err := l.take(recent); err != nil {
		t.Fatal(err)
	}
	if n := l.size(); n != 2 {
		t.Fatalf("%d entries after the idle callers' time ran out, want 2 (recent, and streamer with a stream open)", n)
	}

	release()
	clock.Advance(limitIdle + limitSweepEvery)
	if err := l.take(recent); err != nil {
		t.Fatal(err)
	}
	if n := l.size(); n != 1 {
		t.Fatalf("%d entries once the streamer's stream had ended long ago, want 1", n)
	}

	// A bucket that has not refilled is kept: dropping it would give its
	// caller a fresh burst.
	slow := newLimits(LimitConfig{Rate: 0.001, Burst: 1}, clock.Now)
	if err := slow.take(recent); err != nil {
		t.Fatal(err)
	}
	clock.Advance(limitIdle + limitSweepEvery)
	if err := slow.take(auth.Caller{Subject: "other", Role: auth.RolePlayer}); err != nil {
		t.Fatal(err)
	}
	if n := slow.size(); n != 2 {
		t.Fatalf("%d entries, want 2: an empty bucket is kept until it refills", n)
	}
	if err := slow.take(recent); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("caller with an empty bucket after the sweep: %v, want RESOURCE_EXHAUSTED", err)
	}
}
