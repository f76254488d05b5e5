package walletsvc

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// Operators (tenants; docs/design-tenancy.md, step 3). Every account
// belongs to one operator. The API keeps the ids it always had
// ("player:bob", "house:commission"); inside, the ledger keys another
// operator's account as "<operator>/<id>" ("acme/player:bob"), and the
// wallet's default operator's (Config.OperatorID, "operator") as before,
// so that a ledger written before operators reads unchanged as the
// default operator's. Each operator has his own system accounts
// ("acme/house:commission", "acme/external:funding"), so each
// operator's books balance apart (AuditLedger).
//
// Every call passes through scoped (registered around every method): it
// decides the call's operator (scopeFor), puts it in the context, turns
// the request's account ids into the operator's keys and the response's
// (and an error's message) back. A hold, a coup settlement or a request
// id of another operator is then one that does not exist: NOT_FOUND,
// never PERMISSION_DENIED, so that ids do not leak.

// scope is the operator a call acts on.
type scope struct {
	// op is the operator whose accounts the call names.
	op string
	// all: a deployment-wide auditor who named no operator reads every
	// operator's (AuditLedger); the accounts he names are op's.
	all bool
	// def is the wallet's default operator, whose keys carry no prefix.
	def string
}

type scopeKey struct{}

// scopeFor decides whose accounts a call acts on: the request's
// operator_id for the service role (table-svc names its table's
// operator) and for a deployment-wide auditor; the caller's own operator
// for anyone else (his request's operator_id is ignored: a player never
// chooses his operator); the default operator for a caller of none.
// operator_id, when taken, must be an operator id (1..64 of
// [a-z0-9._-]; INVALID_ARGUMENT INVALID_ARGUMENT otherwise).
func (s *Service) scopeFor(ctx context.Context, req proto.Message) (scope, error) {
	sc := scope{op: s.opID, def: s.opID}
	c, _ := auth.FromContext(ctx)
	named := ""
	if req != nil {
		if f := req.ProtoReflect().Descriptor().Fields().ByName("operator_id"); f != nil && f.Kind() == protoreflect.StringKind {
			named = req.ProtoReflect().Get(f).String()
		}
	}
	switch {
	case c.Role == auth.RoleService || c.Operator == auth.AllOperators:
		if named != "" {
			if !validOperatorID(named) {
				return scope{}, failf(codes.InvalidArgument, reasonInvalidArgument,
					"operator_id %q is not 1..64 characters [a-z0-9._-]", named)
			}
			sc.op = named
		} else {
			sc.all = c.Operator == auth.AllOperators
		}
	case c.Operator != "":
		sc.op = c.Operator
	}
	return sc, nil
}

// validOperatorID: 1..64 characters of [a-z0-9._-] (as the gateway's
// token file requires).
func validOperatorID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// scopeOf is the call's scope (scoped put it in ctx); a call that did not
// come through scoped (this package's tests call methods directly) gets
// the one its caller would.
func (s *Service) scopeOf(ctx context.Context) scope {
	if sc, ok := ctx.Value(scopeKey{}).(scope); ok {
		return sc
	}
	sc, _ := s.scopeFor(ctx, nil)
	return sc
}

// inner is the ledger's key of account id of the scope's operator.
func (sc scope) inner(id string) string {
	if sc.op == sc.def || sc.op == "" {
		return id
	}
	return sc.op + "/" + id
}

// key is the idempotency key k ("req/<id>", "coup/<id>", ...) of the
// scope's operator: the default operator's are unchanged, another's get
// the operator and a space after the kind ("req/acme <id>"; ids have no
// spaces), so that two operators' identical request or coup ids never
// meet.
func (sc scope) key(k string) string {
	if sc.op == sc.def || sc.op == "" {
		return k
	}
	kind, id, _ := strings.Cut(k, "/")
	return kind + "/" + sc.op + " " + id
}

// owns reports whether the account keyed id (a ledger key) is the
// scope's operator's; every one for a reader of all operators.
func (sc scope) owns(id string) bool {
	return sc.sees(operatorOfKey(id, sc.def))
}

// sees reports whether what belongs to operator op (empty: the default
// operator, as in a record written before operators) is the scope's.
func (sc scope) sees(op string) bool {
	return sc.all || orDefault(op, sc.def) == sc.op
}

// orDefault is op, or def when op is empty.
func orDefault(op, def string) string {
	if op == "" {
		return def
	}
	return op
}

// rid is request id id of the scope's operator, for a key of its own
// (the default operator's unchanged, another's "<operator> <id>").
func (sc scope) rid(id string) string {
	if sc.op == sc.def || sc.op == "" {
		return id
	}
	return sc.op + " " + id
}

