// Package auth checks who calls a chemmy service and what his role lets
// him do. How the caller is found is an Authenticator's business: package
// trust verifies certificates and the gateway's signed assertions (the
// production way); Metadata believes the x-chemmy-subject / x-chemmy-role
// metadata of whoever connects, for insecure development mode only.
package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/services/kit/errs"
)

// Metadata keys of the caller identity.
const (
	MDSubject = "x-chemmy-subject"
	MDRole    = "x-chemmy-role"
	// MDSession carries the caller's game-launch session id, when he has
	// one (insecure development mode; with mutual TLS it is the
	// assertion's chemmy_session claim).
	MDSession = "x-chemmy-session"
	// MDOperator carries the operator (tenant) the caller belongs to
	// (insecure development mode; with mutual TLS it is the assertion's
	// chemmy_operator claim).
	MDOperator = "x-chemmy-operator"
)

// AllOperators is the Operator of a deployment-wide auditor: he belongs
// to every operator.
const AllOperators = "*"

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

// Caller is an authenticated identity: a player id or staff id, and a
// role; Session is the game-launch session a player called in (the
// gateway authenticated him by its token), empty for any other caller.
type Caller struct {
	Subject string
	Role    Role
	Session string
	// Operator is the operator (tenant) the caller belongs to;
	// AllOperators ("*") only for deployment-wide auditors. Empty for a
	// service calling on its own behalf.
	Operator string
}

// Is reports whether the caller has one of the roles.
func (c Caller) Is(roles ...Role) bool { return slices.Contains(roles, c.Role) }

type callerKey struct{}

// WithCaller returns ctx carrying c for the handlers of this process
// (and tells the access log of the call, TrackCaller).
func WithCaller(ctx context.Context, c Caller) context.Context {
	if s, ok := ctx.Value(slotKey{}).(*callerSlot); ok {
		s.set(c)
	}
	return context.WithValue(ctx, callerKey{}, c)
}

// callerSlot is where WithCaller records the caller for an interceptor
// that ran before the caller was known (the access log).
type callerSlot struct {
	mu sync.Mutex
	c  Caller
	ok bool
}

func (s *callerSlot) set(c Caller) {
	s.mu.Lock()
	s.c, s.ok = c, true
	s.mu.Unlock()
}

type slotKey struct{}

// TrackCaller returns ctx in which WithCaller, called by an interceptor
// or handler further down with a context derived from it, records the
// caller for TrackedCaller: an interceptor that runs before the caller
// is authenticated (the access log) learns who it was once the call is
// done.
func TrackCaller(ctx context.Context) context.Context {
	return context.WithValue(ctx, slotKey{}, &callerSlot{})
}

// TrackedCaller is the caller recorded in ctx of TrackCaller, if any yet.
func TrackedCaller(ctx context.Context) (Caller, bool) {
	s, ok := ctx.Value(slotKey{}).(*callerSlot)
	if !ok {
		return Caller{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c, s.ok
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
	c := Caller{Subject: sub[0], Role: Role(role[0])}
	if ses := md.Get(MDSession); len(ses) == 1 && c.Role == RolePlayer {
		c.Session = ses[0]
	}
	// Only an auditor may belong to every operator.
	if op := md.Get(MDOperator); len(op) == 1 && (op[0] != AllOperators || c.Role == RoleAuditor) {
		c.Operator = op[0]
	}
	return c, true
}

// Outgoing returns ctx with c as the identity of outgoing calls, replacing
// any identity already there.
func Outgoing(ctx context.Context, c Caller) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set(MDSubject, c.Subject)
	md.Set(MDRole, string(c.Role))
	md.Delete(MDSession)
	if c.Session != "" {
		md.Set(MDSession, c.Session)
	}
	md.Delete(MDOperator)
	if c.Operator != "" {
		md.Set(MDOperator, c.Operator)
	}
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

// Reasons of the refusals an Authenticator returns (ErrorInfo.reason, in
// the domain of the refusing service; each service's proto lists them).
const (
	// ReasonUnauthenticated: no caller identity at all.
	ReasonUnauthenticated = "UNAUTHENTICATED"
	// ReasonAssertionInvalid: the caller assertion is malformed, not signed
	// by a gateway of the suite, or for another service.
	ReasonAssertionInvalid = "ASSERTION_INVALID"
	// ReasonAssertionExpired: the caller assertion's time is over.
	ReasonAssertionExpired = "ASSERTION_EXPIRED"
	// ReasonPeerNotAllowed: the calling service may not make this call
	// on its own behalf (or may not assert callers).
	ReasonPeerNotAllowed = "PEER_NOT_ALLOWED"
)

// Refusal is an authentication failure with its reason.
type Refusal struct {
	Reason string
	Msg    string
}

func (r *Refusal) Error() string { return r.Reason + ": " + r.Msg }

// Refuse returns a *Refusal with reason and a formatted message.
func Refuse(reason, format string, args ...any) error {
	return &Refusal{Reason: reason, Msg: fmt.Sprintf(format, args...)}
}

// Authenticator finds the caller of an incoming call, or refuses it with
// a *Refusal.
type Authenticator interface {
	Authenticate(ctx context.Context) (Caller, error)
}

// Metadata is the insecure Authenticator: it believes the identity
// metadata (MDSubject, MDRole, MDSession, MDOperator) as sent.
// Development mode only.
type Metadata struct{}

// Authenticate implements Authenticator.
func (Metadata) Authenticate(ctx context.Context) (Caller, error) {
	c, ok := FromIncoming(ctx)
	if !ok {
		return Caller{}, Refuse(ReasonUnauthenticated, "no caller identity (%s, %s)", MDSubject, MDRole)
	}
	return c, nil
}

// Checker enforces a Policy with an Authenticator; errors use Domain.
type Checker struct {
	Policy Policy
	Auth   Authenticator
	Domain string
}

// check returns ctx with the caller for method, or a status error:
// UNAUTHENTICATED (reasons UNAUTHENTICATED, ASSERTION_INVALID,
// ASSERTION_EXPIRED), PERMISSION_DENIED (PEER_NOT_ALLOWED,
// ROLE_NOT_ALLOWED).
func (k Checker) check(ctx context.Context, method string) (context.Context, error) {
	if open(method) {
		return ctx, nil
	}
	c, err := k.Auth.Authenticate(ctx)
	if err != nil {
		var r *Refusal
		if !errors.As(err, &r) {
			return nil, err
		}
		code := codes.Unauthenticated
		if r.Reason == ReasonPeerNotAllowed {
			code = codes.PermissionDenied
		}
		return nil, errs.New(code, k.Domain, r.Reason, "%s", r.Msg)
	}
	if !c.Is(k.Policy[method]...) {
		return nil, errs.New(codes.PermissionDenied, k.Domain, "ROLE_NOT_ALLOWED",
			"role %q may not call %s", c.Role, method)
	}
	return WithCaller(ctx, c), nil
}

// UnaryServerInterceptor enforces the policy on unary calls.
func (k Checker) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		ctx, err := k.check(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

// StreamServerInterceptor enforces the policy on streaming calls.
func (k Checker) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		ctx, err := k.check(ss.Context(), info.FullMethod)
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
