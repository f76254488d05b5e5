package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// frame is one gRPC message passed through undecoded.
type frame struct{ data []byte }

// rawCodec passes frames through as bytes and encodes everything else
// (health, reflection, GatewayService) as protobuf. Its name is "proto",
// so the content type stays application/grpc+proto on both sides.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case *frame:
		return m.data, nil
	case proto.Message:
		return proto.Marshal(m)
	}
	return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	switch m := v.(type) {
	case *frame:
		// grpc reuses data once Unmarshal returns.
		m.data = append(m.data[:0], data...)
		return nil
	case proto.Message:
		return proto.Unmarshal(data, m)
	}
	return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
}

// backend is one service behind the gateway.
type backend struct {
	name     string // service name, e.g. chemmy.table.v1.TableService
	addr     string
	identity string // the backend's identity, e.g. "table-svc": its certificate's name and the assertions' audience
	conn     *grpc.ClientConn
}

// dialBackend connects to service at addr with mutual TLS verifying the
// backend as identity (plaintext for nil mat); a lost connection is tried
// again within grpcx.ReconnectDelayMax, its name looked up again.
func dialBackend(service, addr, identity string, mat *trust.Material, opts ...grpc.DialOption) (*backend, error) {
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{
		mat.DialOption(identity),
		grpcx.Reconnect(),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})),
		grpc.WithStatsHandler(responseTracker{}),
	}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("backend %s at %q: %w", service, addr, err)
	}
	return &backend{name: service, addr: addr, identity: identity, conn: conn}, nil
}

// responseTracker notes on a call's context whether the backend answered
// with a gRPC status (trailers). A call that fails UNAVAILABLE without one
// failed on the connection, not in the backend.
type responseTracker struct{}

type trailerSeenKey struct{}

func (responseTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (responseTracker) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.InTrailer); ok {
		if seen, ok := ctx.Value(trailerSeenKey{}).(*atomic.Bool); ok {
			seen.Store(true)
		}
	}
}
func (responseTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (responseTracker) HandleConn(context.Context, stats.ConnStats) {}

// proxy forwards calls of the routed services to their backends. It is the
// server's unknown-service handler, so it sees every call not served
// locally, after the interceptors (authentication, roles) have run.
type proxy struct {
	// routes: by service name, the service's backends, shard i at i (one
	// for an unsharded service; see shards.go).
	routes map[string][]*backend
	log    *slog.Logger
	// signer signs the caller assertions; nil in insecure mode, where the
	// caller goes as plain metadata.
	signer *trust.Signer
	// draining is closed when the gateway starts to stop (drain): the
	// watch streams open then are ended GATEWAY_DRAINING, and new ones
	// refused so, for their clients to watch again through another
	// gateway; unary calls in flight finish (GracefulStop).
	draining  chan struct{}
	drainOnce sync.Once
}

func newProxy(log *slog.Logger, signer *trust.Signer) *proxy {
	return &proxy{routes: map[string][]*backend{}, log: log, signer: signer, draining: make(chan struct{})}
}

// watchMethods are the calls that stay open as long as the client
// watches: a stopping gateway ends them itself (drain).
var watchMethods = map[string]bool{"/" + tableService + "/WatchTable": true}

// drain ends the watch streams in flight and refuses new ones with
// UNAVAILABLE GATEWAY_DRAINING. Called once the gateway reports
// NOT_SERVING, before it drains the other calls.
func (p *proxy) drain() { p.drainOnce.Do(func() { close(p.draining) }) }

// drainErr is the status of a watch stream a stopping gateway ends.
func drainErr() error {
	return errs.New(codes.Unavailable, Domain, ReasonGatewayDraining,
		"this gateway is stopping: watch again (another gateway answers)")
}

// streamDesc lets one handler forward unary, client-, server- and
// bidirectional-streaming calls alike: the backend's own handler decides
// how many messages it reads and writes.
var streamDesc = &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}

