package gateway

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// Reasons of the gateway's abuse limits (chemmy.gateway.v1.ErrorReason
// without the "ERROR_REASON_" prefix).
const (
	// ReasonRateLimited: the caller made calls faster than its rate allows;
	// the status carries a google.rpc.RetryInfo with the delay after which
	// the next call is accepted.
	ReasonRateLimited = "RATE_LIMITED"
	// ReasonTooManyStreams: the caller, or the gateway as a whole, has as
	// many server streams open as it may.
	ReasonTooManyStreams = "TOO_MANY_STREAMS"
	// ReasonRequestTooLarge: the request (a gRPC message, an HTTP body
	// once decompressed) is over Config.MaxMessageBytes. Not retryable:
	// no RetryInfo; HTTP 413.
	ReasonRequestTooLarge = "REQUEST_TOO_LARGE"
)

// requestTooLarge is RESOURCE_EXHAUSTED REQUEST_TOO_LARGE, without
// RetryInfo: the same request would be refused again.
func requestTooLarge(format string, args ...any) error {
	return errs.New(codes.ResourceExhausted, Domain, ReasonRequestTooLarge, format, args...)
}

// asTooLarge turns gRPC's own refusal of a request message over the
// server's MaxRecvMsgSize (RESOURCE_EXHAUSTED without an ErrorInfo: the
// only RESOURCE_EXHAUSTED a server's RecvMsg returns) into
// RESOURCE_EXHAUSTED REQUEST_TOO_LARGE; other errors pass unchanged.
func asTooLarge(err error) error {
	if status.Code(err) != codes.ResourceExhausted || errs.Reason(err) != "" {
		return err
	}
	return requestTooLarge("%s", status.Convert(err).Message())
}

// recvCeiling is the gRPC server's MaxRecvMsgSize for a request limit of
// max bytes: 4 times it. gRPC refuses a larger message unread, with a
// status of its own written at once (RESOURCE_EXHAUSTED without an
// ErrorInfo, which no interceptor can change on a stream, as every
// forwarded call is); a message between max and the ceiling is read and
// refused by sizeLimit, REQUEST_TOO_LARGE.
func recvCeiling(max int) int {
	if max > math.MaxInt32/4 {
		return math.MaxInt32
	}
	return 4 * max
}

// sizeLimit refuses a request message over max bytes RESOURCE_EXHAUSTED
// REQUEST_TOO_LARGE, without RetryInfo: the request would be refused
// again. Every request reaches the interceptors as a frame (forwarded
// calls, and the gateway's own services, registerLocal).
type sizeLimit struct{ max int }

func (l sizeLimit) check(m any) error {
	if f, ok := m.(*frame); ok && len(f.data) > l.max {
		return requestTooLarge("the request message is %d bytes, more than the %d the gateway takes", len(f.data), l.max)
	}
	return nil
}

// unary is the grpc.UnaryServerInterceptor.
func (l sizeLimit) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := l.check(req); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// stream is the grpc.StreamServerInterceptor: each message the handler
// (and the interceptors after this one) reads is checked.
func (l sizeLimit) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, sizeLimitedStream{ss, l})
}

type sizeLimitedStream struct {
	grpc.ServerStream
	limit sizeLimit
}

func (s sizeLimitedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return asTooLarge(err)
	}
	return s.limit.check(m)
}

// Defaults of LimitConfig.
const (
	DefaultRate                = 20
	DefaultBurst               = 40
	DefaultMaxStreamsPerCaller = 8
	DefaultMaxStreams          = 1000
)

// limitIdle is how long a caller's entry (its token bucket) is kept after
// its last call; limitSweepEvery is how often entries are looked over.
const (
	limitIdle       = 5 * time.Minute
	limitSweepEvery = time.Minute
)

// LimitConfig bounds what one authenticated caller (a role and subject)
// may ask of the gateway. Zero values take the defaults.
type LimitConfig struct {
	// Rate is the calls per second a caller may make on average: the
	// refill rate of its token bucket. Every unary call and every stream
	// start takes one token. 0 means DefaultRate (20); negative turns rate
	// limiting off.
	Rate float64
	// Burst is the size of a caller's token bucket: the calls it may make
	// at once after a quiet spell. 0 (or negative) means DefaultBurst
	// (40).
	Burst int
	// MaxStreamsPerCaller is how many server-streaming calls (e.g.
	// TableService.WatchTable) one caller may have open at once. 0 means
	// DefaultMaxStreamsPerCaller (8); negative means no cap.
	MaxStreamsPerCaller int
	// MaxStreams is how many server-streaming calls all callers together
	// may have open at once. 0 means DefaultMaxStreams (1000); negative
	// means no cap.
	MaxStreams int
}

func (c LimitConfig) withDefaults() LimitConfig {
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Burst <= 0 {
		c.Burst = DefaultBurst
	}
	if c.MaxStreamsPerCaller == 0 {
		c.MaxStreamsPerCaller = DefaultMaxStreamsPerCaller
	}
	if c.MaxStreams == 0 {
		c.MaxStreams = DefaultMaxStreams
	}
	return c
}

