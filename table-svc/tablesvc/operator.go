package tablesvc

import (
	"google.golang.org/grpc/codes"

	"github.com/chemmy/chemmy/services/kit/auth"
)

// Operators (tenants; docs/design-tenancy.md, step 2). Every table
// belongs to one operator, recorded at CreateTable and never changed; its
// rounds and events carry it. A caller sees only his operator's tables:
// every call that names a table loads it with loadFor, which answers a
// caller of another operator exactly as for a table that does not exist
// (service.go).

// DefaultOperator is the operator of a table created by a caller of no
// particular operator (a service on its own behalf, a deployment-wide
// auditor, a test without one), and of every table stored before tables
// had operators. It is the deployment's default operator: the gateway's
// -default-operator default and wallet-svc's -operator-id default.
const DefaultOperator = "operator"

// operatorOf is the operator a caller's table belongs to: his own, or
// DefaultOperator for a caller without one or of all of them.
func operatorOf(c auth.Caller) string {
	if c.Operator == "" || c.Operator == auth.AllOperators {
		return DefaultOperator
	}
	return c.Operator
}

// operator is the table's operator (DefaultOperator for a table stored
// before tables had one).
func (t *table) operator() string {
	if t.Operator == "" {
		return DefaultOperator
	}
	return t.Operator
}

// walletOperator is the operator_id of the table's calls to the wallet
// (docs/design-tenancy.md, step 3): the wallet acts on that operator's
// accounts, holds and request ids. Empty for DefaultOperator's table: the
// wallet's own default operator (wallet-svc -operator-id), whose accounts
// are the ones of before operators.
func (t *table) walletOperator() string { return walletOperator(t.operator()) }

// walletOperator is the wallet's operator_id of operator op.
func walletOperator(op string) string {
	if op == DefaultOperator {
		return ""
	}
	return op
}

// sees reports whether c may see what belongs to operator op: a
// deployment-wide auditor and the services see every operator's; anyone
// else his own operator's (a caller who names none is of the default
// operator's).
func sees(c auth.Caller, op string) bool {
	if c.Operator == auth.AllOperators || c.Role == auth.RoleService {
		return true
	}
	if op == "" {
		op = DefaultOperator
	}
	return operatorOf(c) == op
}

// tableNotFound is the error of a table that does not exist, and of one
// the caller may not see (the same, so that ids do not leak).
func tableNotFound(id string) error {
	return fail(codes.NotFound, reasonTableNotFound, "no table %q", id)
}

// requester is the part of a request's idempotency key (requestKey) that
// says whose it is besides his subject: his role, and his operator
// unless it is the default one (whose keys keep the shape they had
// before operators), so that two operators' members of staff or players
// of the same subject never share a request. The role is one of a few
// words without "@": no operator's key is another's.
func requester(c auth.Caller) string {
	if c.Operator == "" || c.Operator == DefaultOperator {
		return string(c.Role)
	}
	return string(c.Role) + "@" + c.Operator
}
