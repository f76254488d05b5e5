package gateway

import (
	"context"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// Domain is the ErrorInfo domain of the gateway's own errors.
const Domain = "gateway.chemmy"

// Reasons of the gateway's errors: chemmy.gateway.v1.ErrorReason without
// the "ERROR_REASON_" prefix.
const (
	ReasonTokenMissing       = "TOKEN_MISSING"
	ReasonTokenUnknown       = "TOKEN_UNKNOWN"
	ReasonTokenInvalid       = "TOKEN_INVALID"
	ReasonTokenExpired       = "TOKEN_EXPIRED"
	ReasonRoleNotAllowed     = "ROLE_NOT_ALLOWED"
	ReasonMethodNotPublic    = "METHOD_NOT_PUBLIC"
	ReasonNotYourself        = "NOT_YOURSELF"
	ReasonBackendUnavailable = "BACKEND_UNAVAILABLE"
	ReasonGatewayDraining    = "GATEWAY_DRAINING"
)

// authz authenticates callers by bearer token and enforces the policy. It
// runs as the innermost interceptor, for local services and forwarded
// calls alike.
type authz struct {
	ids *identities
	// launch authenticates game-launch session tokens (launch.go); nil:
	// none accepted.
	launch *launchSessions
	rules  map[string]compiledRule
	// failures rate-limits failed authentications per client address
	// (the same buckets as callers'), so tokens cannot be guessed at
	// speed; proxies says whom to believe about that address
	// (clientaddr.go).
	failures *limits
	proxies  proxies
	files    *protoregistry.Files
}

type ruleKey struct{}

// ruleFrom returns the rule authorize applied to the call in ctx; nil for
// open methods.
func ruleFrom(ctx context.Context) *compiledRule {
	r, _ := ctx.Value(ruleKey{}).(*compiledRule)
	return r
}

// authorize authenticates the caller of method and checks its role. For
// open methods it returns a nil rule and the zero caller.
// authorize authenticates the caller of method and checks its role; table
// is the one table a game-launch session caller may act at ("" for any).
func (a *authz) authorize(ctx context.Context, method string) (c auth.Caller, r *compiledRule, table string, err error) {
	if open(method) {
		return auth.Caller{}, nil, "", nil
	}
	c, table, err = a.authenticate(ctx)
	if err != nil {
		return auth.Caller{}, nil, "", err
	}
	rule, ok := a.rules[method]
	if !ok {
		return auth.Caller{}, nil, "", a.unknownMethod(method)
	}
	if !c.Is(rule.Roles...) {
		return auth.Caller{}, nil, "", errs.New(codes.PermissionDenied, Domain, ReasonRoleNotAllowed,
			"role %q may not call %s", c.Role, method)
	}
	return c, &rule, table, nil
}

func (a *authz) authenticate(ctx context.Context) (auth.Caller, string, error) {
	c, table, err := a.authenticateToken(ctx)
	if err != nil && a.failures != nil {
		if lerr := a.failures.take(auth.Caller{Subject: a.proxies.clientHost(ctx), Role: "unauthenticated"}); lerr != nil {
			return auth.Caller{}, "", lerr
		}
	}
	return c, table, err
}

func (a *authz) authenticateToken(ctx context.Context) (auth.Caller, string, error) {
	token, err := bearer(ctx)
	if err != nil {
		return auth.Caller{}, "", err
	}
	if strings.HasPrefix(token, LaunchTokenPrefix) && a.launch != nil {
		return a.launch.authenticate(ctx, token)
	}
	c, err := a.ids.lookup(token)
	return c, "", err
}

// unknownMethod is the error for a method outside the policy: a method of
// a known contract (e.g. WalletService.SettleCoup) is not public; anything
// else does not exist.
func (a *authz) unknownMethod(method string) error {
	if svc, name, ok := splitMethod(method); ok {
		if d, err := a.files.FindDescriptorByName(protoreflect.FullName(svc + "." + name)); err == nil {
			if _, isMethod := d.(protoreflect.MethodDescriptor); isMethod {
				return errs.New(codes.PermissionDenied, Domain, ReasonMethodNotPublic,
					"%s is not part of the public API", method)
			}
		}
	}
	return status.Errorf(codes.Unimplemented, "unknown method %s", method)
}

// checkSelf checks a request under r: it must decode as the method's
// input (else INVALID_ARGUMENT MALFORMED_REQUEST, before any backend,
// whose own decoding would fail it as INTERNAL without a reason), and a
// player may act only for himself (r's self field). msg is a
// proto.Message or a raw frame.
//
// A game-launch session bound to a table (table) may act at that table
// only: a request whose table_id names another is refused
// PERMISSION_DENIED SESSION_OTHER_TABLE.
func (r *compiledRule) checkSelf(c auth.Caller, table string, msg any) error {
	if r == nil {
		return nil
	}
	var m protoreflect.Message
	switch v := msg.(type) {
	case *frame:
		dm := dynamicpb.NewMessage(r.input)
		if err := proto.Unmarshal(v.data, dm); err != nil {
			return errs.New(codes.InvalidArgument, Domain, ReasonMalformedRequest, "malformed %s: %v", r.input.FullName(), err)
		}
		m = dm
	case proto.Message:
		m = v.ProtoReflect()
	default:
		return status.Errorf(codes.Internal, "cannot check request of type %T", msg)
	}
	if table != "" {
		if fd := r.input.Fields().ByName("table_id"); fd != nil && fd.Kind() == protoreflect.StringKind && !fd.IsList() {
			if got := m.Get(fd).String(); got != "" && got != table {
				return errs.New(codes.PermissionDenied, Domain, ReasonSessionOtherTable,
					"this game-launch session is for table %q, not %q", table, got)
			}
		}
	}
	if r.self == nil || c.Role != auth.RolePlayer {
		return nil
	}
	if got := m.Get(r.self).String(); !r.names(c.Subject, got) {
		return errs.New(codes.PermissionDenied, Domain, ReasonNotYourself,
			"player %q may not act with %s %q", c.Subject, r.self.Name(), got)
	}
	return nil
}

// names reports whether the self field's value got names player subject:
// his id, or with a Prefix (wallet accounts) his account in the default
// currency, Prefix+subject, or in another, Prefix+subject+"@"+currency
// (wallet-svc checks the currency). A player id holding "@" names no
// account of his own: "player:bob@USD" is bob's account in USD, not
// player "bob@USD"'s.
func (r *compiledRule) names(subject, got string) bool {
	want := r.Prefix + subject
	if r.Prefix == "" {
		return got == want
	}
	if strings.Contains(subject, "@") {
		return false
	}
	cur, ok := strings.CutPrefix(got, want+"@")
	return got == want || (ok && cur != "" && !strings.Contains(cur, "@"))
}

func (a *authz) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	c, r, table, err := a.authorize(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return h(ctx, req)
	}
	if err := r.checkSelf(c, table, req); err != nil {
		return nil, err
	}
	return h(context.WithValue(auth.WithCaller(ctx, c), ruleKey{}, r), req)
}

