package shoesvc

import (
	bolt "go.etcd.io/bbolt"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// Operators (tenants; docs/design-tenancy.md). Every shoe belongs to one
// operator (Shoe.operator_id), set when it is created and never changed:
// the creator's, or for a service's CreateShoe the request's operator_id
// (table-svc names its table's). A caller of another operator is answered
// as for a shoe that does not exist (NOT_FOUND SHOE_NOT_FOUND, notFound),
// by every call that names a shoe: they load it with loadShoeFor.

// DefaultOperator is the operator of a shoe created by a caller of no
// particular operator (a service on its own behalf, a deployment-wide
// auditor, a test without one), and of every shoe stored before shoes had
// operators: the deployment's default operator, as table-svc's
// DefaultOperator and the gateway's -default-operator default.
const DefaultOperator = "operator"

// operatorOf is the operator of a shoe caller c creates: the request's
// requested (from the service role only; empty: the default operator),
// else his own.
func operatorOf(c auth.Caller, requested string) string {
	op := c.Operator
	if c.Role == auth.RoleService {
		op = requested
	}
	if op == "" || op == auth.AllOperators {
		return DefaultOperator
	}
	return op
}

// shoeOperator is the shoe's operator (DefaultOperator for one stored
// before shoes had one).
func shoeOperator(shoe *shoev1.Shoe) string {
	if shoe.GetOperatorId() == "" {
		return DefaultOperator
	}
	return shoe.GetOperatorId()
}

// sees reports whether c may see shoe: the services and a
// deployment-wide auditor see every operator's; anyone else his own
// operator's (a caller of none is of the default operator).
func sees(c auth.Caller, shoe *shoev1.Shoe) bool {
	if c.Role == auth.RoleService || c.Operator == auth.AllOperators {
		return true
	}
	return operatorOf(c, "") == shoeOperator(shoe)
}

// loadShoeFor is loadShoe for caller c: a shoe of another operator is
// one that does not exist.
func loadShoeFor(tx *bolt.Tx, c auth.Caller, id string, into *shoev1.Shoe) error {
	if err := loadShoe(tx, id, into); err != nil {
		return err
	}
	if !sees(c, into) {
		return notFound(id)
	}
	return nil
}