func (p *proxy) handle(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, "no method in stream")
	}
	svc, _, _ := splitMethod(method)
	shards := p.routes[svc]
	if len(shards) == 0 {
		return status.Errorf(codes.Unimplemented, "unknown service %s", svc)
	}
	caller, ok := auth.FromContext(ss.Context())
	if !ok {
		// The interceptor authorizes every routed method; a call without a
		// caller here is a bug, not a request to let through.
		return status.Error(codes.Internal, "no caller identity")
	}

	// The first message is checked (it decodes; a self field names the
	// player) before the backend hears of the call; a sharded service is
	// routed by it.
	var first *frame
	clientDone := false
	r := ruleFrom(ss.Context())
	if r != nil || len(shards) > 1 {
		first = new(frame)
		switch err := ss.RecvMsg(first); {
		case errors.Is(err, io.EOF):
			first, clientDone = nil, true
		case err != nil:
			return err
		}
	}
	if len(shards) > 1 {
		switch fo, req, all, err := fanOutRequest(method, first); {
		case err != nil:
			return err
		case all:
			return p.list(ss, caller, shards, method, fo, req)
		}
	}
	var in protoreflect.MessageDescriptor
	if r != nil {
		in = r.input
	}
	be, err := pick(shards, in, caller, first)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	drained := new(atomic.Bool)
	if watchMethods[method] {
		select {
		case <-p.draining:
			return drainErr()
		default:
		}
		streamCtx := ctx // ctx is rebuilt below
		go func() {
			select {
			case <-p.draining:
				drained.Store(true)
				cancel()
			case <-streamCtx.Done():
			}
		}()
	}
	seen := new(atomic.Bool)
	ctx = context.WithValue(ctx, trailerSeenKey{}, seen)
	ctx, err = p.outgoing(ctx, caller, be)
	if err != nil {
		return err
	}

	cs, err := be.conn.NewStream(ctx, streamDesc, method)
	if err != nil {
		return p.backendErr(be, method, err, seen)
	}

	// Client to backend. Send errors end the pump only: the backend's
	// status arrives through RecvMsg below.
	go func() {
		if first != nil {
			if err := cs.SendMsg(first); err != nil {
				return
			}
		}
		for !clientDone {
			f := new(frame)
			if err := ss.RecvMsg(f); err != nil {
				if !errors.Is(err, io.EOF) {
					cancel()
					return
				}
				break
			}
			if err := cs.SendMsg(f); err != nil {
				return
			}
		}
		_ = cs.CloseSend()
	}()

	// Backend to client: headers, messages, then trailers and status.
	md, err := cs.Header()
	if err != nil {
		if drained.Load() {
			return drainErr()
		}
		return p.backendErr(be, method, err, seen)
	}
	if md != nil {
		if err := ss.SendHeader(md); err != nil {
			return err
		}
	}
	for {
		f := new(frame)
		err := cs.RecvMsg(f)
		if errors.Is(err, io.EOF) {
			ss.SetTrailer(cs.Trailer())
			return nil
		}
		if err != nil {
			if drained.Load() {
				return drainErr()
			}
			ss.SetTrailer(cs.Trailer())
			return p.backendErr(be, method, err, seen)
		}
		if err := ss.SendMsg(f); err != nil {
			return err
		}
	}
}

// backendErr passes a backend's status through unchanged, and turns a
// failure to reach the backend into UNAVAILABLE BACKEND_UNAVAILABLE
// without internal addresses.
func (p *proxy) backendErr(be *backend, method string, err error, seen *atomic.Bool) error {
	st, ok := status.FromError(err)
	if ok && st.Code() == codes.Unavailable && !seen.Load() {
		p.log.Warn("backend unavailable", "backend", be.name, "addr", be.addr, "method", method, "err", err)
		return errs.New(codes.Unavailable, Domain, ReasonBackendUnavailable,
			"%s is unavailable", be.name)
	}
	return err
}

// forwardMD is the incoming metadata without what only the gateway may
// see or set: the caller's authorization, any x-chemmy-* identity the
// client made up, and HTTP/2 pseudo-headers.
func forwardMD(ctx context.Context) metadata.MD {
	in, _ := metadata.FromIncomingContext(ctx)
	out := make(metadata.MD, len(in))
	for k, v := range in {
		k = strings.ToLower(k)
		if k == "authorization" || strings.HasPrefix(k, "x-chemmy-") ||
			strings.HasPrefix(k, ":") || k == "user-agent" || k == "content-type" {
			continue
		}
		out[k] = append([]string(nil), v...)
	}
	return out
}