func (a *authz) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	c, r, table, err := a.authorize(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	if r == nil {
		return h(srv, ss)
	}
	ctx := context.WithValue(auth.WithCaller(ss.Context(), c), ruleKey{}, r)
	if c.Session == "" || a.launch == nil {
		return h(srv, &checkedStream{ServerStream: ss, ctx: ctx, caller: c, table: table, rule: r})
	}
	// A stream of a game-launch session lasts only as long as the session:
	// revoked or expired, the stream ends SESSION_EXPIRED.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan error, 1)
	token, _ := bearer(ss.Context()) // authorize has checked it
	go a.launch.follow(ctx, token, cancel, ended)
	err = h(srv, &checkedStream{ServerStream: ss, ctx: ctx, caller: c, table: table, rule: r})
	select {
	case e := <-ended:
		return e
	default:
		return err
	}
}

// bearer is the bearer token of the incoming call: its one
// "authorization: Bearer <token>" value; UNAUTHENTICATED TOKEN_MISSING
// without one, TOKEN_UNKNOWN with several.
func bearer(ctx context.Context) (string, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return "", errs.New(codes.Unauthenticated, Domain, ReasonTokenMissing,
			`missing "authorization: Bearer <token>" metadata`)
	}
	if len(vals) > 1 {
		return "", errs.New(codes.Unauthenticated, Domain, ReasonTokenUnknown,
			"more than one authorization value")
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", errs.New(codes.Unauthenticated, Domain, ReasonTokenMissing,
			`authorization metadata is not "Bearer <token>"`)
	}
	return token, nil
}

// checkedStream carries the caller and checks the self field of the first
// request message.
type checkedStream struct {
	grpc.ServerStream
	ctx    context.Context
	caller auth.Caller
	table  string
	rule   *compiledRule
	once   sync.Once
}

func (s *checkedStream) Context() context.Context { return s.ctx }

func (s *checkedStream) RecvMsg(m any) error {
	first := false
	s.once.Do(func() { first = true })
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if first {
		return s.rule.checkSelf(s.caller, s.table, m)
	}
	return nil
}
