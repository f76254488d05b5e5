package gateway

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/chemmy/chemmy/services/kit/errs"
)

// registerLocal registers impl on s as desc, a service the gateway serves
// itself (GatewayService, health, reflection), with its requests read as
// raw frames and decoded after the interceptors, as a routed call's are:
// a request that does not decode as the method's input is refused
// INVALID_ARGUMENT MALFORMED_REQUEST, after authentication and roles.
// Registered as generated, gRPC decodes the request before any
// interceptor runs and answers a failure INTERNAL, whatever the codec
// returns.
func registerLocal(s *grpc.Server, desc *grpc.ServiceDesc, impl any) {
	d := *desc
	d.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		m.Handler = framedUnary(d.ServiceName, m)
		d.Methods[i] = m
	}
	d.Streams = make([]grpc.StreamDesc, len(desc.Streams))
	for i, sd := range desc.Streams {
		h := sd.Handler
		sd.Handler = func(srv any, ss grpc.ServerStream) error { return h(srv, framedStream{ss}) }
		d.Streams[i] = sd
	}
	s.RegisterService(&d, impl)
}

// framedUnary is m's handler reading the request as a frame, which the
// interceptors see (authz checks it decodes, as for a routed call), and
// decoding it into the typed request only then.
func framedUnary(service string, m grpc.MethodDesc) grpc.MethodHandler {
	h, method := m.Handler, "/"+service+"/"+m.MethodName
	return func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		f := new(frame)
		if err := dec(f); err != nil {
			return nil, asTooLarge(err)
		}
		call := func(ctx context.Context, _ any) (any, error) { return h(srv, ctx, f.decode, nil) }
		if ic == nil {
			return call(ctx, f)
		}
		return ic(ctx, f, &grpc.UnaryServerInfo{Server: srv, FullMethod: method}, call)
	}
}

// framedStream reads each message of a local stream as a frame (through
// the interceptors' streams) and decodes it into the handler's message.
type framedStream struct{ grpc.ServerStream }

func (s framedStream) RecvMsg(m any) error {
	if _, ok := m.(*frame); ok {
		return s.ServerStream.RecvMsg(m)
	}
	f := new(frame)
	if err := s.ServerStream.RecvMsg(f); err != nil {
		return err
	}
	return f.decode(m)
}

// decode decodes the frame into v, a request message: INVALID_ARGUMENT
// MALFORMED_REQUEST when it does not decode (bad wire format, a string
// that is not UTF-8).
func (f *frame) decode(v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "cannot decode a request into %T", v)
	}
	if err := proto.Unmarshal(f.data, m); err != nil {
		return errs.New(codes.InvalidArgument, Domain, ReasonMalformedRequest, "malformed %s: %v", m.ProtoReflect().Descriptor().FullName(), err)
	}
	return nil
}
