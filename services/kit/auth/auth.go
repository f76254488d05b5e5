// Package auth carries the caller's identity between chemmy processes and
// checks roles. The gateway authenticates callers and sets the identity in
// gRPC metadata; every service checks it again (defence in depth). Services
// must run on a network that only the gateway and other chemmy services
// reach: the metadata is trusted as the gateway set it.
package auth

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/services/kit/errs"
)

// Metadata keys of the caller identity.
const (
	MDSubject = "x-chemmy-subject"
	MDRole    = "x-chemmy-role"
)

// Role is what a caller may do. Values match chemmy.gateway.v1.Role
// without the prefix, in lower case.
type Role string

// The roles.
const (
	RolePlayer   Role = "player"
	RoleCroupier Role = "croupier"
	RoleOperator Role = "operator"
	RoleAuditor  Role = "auditor"
	RoleService  Role = "service"
)

// Valid reports whether r is one of the roles above.
func (r Role) Valid() bool {
	switch r {
	case RolePlayer, RoleCroupier, RoleOperator, RoleAuditor, RoleService:
		return true
	}
	return false
}

// Caller is an authenticated identity: a player id or staff id, and a role.
type Caller struct {
	Subject string
	Role    Role
}

// Is reports whether the caller has one of the roles.
func (c Caller) Is(roles ...Role) bool { return slices.Contains(roles, c.Role) }

type callerKey struct{}

// WithCaller returns ctx carrying c for the handlers of this process.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// FromContext returns the caller set by the server interceptor.
func FromContext(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// FromIncoming reads the caller from incoming gRPC metadata.
func FromIncoming(ctx context.Context) (Caller, bool) {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return Caller{}, false
	}
	sub, role := md.Get(MDSubject), md.Get(MDRole)
	if len(sub) != 1 || len(role) != 1 || sub[0] == "" || !Role(role[0]).Valid() {
		return Caller{}, false
	}
	return Caller{Subject: sub[0], Role: Role(role[0])}, true
}

// Outgoing returns ctx with c as the identity of outgoing calls, replacing
// any identity already there.
func Outgoing(ctx context.Context, c Caller) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set(MDSubject, c.Subject)
	md.Set(MDRole, string(c.Role))
	return metadata.NewOutgoingContext(ctx, md)
}

// Policy maps a full method name ("/pkg.Service/Method") to the roles that
// may call it. Methods absent from the policy are refused, except the
// always-open health and reflection services.
type Policy map[string][]Role

func open(method string) bool {
	return strings.HasPrefix(method, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(method, "/grpc.reflection.")
}

// check returns the caller for method or a status error with domain's
// reasons UNAUTHENTICATED / ROLE_NOT_ALLOWED.
func (p Policy) check(ctx context.Context, domain, method string) (context.Context, error) {
	if open(method) {
		return ctx, nil
	}
	c, ok := FromIncoming(ctx)
	if !ok {
		return nil, errs.New(codes.Unauthenticated, domain, "UNAUTHENTICATED",
			"no caller identity (%s, %s)", MDSubject, MDRole)
	}
	if !c.Is(p[method]...) {
		return nil, errs.New(codes.PermissionDenied, domain, "ROLE_NOT_ALLOWED",
			"role %q may not call %s", c.Role, method)
	}
	return WithCaller(ctx, c), nil
}

// UnaryServerInterceptor enforces p on unary calls; errors use domain.
func (p Policy) UnaryServerInterceptor(domain string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		ctx, err := p.check(ctx, domain, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

// StreamServerInterceptor enforces p on streaming calls; errors use domain.
func (p Policy) StreamServerInterceptor(domain string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		ctx, err := p.check(ss.Context(), domain, info.FullMethod)
		if err != nil {
			return err
		}
		return h(srv, &wrappedStream{ServerStream: ss, ctx: ctx})
	}
}

type wrappedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *wrappedStream) Context() context.Context { return w.ctx }

// ServiceIdentity returns a client interceptor that sends c as the caller
// of every outgoing call: how one chemmy service calls another.
func ServiceIdentity(c Caller) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(Outgoing(ctx, c), method, req, reply, cc, opts...)
	}
}

// RequireSelf returns nil when the caller may act for playerID: any
// non-player role, or a player whose subject is playerID. Otherwise a
// PERMISSION_DENIED status with reason NOT_YOURSELF in domain.
func RequireSelf(ctx context.Context, domain, playerID string) error {
	c, ok := FromContext(ctx)
	if !ok {
		return errs.New(codes.Unauthenticated, domain, "UNAUTHENTICATED", "no caller identity")
	}
	if c.Role == RolePlayer && c.Subject != playerID {
		return errs.New(codes.PermissionDenied, domain, "NOT_YOURSELF",
			"player %q may not act for player %q", c.Subject, playerID)
	}
	return nil
}