// splitOperator splits a ledger key "<operator>/<id>" into the operator
// and the API's id; a key without one is the default operator's (op "").
func splitOperator(key string) (op, id string) {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// bare is the API's id of ledger key key.
func bare(key string) string {
	_, id := splitOperator(key)
	return id
}

// operatorOfKey is the operator of ledger key key (def for an unprefixed
// one).
func operatorOfKey(key, def string) string {
	if op, _ := splitOperator(key); op != "" {
		return op
	}
	return def
}

// isAccountField reports whether f holds an account id: account_id and
// every "*_account_id" (to_account_id, debit_account_id, ...).
func isAccountField(f protoreflect.FieldDescriptor) bool {
	n := string(f.Name())
	return f.Kind() == protoreflect.StringKind && (n == "account_id" || strings.HasSuffix(n, "_account_id"))
}

// mapAccountIDs replaces every account id of m (nested messages and
// lists included) by fn's answer, or stops at fn's first error.
func mapAccountIDs(m protoreflect.Message, fn func(string) (string, error)) error {
	var err error
	m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case f.IsMap():
		case f.IsList() && f.Kind() == protoreflect.MessageKind:
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = mapAccountIDs(l.Get(i).Message(), fn)
			}
		case f.Kind() == protoreflect.MessageKind:
			err = mapAccountIDs(v.Message(), fn)
		case !f.IsList() && isAccountField(f):
			var id string
			if id, err = fn(v.String()); err == nil {
				m.Set(f, protoreflect.ValueOfString(id))
			}
		}
		return err == nil
	})
	return err
}

// scoped is the server interceptor of every wallet method (see the top
// of this file). An account id with "/" in a request is INVALID_ARGUMENT
// INVALID_ACCOUNT (no caller names a ledger key); one in a currency the
// operator's entry in the operators file does not list is INVALID_ARGUMENT
// CURRENCY_UNKNOWN (opwallets.go). In seamless mode a call for an
// operator without a seamless wallet (neither his entry in the operators
// file nor, for the default operator, -operator-url) is
// FAILED_PRECONDITION SEAMLESS_WALLET.
func (s *Service) scoped(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	m, _ := req.(proto.Message)
	sc, err := s.scopeFor(ctx, m)
	if err != nil {
		return nil, err
	}
	if s.op != nil && sc.op != "" && s.walletOf(sc.op) == nil {
		return nil, failf(codes.FailedPrecondition, reasonSeamless,
			"seamless wallet mode: operator %q has no seamless wallet (its entry in the operators file names none)", sc.op)
	}
	if m != nil {
		err := mapAccountIDs(m.ProtoReflect(), func(id string) (string, error) {
			if strings.IndexByte(id, '/') >= 0 {
				return "", failf(codes.InvalidArgument, reasonInvalidAccount, "account id %q has a \"/\"", id)
			}
			if id == "" {
				return id, nil
			}
			if err := s.checkOperatorCurrency(orDefault(sc.op, sc.def), id); err != nil {
				return "", err
			}
			return sc.inner(id), nil
		})
		if err != nil {
			return nil, err
		}
	}
	resp, err := handler(context.WithValue(ctx, scopeKey{}, sc), req)
	if err != nil {
		return nil, outerError(err)
	}
	if r, ok := resp.(proto.Message); ok && r != nil {
		_ = mapAccountIDs(r.ProtoReflect(), func(id string) (string, error) { return bare(id), nil })
	}
	return resp, nil
}

// outerError is err with every ledger key in its message turned back
// into the API's id ("acme/player:bob" -> "player:bob").
func outerError(err error) error {
	st, ok := status.FromError(err)
	if !ok || !strings.Contains(st.Message(), "/") {
		return err
	}
	p := st.Proto()
	p.Message = outerText(p.Message)
	return status.ErrorProto(p)
}

// outerText strips the operator from every ledger key in text: an
// operator id followed by "/" and an account id's kind.
func outerText(text string) string {
	for _, kind := range []string{"player:", "house:", "external:"} {
		for i := 0; ; {
			j := strings.Index(text[i:], "/"+kind)
			if j < 0 {
				break
			}
			j += i
			k := j
			for k > 0 && isOperatorByte(text[k-1]) {
				k--
			}
			if k < j {
				text = text[:k] + text[j+1:]
				i = k + len(kind)
			} else {
				i = j + 1
			}
		}
	}
	return text
}

func isOperatorByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// registerScoped registers the service with scoped around every method.
func registerScoped(g *grpc.Server, s *Service) {
	desc := walletv1.WalletService_ServiceDesc
	methods := make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		h := m.Handler
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			return h(srv, ctx, dec, func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
				inner := func(ctx context.Context, req any) (any, error) { return s.scoped(ctx, req, info, handler) }
				if icpt != nil {
					return icpt(ctx, req, info, inner)
				}
				return inner(ctx, req)
			})
		}
		methods[i] = m
	}
	desc.Methods = methods
	g.RegisterService(&desc, s)
}