// limits enforces a LimitConfig with gRPC server interceptors chained
// after authentication: calls that carry no authenticated caller (health
// and reflection, open to all) pass unlimited. Memory is bounded: a
// caller's entry is dropped once it has been idle for limitIdle with a
// full bucket and no stream open, which is indistinguishable from keeping
// it.
type limits struct {
	cfg   LimitConfig
	now   func() time.Time
	files *protoregistry.Files

	mu      sync.Mutex
	callers map[limitKey]*callerLimit
	streams int       // server streams open, all callers
	swept   time.Time // last sweep of idle entries
}

type limitKey struct {
	role    auth.Role
	subject string
}

type callerLimit struct {
	bucket  *rate.Limiter // nil when rate limiting is off
	streams int           // server streams open
	used    time.Time     // last call started or stream ended
}

// newLimits returns the limits of c; now is the clock (nil: time.Now).
func newLimits(c LimitConfig, now func() time.Time) *limits {
	if now == nil {
		now = time.Now
	}
	return &limits{
		cfg: c.withDefaults(), now: now, files: protoregistry.GlobalFiles,
		callers: map[limitKey]*callerLimit{}, swept: now(),
	}
}

// unary is the grpc.UnaryServerInterceptor: one token per call.
func (l *limits) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	c, ok := auth.FromContext(ctx)
	if !ok {
		return h(ctx, req)
	}
	if err := l.take(c); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// stream is the grpc.StreamServerInterceptor: one token per call, and a
// stream slot for the call's duration when the method streams from the
// server. Forwarded calls all look like bidirectional streams to gRPC, so
// the method's shape is looked up in the registered descriptors.
func (l *limits) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	c, ok := auth.FromContext(ss.Context())
	if !ok {
		return h(srv, ss)
	}
	if err := l.take(c); err != nil {
		return err
	}
	if !l.serverStreaming(info.FullMethod) {
		return h(srv, ss)
	}
	release, err := l.open(c)
	if err != nil {
		return err
	}
	defer release()
	return h(srv, ss)
}

// serverStreaming reports whether method ("/pkg.Service/Method") is a
// server-streaming (or bidirectional) RPC of a registered contract.
func (l *limits) serverStreaming(method string) bool {
	svc, name, ok := splitMethod(method)
	if !ok {
		return false
	}
	d, err := l.files.FindDescriptorByName(protoreflect.FullName(svc + "." + name))
	if err != nil {
		return false
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	return ok && md.IsStreamingServer()
}

// entry returns c's entry, creating it; l.mu must be held.
func (l *limits) entry(c auth.Caller, now time.Time) *callerLimit {
	l.sweep(now)
	k := limitKey{c.Role, c.Subject}
	e := l.callers[k]
	if e == nil {
		e = &callerLimit{}
		if l.cfg.Rate > 0 {
			e.bucket = rate.NewLimiter(rate.Limit(l.cfg.Rate), l.cfg.Burst)
		}
		l.callers[k] = e
	}
	e.used = now
	return e
}

// take takes one token from c's bucket, or returns RESOURCE_EXHAUSTED
// RATE_LIMITED with the delay until one is there.
func (l *limits) take(c auth.Caller) error {
	if l.cfg.Rate < 0 {
		return nil
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(c, now)
	r := e.bucket.ReserveN(now, 1)
	delay := r.DelayFrom(now)
	if delay == 0 {
		return nil
	}
	r.CancelAt(now)
	return rateLimited(delay, l.cfg)
}

func rateLimited(delay time.Duration, cfg LimitConfig) error {
	st := status.Convert(errs.New(codes.ResourceExhausted, Domain, ReasonRateLimited,
		"more than %g calls per second (burst %d); retry in %s", cfg.Rate, cfg.Burst, delay.Round(time.Millisecond)))
	if withRetry, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)}); err == nil {
		st = withRetry
	}
	return st.Err()
}

// open takes a stream slot for c, or returns RESOURCE_EXHAUSTED
// TOO_MANY_STREAMS; release gives it back.
func (l *limits) open(c auth.Caller) (release func(), err error) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(c, now)
	if most := l.cfg.MaxStreamsPerCaller; most >= 0 && e.streams >= most {
		return nil, errs.New(codes.ResourceExhausted, Domain, ReasonTooManyStreams,
			"%s %q has %d streams open, the most one caller may", c.Role, c.Subject, e.streams)
	}
	if most := l.cfg.MaxStreams; most >= 0 && l.streams >= most {
		return nil, errs.New(codes.ResourceExhausted, Domain, ReasonTooManyStreams,
			"the gateway has %d streams open, the most it serves in total", l.streams)
	}
	e.streams++
	l.streams++
	var once sync.Once
	return func() {
		once.Do(func() {
			now := l.now()
			l.mu.Lock()
			defer l.mu.Unlock()
			e.streams--
			l.streams--
			e.used = now
		})
	}, nil
}

// sweep drops the entries of callers idle for limitIdle, at most once per
// limitSweepEvery; l.mu must be held. An entry with a stream open or a
// bucket not yet full is kept: dropping it would change what its caller
// may do.
func (l *limits) sweep(now time.Time) {
	if now.Sub(l.swept) < limitSweepEvery {
		return
	}
	l.swept = now
	for k, e := range l.callers {
		if e.streams > 0 || now.Sub(e.used) < limitIdle {
			continue
		}
		if e.bucket != nil && e.bucket.TokensAt(now) < float64(e.bucket.Burst()) {
			continue
		}
		delete(l.callers, k)
	}
}

// size is the number of callers with an entry.
func (l *limits) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.callers)
}
